// RUN: lmopt-opt %s | lmopt-opt | FileCheck %s
// RUN: lmopt-opt %s --mlir-print-op-generic | lmopt-opt | FileCheck %s

// Round trip of the custom assembly formats: every format is printed and
// parsed back. Verifiers are covered by invalid.mlir.

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<?x8xf32>, %s: tensor<2xi64>, %i: tensor<i64>) -> (tensor<2xi64>, tensor<i64>, tensor<?x?xf32>, tensor<?xi64>, tensor<4xf32>) {
  // CHECK: lmopt.shape %{{.*}} {start = 1 : i64} : tensor<?x8xf32> -> tensor<1xi64>
  %0 = lmopt.shape %x {start = 1 : i64} : tensor<?x8xf32> -> tensor<1xi64>
  // CHECK: lmopt.size %{{.*}} : tensor<?x8xf32> -> tensor<i64>
  %1 = lmopt.size %x : tensor<?x8xf32> -> tensor<i64>
  // CHECK: lmopt.constant_of_shape %{{.*}}, 0.000000e+00 : f32 : tensor<2xi64> -> tensor<?x?xf32>
  %2 = lmopt.constant_of_shape %s, 0.0 : f32 : tensor<2xi64> -> tensor<?x?xf32>
  // CHECK: lmopt.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %3 = lmopt.range %i, %i, %i : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  // CHECK: lmopt.constant dense<1.000000e+00> : tensor<4xf32>
  %4 = lmopt.constant dense<1.0> : tensor<4xf32>
  return %s, %1, %2, %3, %4 : tensor<2xi64>, tensor<i64>, tensor<?x?xf32>, tensor<?xi64>, tensor<4xf32>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x3xi1>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi64>) {
  // CHECK: lmopt.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = lmopt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: lmopt.erf %{{.*}} : tensor<2x3xf32>
  %1 = lmopt.erf %0 : tensor<2x3xf32>
  // CHECK: lmopt.less %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = lmopt.less %1, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: lmopt.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = lmopt.where %c, %1, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: lmopt.is_nan %{{.*}} : tensor<2x3xf32> -> tensor<2x3xi1>
  %nan = lmopt.is_nan %3 : tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: lmopt.cast %{{.*}} : tensor<2x3xf32> -> tensor<2x3xi64>
  %4 = lmopt.cast %3 : tensor<2x3xf32> -> tensor<2x3xi64>
  return %3, %2, %4 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi64>
}

