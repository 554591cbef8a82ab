// RUN: lmopt-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the quantized and mixed-precision forms
// of lmopt.linear (docs/dialect.md, "Quantized and mixed-precision linears").

func.func @dynamic_float_weight(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input_quantization dynamic_per_token needs an 8-bit weight quantized per tensor or per output channel, got 'f32'}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @dynamic_int4_weight(%x: tensor<2x8xf32>, %w: tensor<4x8x!quant.uniform<u4:f32:{0:1, 1:4}, {{0.1:8, 0.1:8}, {0.1:8, 0.1:8}, {0.1:8, 0.1:8}, {0.1:8, 0.1:8}}>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input_quantization dynamic_per_tensor needs an 8-bit weight quantized per tensor or per output channel}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>, transpose_weight = true} : (tensor<2x8xf32>, tensor<4x8x!quant.uniform<u4:f32:{0:1, 1:4}, {{0.1:8, 0.1:8}, {0.1:8, 0.1:8}, {0.1:8, 0.1:8}, {0.1:8, 0.1:8}}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Per-axis on the contraction axis: with transpose_weight the output
// channels are axis 0.
func.func @per_axis_wrong_axis(%x: tensor<2x8xf32>, %w: tensor<4x8x!quant.uniform<i8:f32:1, {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{weight is quantized along axis 1 but its output channels are axis 0 (transpose_weight)}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_token>, transpose_weight = true} : (tensor<2x8xf32>, tensor<4x8x!quant.uniform<i8:f32:1, {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @per_axis_channel_count(%x: tensor<2x8xf32>, %w: tensor<8x4x!quant.uniform<i8:f32:1, {0.1, 0.1, 0.1}>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{weight has 3 per-channel scales for 4 output channels}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<2x8xf32>, tensor<8x4x!quant.uniform<i8:f32:1, {0.1, 0.1, 0.1}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @per_token_asymmetric_weight(%x: tensor<2x8xf32>, %w: tensor<8x4x!quant.uniform<i8:f32:1, {0.1:3, 0.1, 0.1, 0.1}>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input_quantization dynamic_per_token needs a symmetric i8 weight (signed, zero points 0)}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<2x8xf32>, tensor<8x4x!quant.uniform<i8:f32:1, {0.1:3, 0.1, 0.1, 0.1}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @per_token_unsigned_weight(%x: tensor<2x8xf32>, %w: tensor<8x4x!quant.uniform<u8:f32, 0.1>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input_quantization dynamic_per_token needs a symmetric i8 weight (signed, zero points 0)}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<2x8xf32>, tensor<8x4x!quant.uniform<u8:f32, 0.1>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @weight_expresses_f16(%x: tensor<2x8xf32>, %w: tensor<8x4x!quant.uniform<i8:f16, 0.1>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{quantized weight must express f32, got 'f16'}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>} : (tensor<2x8xf32>, tensor<8x4x!quant.uniform<i8:f16, 0.1>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @int8_weight_without_input_quantization(%x: tensor<2x8xf32>, %w: tensor<8x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{an 8-bit weight with an f32 input needs input_quantization dynamic_per_token or dynamic_per_tensor, or a quantized input}}
  %0 = lmopt.linear %x, %w : (tensor<2x8xf32>, tensor<8x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @static_per_axis_input(%x: tensor<2x8x!quant.uniform<u8:f32:1, {0.1:128, 0.1:128, 0.1:128, 0.1:128, 0.1:128, 0.1:128, 0.1:128, 0.1:128}>>, %w: tensor<8x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{quantized input must be 8-bit per tensor expressing f32}}
  %0 = lmopt.linear %x, %w : (tensor<2x8x!quant.uniform<u8:f32:1, {0.1:128, 0.1:128, 0.1:128, 0.1:128, 0.1:128, 0.1:128, 0.1:128, 0.1:128}>>, tensor<8x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @static_with_dynamic(%x: tensor<2x8x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<8x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{an input quantized statically cannot have input_quantization dynamic_per_tensor}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>} : (tensor<2x8x!quant.uniform<u8:f32, 0.05:128>>, tensor<8x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @static_float_weight(%x: tensor<2x8x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{a static int8 linear needs an 8-bit weight quantized per tensor or per output channel, got 'f32'}}
  %0 = lmopt.linear %x, %w : (tensor<2x8x!quant.uniform<u8:f32, 0.05:128>>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @static_asymmetric_weight(%x: tensor<2x8x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<8x4x!quant.uniform<i8:f32, 0.1:5>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{a static int8 linear needs a symmetric i8 weight (signed, zero points 0)}}
  %0 = lmopt.linear %x, %w : (tensor<2x8x!quant.uniform<u8:f32, 0.05:128>>, tensor<8x4x!quant.uniform<i8:f32, 0.1:5>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @bf16_input_f32_weight(%x: tensor<2x8xbf16>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{a 'bf16' input needs a 'bf16' weight, got 'f32'}}
  %0 = lmopt.linear %x, %w : (tensor<2x8xbf16>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @f16_input_dynamic(%x: tensor<2x8xf16>, %w: tensor<8x4xf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{a 'f16' input cannot have input_quantization dynamic_per_token}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<2x8xf16>, tensor<8x4xf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @f32_input_bf16_weight(%x: tensor<2x8xf32>, %w: tensor<8x4xbf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{an f32 input needs an f32 or quantized weight, got 'bf16'}}
  %0 = lmopt.linear %x, %w : (tensor<2x8xf32>, tensor<8x4xbf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @integer_input(%x: tensor<2x8xi8>, %w: tensor<8x4xi8>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input element type must be a float or quantized type, got 'i8'}}
  %0 = lmopt.linear %x, %w : (tensor<2x8xi8>, tensor<8x4xi8>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @bf16_result(%x: tensor<2x8xf32>, %w: tensor<8x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{result element type must be f32, got 'bf16'}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>} : (tensor<2x8xf32>, tensor<8x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @bf16_bias(%x: tensor<2x8xbf16>, %w: tensor<8x4xbf16>, %b: tensor<4xbf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{bias and residual must be 'f32', got 'bf16'}}
  %0 = lmopt.linear %x, %w bias %b : (tensor<2x8xbf16>, tensor<8x4xbf16>, tensor<4xbf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @int4_block_not_dividing_k(%x: tensor<2x12xf32>, %w: tensor<4x12x!quant.uniform<u4:f32:{0:1, 1:8}, {{0.1:8, 0.1:8}, {0.1:8, 0.1:8}, {0.1:8, 0.1:8}, {0.1:8, 0.1:8}}>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{block size 8 does not divide the contraction dim 12}}
  %0 = lmopt.linear %x, %w {transpose_weight = true} : (tensor<2x12xf32>, tensor<4x12x!quant.uniform<u4:f32:{0:1, 1:8}, {{0.1:8, 0.1:8}, {0.1:8, 0.1:8}, {0.1:8, 0.1:8}, {0.1:8, 0.1:8}}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Blocks along the output channels (axis 0 with transpose_weight), not K.
func.func @int4_blocks_along_n(%x: tensor<2x8xf32>, %w: tensor<4x8x!quant.uniform<i4:f32:{0:2}, {{0.1}, {0.1}}>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{block-wise weight has no block size along the contraction axis 1}}
  %0 = lmopt.linear %x, %w {transpose_weight = true} : (tensor<2x8xf32>, tensor<4x8x!quant.uniform<i4:f32:{0:2}, {{0.1}, {0.1}}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Blocks of 2 output channels share a scale: not one block row per channel.
func.func @int4_shared_rows(%x: tensor<2x8xf32>, %w: tensor<4x8x!quant.uniform<i4:f32:{0:2, 1:4}, {{0.1, 0.1}, {0.1, 0.1}}>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{block-wise weight must have one block row per output channel and blocks only along K, got scales of shape 2x2}}
  %0 = lmopt.linear %x, %w {transpose_weight = true} : (tensor<2x8xf32>, tensor<4x8x!quant.uniform<i4:f32:{0:2, 1:4}, {{0.1, 0.1}, {0.1, 0.1}}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @int8_block_wise(%x: tensor<2x8xf32>, %w: tensor<4x8x!quant.uniform<i8:f32:{0:1, 1:4}, {{0.1, 0.1}, {0.1, 0.1}, {0.1, 0.1}, {0.1, 0.1}}>>) -> tensor<2x4xf32> {
  // expected-error @+1 {{block-wise weight must have 4-bit storage}}
  %0 = lmopt.linear %x, %w {transpose_weight = true} : (tensor<2x8xf32>, tensor<4x8x!quant.uniform<i8:f32:{0:1, 1:4}, {{0.1, 0.1}, {0.1, 0.1}, {0.1, 0.1}, {0.1, 0.1}}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
