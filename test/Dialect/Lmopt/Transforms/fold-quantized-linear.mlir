// RUN: lmopt-opt %s -lmopt-fold-quantized-linear -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-fold-quantized-linear --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// onnxruntime's quantize_dynamic: DynamicQuantizeLinear, MatMulInteger with
// an int8 weight and zero point 0, the scales multiplied, a bias add. The
// bias joins the linear; the weight keeps its bits under a per-tensor type
// with the constant scale.
// CHECK-LABEL: func @dynamic_per_tensor
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-DAG: %[[W:.*]] = lmopt.constant dense<{{.*}}> : tensor<4x3xi8>
// CHECK-DAG: %[[B:.*]] = lmopt.constant dense<{{.*}}> : tensor<3xf32>
// CHECK: %[[Q:.*]] = quant.scast %[[W]] : tensor<4x3xi8> to tensor<4x3x!quant.uniform<i8:f32, 2.500000e-01>>
// CHECK: %[[Y:.*]] = lmopt.linear %[[X]], %[[Q]] bias %[[B]] {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>} : (tensor<?x4xf32>, tensor<4x3x!quant.uniform<i8:f32, 2.500000e-01>>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NOT: lmopt.matmul_integer
// CHECK: return %[[Y]]
func.func @dynamic_per_tensor(%x: tensor<?x4xf32>) -> tensor<?x3xf32> {
  %w = lmopt.constant dense<[[1, -2, 3], [4, 5, -6], [7, 8, 9], [-10, 11, 12]]> : tensor<4x3xi8>
  %wzp = lmopt.constant dense<0> : tensor<i8>
  %ws = lmopt.constant dense<0.25> : tensor<f32>
  %b = lmopt.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %q, %s, %zp = lmopt.dynamic_quantize_linear %x : tensor<?x4xf32> -> (tensor<?x4xui8>, tensor<f32>, tensor<ui8>)
  %scale = lmopt.mul %s, %ws : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %p = lmopt.matmul_integer %q, %w a_zero_point %zp b_zero_point %wzp : (tensor<?x4xui8>, tensor<4x3xi8>, tensor<ui8>, tensor<i8>) -> tensor<?x3xi32>
  %f = lmopt.cast %p : tensor<?x3xi32> -> tensor<?x3xf32>
  %y = lmopt.mul %f, %scale : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xf32>
  %z = lmopt.add %y, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %z : tensor<?x3xf32>
}

// -----