// CHECK-LABEL: func @products
func.func @products(%a: tensor<?x4x8xf32>, %w: tensor<8x16xf32>, %m: tensor<4x8xf32>, %c: tensor<16xf32>) -> (tensor<?x4x16xf32>, tensor<4x16xf32>) {
  // CHECK: lmopt.matmul %{{.*}}, %{{.*}} : (tensor<?x4x8xf32>, tensor<8x16xf32>) -> tensor<?x4x16xf32>
  %0 = lmopt.matmul %a, %w : (tensor<?x4x8xf32>, tensor<8x16xf32>) -> tensor<?x4x16xf32>
  // CHECK: lmopt.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = lmopt.gemm %m, %w, %c {alpha = 0.5 : f32} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0, %1 : tensor<?x4x16xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func @normalizations
func.func @normalizations(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> (tensor<2x1xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: lmopt.reduce_mean %{{.*}} {axes = array<i64: -1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  %0 = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  // CHECK: lmopt.softmax %{{.*}} {axis = 1 : i64} : tensor<2x8xf32>
  %1 = lmopt.softmax %x {axis = 1 : i64} : tensor<2x8xf32>
  // CHECK: lmopt.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999996E-13 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %2 = lmopt.layer_norm %1, %s, %s {epsilon = 1.0e-12 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0, %1, %2 : tensor<2x1xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func @movement
func.func @movement(%x: tensor<2x3xf32>, %i: tensor<4xi64>, %s: tensor<2xi64>, %st: tensor<1xi64>) -> (tensor<4x3xf32>, tensor<3x2xf32>, tensor<?x3xf32>, tensor<4x3xf32>, tensor<1x3xf32>, tensor<2x1x3xf32>, tensor<?x?xf32>) {
  // CHECK: lmopt.gather %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %0 = lmopt.gather %x, %i : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  // CHECK: lmopt.reshape %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  %1 = lmopt.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  // CHECK: lmopt.slice %{{.*}}, %{{.*}}, %{{.*}} axes %{{.*}} steps %{{.*}} : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
  %2 = lmopt.slice %x, %st, %st axes %st steps %st : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
  // CHECK: lmopt.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %3 = lmopt.concat %x, %x {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK: lmopt.split %{{.*}} {axis = 0 : i64, split_sizes = array<i64: 1, 1>} : (tensor<2x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>)
  %4:2 = lmopt.split %x {axis = 0 : i64, split_sizes = array<i64: 1, 1>} : (tensor<2x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>)
  // CHECK: lmopt.unsqueeze %{{.*}} {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1x3xf32>
  %5 = lmopt.unsqueeze %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1x3xf32>
  // CHECK: lmopt.expand %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %6 = lmopt.expand %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0, %1, %2, %3, %4#0, %5, %6 : tensor<4x3xf32>, tensor<3x2xf32>, tensor<?x3xf32>, tensor<4x3xf32>, tensor<1x3xf32>, tensor<2x1x3xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func @fused
func.func @fused(%x: tensor<?x16x64xf32>, %w: tensor<256x64xf32>, %b: tensor<256xf32>, %r: tensor<?x16x256xf32>, %m: tensor<?x1x1x16xi1>, %s: tensor<64xf32>) -> (tensor<?x16x256xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>) {
  // CHECK: lmopt.linear %{{.*}}, %{{.*}} bias %{{.*}} residual %{{.*}} {activation = #lmopt.activation<gelu_tanh>, transpose_weight = true}
  %0 = lmopt.linear %x, %w bias %b residual %r {activation = #lmopt.activation<gelu_tanh>, transpose_weight = true} : (tensor<?x16x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<?x16x256xf32>) -> tensor<?x16x256xf32>
  // CHECK: lmopt.gelu %{{.*}} {approximate = #lmopt.gelu_approximation<tanh>} : tensor<?x16x64xf32>
  %1 = lmopt.gelu %x {approximate = #lmopt.gelu_approximation<tanh>} : tensor<?x16x64xf32>
  // CHECK: lmopt.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {causal = true, num_heads = 4 : i64}
  %2 = lmopt.attention %x, %x, %x mask %m {num_heads = 4 : i64, causal = true} : (tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x1x1x16xi1>) -> tensor<?x16x64xf32>
  // CHECK: lmopt.skip_layer_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x16x64xf32>, tensor<?x16x64xf32>)
  %3:2 = lmopt.skip_layer_norm %2, %x, %s, %s : (tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x16x64xf32>, tensor<?x16x64xf32>)
  // CHECK: lmopt.rms_norm %{{.*}}, %{{.*}} : (tensor<?x16x64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  %4 = lmopt.rms_norm %3#0, %s : (tensor<?x16x64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  return %0, %1, %3#1, %4 : tensor<?x16x256xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>
}

// CHECK-LABEL: func @attention_gqa
func.func @attention_gqa(%q: tensor<?x16x64xf32>, %kv: tensor<?x16x32xf32>, %kvs: tensor<?x2x20x16xf32>) -> (tensor<?x16x64xf32>, tensor<?x16x64xf32>) {
  // CHECK: lmopt.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, num_heads = 4 : i64, num_kv_heads = 2 : i64} : (tensor<?x16x64xf32>, tensor<?x16x32xf32>, tensor<?x16x32xf32>) -> tensor<?x16x64xf32>
  %0 = lmopt.attention %q, %kv, %kv {num_heads = 4 : i64, num_kv_heads = 2 : i64, causal = true} : (tensor<?x16x64xf32>, tensor<?x16x32xf32>, tensor<?x16x32xf32>) -> tensor<?x16x64xf32>
  // CHECK: lmopt.attention {{.*}} {kv_heads_split = true, num_heads = 4 : i64, num_kv_heads = 2 : i64} : (tensor<?x16x64xf32>, tensor<?x2x20x16xf32>, tensor<?x2x20x16xf32>) -> tensor<?x16x64xf32>
  %1 = lmopt.attention %q, %kvs, %kvs {num_heads = 4 : i64, num_kv_heads = 2 : i64, kv_heads_split = true} : (tensor<?x16x64xf32>, tensor<?x2x20x16xf32>, tensor<?x2x20x16xf32>) -> tensor<?x16x64xf32>
  return %0, %1 : tensor<?x16x64xf32>, tensor<?x16x64xf32>
}

// CHECK-LABEL: func @attention_kv_heads_split
func.func @attention_kv_heads_split(%q: tensor<?x16x64xf32>, %kv: tensor<?x4x20x16xf32>) -> tensor<?x16x64xf32> {
  // CHECK: lmopt.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, kv_heads_split = true, num_heads = 4 : i64} : (tensor<?x16x64xf32>, tensor<?x4x20x16xf32>, tensor<?x4x20x16xf32>) -> tensor<?x16x64xf32>
  %0 = lmopt.attention %q, %kv, %kv {num_heads = 4 : i64, causal = true, kv_heads_split = true} : (tensor<?x16x64xf32>, tensor<?x4x20x16xf32>, tensor<?x4x20x16xf32>) -> tensor<?x16x64xf32>
  return %0 : tensor<?x16x64xf32>
}

// CHECK-LABEL: func @training_and_quant
func.func @training_and_quant(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>) {
  // CHECK: lmopt.dropout %{{.*}} {ratio = 1.000000e-01 : f32, seed = 7 : i64, training = true} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  %0:2 = lmopt.dropout %x {ratio = 0.1 : f32, training = true, seed = 7 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  // CHECK: lmopt.quantize %{{.*}} : tensor<4x8xf32> -> tensor<4x8x!quant.uniform<i8:f32:1, {1.000000e-01,2.000000e-01,{{.*}}}>>
  %1 = lmopt.quantize %0#0 : tensor<4x8xf32> -> tensor<4x8x!quant.uniform<i8:f32:1, {0.1,0.2,0.1,0.2,0.1,0.2,0.1,0.2}>>
  // CHECK: lmopt.dequantize %{{.*}} : tensor<4x8x!quant.uniform<i8:f32:1, {{.*}}>> -> tensor<4x8xf32>
  %2 = lmopt.dequantize %1 : tensor<4x8x!quant.uniform<i8:f32:1, {0.1,0.2,0.1,0.2,0.1,0.2,0.1,0.2}>> -> tensor<4x8xf32>
  return %0#0, %0#1, %2 : tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>
}

// CHECK-LABEL: func @integer_quantization
func.func @integer_quantization(%x: tensor<?x8xf32>, %b: tensor<8x4xi8>, %bzp: tensor<4xi8>) -> tensor<?x4xi32> {
  // CHECK: lmopt.dynamic_quantize_linear %{{.*}} : tensor<?x8xf32> -> (tensor<?x8xui8>, tensor<f32>, tensor<ui8>)
  %0:3 = lmopt.dynamic_quantize_linear %x : tensor<?x8xf32> -> (tensor<?x8xui8>, tensor<f32>, tensor<ui8>)
  // CHECK: lmopt.matmul_integer %{{.*}}, %{{.*}} a_zero_point %{{.*}} b_zero_point %{{.*}} : (tensor<?x8xui8>, tensor<8x4xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<?x4xi32>
  %1 = lmopt.matmul_integer %0#0, %b a_zero_point %0#2 b_zero_point %bzp : (tensor<?x8xui8>, tensor<8x4xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<?x4xi32>
  return %1 : tensor<?x4xi32>
}

// The quantized and mixed-precision forms of lmopt.linear, one per mode of
// docs/dialect.md (per token, per tensor, static int8, int4, bf16, fp16).
// CHECK-LABEL: func @quantized_linears
func.func @quantized_linears(%x: tensor<?x8xf32>, %w8: tensor<4x8x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3, 0.4}>>, %wu8: tensor<8x4x!quant.uniform<u8:f32, 0.1:3>>, %xs: tensor<?x8x!quant.uniform<u8:f32, 0.05:128>>, %w4: tensor<4x8x!quant.uniform<u4:f32:{0:1, 1:4}, {{0.1:8, 0.2:8}, {0.1:8, 0.2:8}, {0.1:8, 0.2:8}, {0.1:8, 0.2:8}}>>, %xb: tensor<?x8xbf16>, %wb: tensor<8x4xbf16>, %xh: tensor<?x8xf16>, %wh: tensor<4x8xf16>, %b: tensor<4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  // CHECK: lmopt.linear %{{.*}}, %{{.*}} bias %{{.*}} {input_quantization = #lmopt.input_quantization<dynamic_per_token>, transpose_weight = true} : (tensor<?x8xf32>, tensor<4x8x!quant.uniform<i8:f32:0, {1.000000e-01,2.000000e-01,3.000000e-01,4.000000e-01}>>, tensor<4xf32>) -> tensor<?x4xf32>
  %0 = lmopt.linear %x, %w8 bias %b {input_quantization = #lmopt.input_quantization<dynamic_per_token>, transpose_weight = true} : (tensor<?x8xf32>, tensor<4x8x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3, 0.4}>>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: lmopt.linear %{{.*}}, %{{.*}} {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>} : (tensor<?x8xf32>, tensor<8x4x!quant.uniform<u8:f32, 1.000000e-01:3>>) -> tensor<?x4xf32>
  %1 = lmopt.linear %x, %wu8 {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>} : (tensor<?x8xf32>, tensor<8x4x!quant.uniform<u8:f32, 0.1:3>>) -> tensor<?x4xf32>
  // CHECK: lmopt.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<?x8x!quant.uniform<u8:f32, 5.000000e-02:128>>, tensor<4x8x!quant.uniform<i8:f32:0, {{.*}}>>) -> tensor<?x4xf32>
  %2 = lmopt.linear %xs, %w8 {transpose_weight = true} : (tensor<?x8x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x8x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<?x4xf32>
  // CHECK: lmopt.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<?x8xf32>, tensor<4x8x!quant.uniform<u4:f32:{0:1, 1:4}, {{.*}}>>) -> tensor<?x4xf32>
  %3 = lmopt.linear %x, %w4 {transpose_weight = true} : (tensor<?x8xf32>, tensor<4x8x!quant.uniform<u4:f32:{0:1, 1:4}, {{0.1:8, 0.2:8}, {0.1:8, 0.2:8}, {0.1:8, 0.2:8}, {0.1:8, 0.2:8}}>>) -> tensor<?x4xf32>
  // CHECK: lmopt.linear %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<?x8xbf16>, tensor<8x4xbf16>, tensor<4xf32>) -> tensor<?x4xf32>
  %4 = lmopt.linear %xb, %wb bias %b : (tensor<?x8xbf16>, tensor<8x4xbf16>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: lmopt.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<?x8xf16>, tensor<4x8xf16>) -> tensor<?x4xf32>
  %5 = lmopt.linear %xh, %wh {transpose_weight = true} : (tensor<?x8xf16>, tensor<4x8xf16>) -> tensor<?x4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// CHECK-LABEL: func @training_steps
func.func @training_steps(%x: tensor<?x8xf32>, %seed: tensor<i64>, %g: tensor<?x3x8xf32>, %ids: tensor<?x3xi64>) -> (tensor<?x8xi1>, tensor<100x8xf32>) {
  // CHECK: lmopt.dropout_mask %{{.*}}, %{{.*}} {ratio = 1.000000e-01 : f32, stream = 2 : i64} : (tensor<?x8xf32>, tensor<i64>) -> tensor<?x8xi1>
  %0 = lmopt.dropout_mask %x, %seed {ratio = 0.1 : f32, stream = 2 : i64} : (tensor<?x8xf32>, tensor<i64>) -> tensor<?x8xi1>
  // CHECK: lmopt.gather_grad %{{.*}}, %{{.*}} : (tensor<?x3x8xf32>, tensor<?x3xi64>) -> tensor<100x8xf32>
  %1 = lmopt.gather_grad %g, %ids : (tensor<?x3x8xf32>, tensor<?x3xi64>) -> tensor<100x8xf32>
  return %0, %1 : tensor<?x8xi1>, tensor<100x8xf32>
}

// CHECK-LABEL: func @optimizer
func.func @optimizer(%p: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m: tensor<4x3xf32>, %v: tensor<4x3xf32>, %s: tensor<f32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  // CHECK: lmopt.adamw %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64} : tensor<4x3xf32>, tensor<f32>
  %0:3 = lmopt.adamw %p, %g, %m, %v, %s, %s, %s, %s, %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.0 : f64} : tensor<4x3xf32>, tensor<f32>
  return %0#0, %0#1, %0#2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// A score bias, alone and after a mask; its dims broadcast over batch,
// heads and query rows ([1|B, 1|H, 1|Sq, Sk]) and may be dynamic.
// CHECK-LABEL: func @attention_bias
func.func @attention_bias(%x: tensor<?x16x64xf32>, %m: tensor<?x1x1x16xi1>, %b: tensor<1x4x16x16xf32>, %d: tensor<?x4x1x?xf32>) -> (tensor<?x16x64xf32>, tensor<?x16x64xf32>) {
  // CHECK: lmopt.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} {num_heads = 4 : i64, scale = 1.000000e+00 : f32} : (tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<1x4x16x16xf32>)
  %0 = lmopt.attention %x, %x, %x bias %b {num_heads = 4 : i64, scale = 1.0 : f32} : (tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<1x4x16x16xf32>) -> tensor<?x16x64xf32>
  // CHECK: lmopt.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} bias %{{.*}} {num_heads = 4 : i64} : (tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x1x1x16xi1>, tensor<?x4x1x?xf32>)
  %1 = lmopt.attention %x, %x, %x mask %m bias %d {num_heads = 4 : i64} : (tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x16x64xf32>, tensor<?x1x1x16xi1>, tensor<?x4x1x?xf32>) -> tensor<?x16x64xf32>
  return %0, %1 : tensor<?x16x64xf32>, tensor<?x16x64xf32>
}