// A uint8 weight with per-column scales and zero points (operands of the
// multiplies commuted): a u8 per-axis type on the output axis; the weight is
// re-created as signless i8 bits for quant.scast.
// CHECK-LABEL: func @dynamic_per_column_u8
// CHECK: %[[W:.*]] = lmopt.constant dense<{{\[\[}}1, -56], [-128, 127]]> : tensor<2x2xi8>
// CHECK: %[[Q:.*]] = quant.scast %[[W]] : tensor<2x2xi8> to tensor<2x2x!quant.uniform<u8:f32:1, {5.000000e-01:128,1.250000e-01:3}>>
// CHECK: lmopt.linear %{{.*}}, %[[Q]] {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>}
func.func @dynamic_per_column_u8(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = lmopt.constant dense<[[1, 200], [128, 127]]> : tensor<2x2xui8>
  %wzp = lmopt.constant dense<[128, 3]> : tensor<2xui8>
  %ws = lmopt.constant dense<[0.5, 0.125]> : tensor<2xf32>
  %q, %s, %zp = lmopt.dynamic_quantize_linear %x : tensor<3x2xf32> -> (tensor<3x2xui8>, tensor<f32>, tensor<ui8>)
  %scale = lmopt.mul %ws, %s : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %p = lmopt.matmul_integer %q, %w a_zero_point %zp b_zero_point %wzp : (tensor<3x2xui8>, tensor<2x2xui8>, tensor<ui8>, tensor<2xui8>) -> tensor<3x2xi32>
  %f = lmopt.cast %p : tensor<3x2xi32> -> tensor<3x2xf32>
  %y = lmopt.mul %scale, %f : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// negative: the weight scale is not a constant (here a function argument):
// left as is.
// CHECK-LABEL: func @negative_dynamic_scale_not_constant
// CHECK: lmopt.matmul_integer
// CHECK-NOT: lmopt.linear
func.func @negative_dynamic_scale_not_constant(%x: tensor<3x2xf32>, %ws: tensor<f32>) -> tensor<3x2xf32> {
  %w = lmopt.constant dense<1> : tensor<2x2xi8>
  %q, %s, %zp = lmopt.dynamic_quantize_linear %x : tensor<3x2xf32> -> (tensor<3x2xui8>, tensor<f32>, tensor<ui8>)
  %scale = lmopt.mul %s, %ws : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %p = lmopt.matmul_integer %q, %w a_zero_point %zp : (tensor<3x2xui8>, tensor<2x2xi8>, tensor<ui8>) -> tensor<3x2xi32>
  %f = lmopt.cast %p : tensor<3x2xi32> -> tensor<3x2xf32>
  %y = lmopt.mul %f, %scale : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// negative: the product is scaled by two constants, not by the input scale
// of dynamic_quantize_linear: left as is.
// CHECK-LABEL: func @negative_dynamic_scale_not_input_scale
// CHECK: lmopt.matmul_integer
// CHECK-NOT: lmopt.linear
func.func @negative_dynamic_scale_not_input_scale(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = lmopt.constant dense<1> : tensor<2x2xi8>
  %c1 = lmopt.constant dense<0.5> : tensor<f32>
  %c2 = lmopt.constant dense<0.25> : tensor<f32>
  %q, %s, %zp = lmopt.dynamic_quantize_linear %x : tensor<3x2xf32> -> (tensor<3x2xui8>, tensor<f32>, tensor<ui8>)
  %scale = lmopt.mul %c1, %c2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %p = lmopt.matmul_integer %q, %w a_zero_point %zp : (tensor<3x2xui8>, tensor<2x2xi8>, tensor<ui8>) -> tensor<3x2xi32>
  %f = lmopt.cast %p : tensor<3x2xi32> -> tensor<3x2xf32>
  %y = lmopt.mul %f, %scale : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32> loc("scale_not_input")
  return %y : tensor<3x2xf32>
}

// -----

// QDQ: dequantize(quantize(x)) feeds a linear whose weight is an int8
// per-output-channel constant with zero points 0: a static int8 linear on
// the quantized input.
// CHECK-LABEL: func @qdq_static
// CHECK: %[[XQ:.*]] = lmopt.quantize %{{.*}} : tensor<2x4xf32> -> tensor<2x4x!quant.uniform<u8:f32, 5.000000e-02:128>>
// CHECK: %[[WQ:.*]] = quant.scast %{{.*}} : tensor<3x4xi8> to tensor<3x4x!quant.uniform<i8:f32:0, {1.000000e-01,2.000000e-01,3.000000e-01}>>
// CHECK: lmopt.linear %[[XQ]], %[[WQ]] bias %{{.*}} {activation = #lmopt.activation<relu>, transpose_weight = true} : (tensor<2x4x!quant.uniform<u8:f32, 5.000000e-02:128>>, tensor<3x4x!quant.uniform<i8:f32:0, {1.000000e-01,2.000000e-01,3.000000e-01}>>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NOT: lmopt.dequantize
func.func @qdq_static(%x: tensor<2x4xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %xq = lmopt.quantize %x : tensor<2x4xf32> -> tensor<2x4x!quant.uniform<u8:f32, 0.05:128>>
  %xd = lmopt.dequantize %xq : tensor<2x4x!quant.uniform<u8:f32, 0.05:128>> -> tensor<2x4xf32>
  %wi = lmopt.constant dense<3> : tensor<3x4xi8>
  %wq = quant.scast %wi : tensor<3x4xi8> to tensor<3x4x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>
  %w = lmopt.dequantize %wq : tensor<3x4x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>> -> tensor<3x4xf32>
  %y = lmopt.linear %xd, %w bias %b {activation = #lmopt.activation<relu>, transpose_weight = true} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// negative: a per-tensor weight zero point that is not 0 (the static form
// needs symmetric weights).
// CHECK-LABEL: func @negative_qdq_weight_zero_point
// CHECK: %[[W:.*]] = lmopt.dequantize %{{.*}} : tensor<4x3x!quant.uniform<i8:f32, 1.000000e-01:5>>
// CHECK: lmopt.linear %{{.*}}, %[[W]] : (tensor<2x4xf32>, tensor<4x3xf32>)
func.func @negative_qdq_weight_zero_point(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %xq = lmopt.quantize %x : tensor<2x4xf32> -> tensor<2x4x!quant.uniform<u8:f32, 0.05:128>>
  %xd = lmopt.dequantize %xq : tensor<2x4x!quant.uniform<u8:f32, 0.05:128>> -> tensor<2x4xf32>
  %wi = lmopt.constant dense<3> : tensor<4x3xi8>
  %wq = quant.scast %wi : tensor<4x3xi8> to tensor<4x3x!quant.uniform<i8:f32, 0.1:5>>
  %w = lmopt.dequantize %wq : tensor<4x3x!quant.uniform<i8:f32, 0.1:5>> -> tensor<4x3xf32>
  %y = lmopt.linear %xd, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("qdq_zero_point")
  return %y : tensor<2x3xf32>
}

// -----

// negative: a weight quantized along K (axis 0 of a [K, N] weight).
// CHECK-LABEL: func @negative_qdq_weight_axis
// CHECK: lmopt.linear %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4x3xf32>)
func.func @negative_qdq_weight_axis(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %xq = lmopt.quantize %x : tensor<2x4xf32> -> tensor<2x4x!quant.uniform<u8:f32, 0.05:128>>
  %xd = lmopt.dequantize %xq : tensor<2x4x!quant.uniform<u8:f32, 0.05:128>> -> tensor<2x4xf32>
  %wi = lmopt.constant dense<3> : tensor<4x3xi8>
  %wq = quant.scast %wi : tensor<4x3xi8> to tensor<4x3x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3, 0.4}>>
  %w = lmopt.dequantize %wq : tensor<4x3x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3, 0.4}>> -> tensor<4x3xf32>
  %y = lmopt.linear %xd, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("qdq_axis")
  return %y : tensor<2x3xf32>
}

// -----

// negative: an int8 weight-only dequantize with a float input (no input
// quantization to fold into): left as is.
// CHECK-LABEL: func @negative_int8_weight_only
// CHECK: lmopt.linear %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4x3xf32>)
func.func @negative_int8_weight_only(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %wi = lmopt.constant dense<3> : tensor<4x3xi8>
  %wq = quant.scast %wi : tensor<4x3xi8> to tensor<4x3x!quant.uniform<i8:f32, 0.1>>
  %w = lmopt.dequantize %wq : tensor<4x3x!quant.uniform<i8:f32, 0.1>> -> tensor<4x3xf32>
  %y = lmopt.linear %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("weight_only")
  return %y : tensor<2x3xf32>
}

// -----

// MatMulNBits as imported: a block-wise u4 weight [N, K] dequantized into a
// transposed linear. The linear takes the 4-bit weight directly.
// CHECK-LABEL: func @nbits
// CHECK: %[[WQ:.*]] = quant.scast %{{.*}} : tensor<2x64xi4> to tensor<2x64x!quant.uniform<u4:f32:{0:1, 1:32}, {{.*}}>>
// CHECK: lmopt.linear %{{.*}}, %[[WQ]] bias %{{.*}} {transpose_weight = true} : (tensor<3x64xf32>, tensor<2x64x!quant.uniform<u4:f32:{0:1, 1:32}, {{.*}}>>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NOT: lmopt.dequantize
func.func @nbits(%x: tensor<3x64xf32>, %b: tensor<2xf32>) -> tensor<3x2xf32> {
  %wi = lmopt.constant dense<5> : tensor<2x64xi4>
  %wq = quant.scast %wi : tensor<2x64xi4> to tensor<2x64x!quant.uniform<u4:f32:{0:1, 1:32}, {{0.1:8, 0.2:8}, {0.3:7, 0.4:9}}>>
  %w = lmopt.dequantize %wq : tensor<2x64x!quant.uniform<u4:f32:{0:1, 1:32}, {{0.1:8, 0.2:8}, {0.3:7, 0.4:9}}>> -> tensor<2x64xf32>
  %y = lmopt.linear %x, %w bias %b {transpose_weight = true} : (tensor<3x64xf32>, tensor<2x64xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// negative: blocks along the output channels as well as K (2 channels
// share a scale): the int4 form needs one block row per channel.
// CHECK-LABEL: func @negative_nbits_shared_rows
// CHECK: lmopt.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<3x64xf32>, tensor<2x64xf32>)
func.func @negative_nbits_shared_rows(%x: tensor<3x64xf32>) -> tensor<3x2xf32> {
  %wi = lmopt.constant dense<5> : tensor<2x64xi4>
  %wq = quant.scast %wi : tensor<2x64xi4> to tensor<2x64x!quant.uniform<u4:f32:{0:2, 1:32}, {{0.1:8, 0.2:8}}>>
  %w = lmopt.dequantize %wq : tensor<2x64x!quant.uniform<u4:f32:{0:2, 1:32}, {{0.1:8, 0.2:8}}>> -> tensor<2x64xf32>
  %y = lmopt.linear %x, %w {transpose_weight = true} : (tensor<3x64xf32>, tensor<2x64xf32>) -> tensor<3x2xf32> loc("nbits_rows")
  return %y : tensor<3x2xf32>
}

// REPORT: quantized_linear {{ *}}4 {{ *}}6
// REPORT-DAG: near miss: quantized_linear at 'scale_not_input': the scale is not the input scale times a constant
// REPORT-DAG: near miss: quantized_linear at 'qdq_zero_point': weight zero point is not 0
// REPORT-DAG: near miss: quantized_linear at 'qdq_axis': weight is quantized along K, not per output channel
// REPORT-DAG: near miss: quantized_linear at 'weight_only': 8-bit weight but the input is not dequantize(quantize(x))
// REPORT-DAG: near miss: quantized_linear at 'nbits_rows': blocks span several output channels
// REPORT-DAG: near miss: quantized_linear at {{.*}}: weight or weight scale is not a constant matrix
