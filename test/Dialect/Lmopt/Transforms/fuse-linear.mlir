// RUN: lmopt-opt %s -lmopt-fuse-linear -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-fuse-linear -split-input-file --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// The BERT feed-forward block as exported: MatMul + Add bias, GELU, MatMul +
// Add bias, residual Add (whose sum here goes to the output, not a norm).
// CHECK-LABEL: func @ffn
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf32>)
// CHECK-DAG: %[[W1:.*]] = lmopt.constant dense<{{.*}}> : tensor<64x256xf32>
// CHECK-DAG: %[[B1:.*]] = lmopt.constant dense<2.000000e-01> : tensor<256xf32>
// CHECK-DAG: %[[W2:.*]] = lmopt.constant dense<3.000000e-02> : tensor<256x64xf32>
// CHECK-DAG: %[[B2:.*]] = lmopt.constant dense<4.000000e-01> : tensor<64xf32>
// CHECK: %[[H:.*]] = lmopt.linear %[[X]], %[[W1]] bias %[[B1]] {activation = #lmopt.activation<gelu>}
// CHECK: %[[Y:.*]] = lmopt.linear %[[H]], %[[W2]] bias %[[B2]] residual %[[X]] :
// CHECK-NOT: lmopt.matmul
// CHECK-NOT: lmopt.add
// CHECK: return %[[Y]]
// REPORT: linear {{ *}}2 {{ *}}0
// REPORT: linear_activation {{ *}}1 {{ *}}0
// REPORT: linear_bias {{ *}}2 {{ *}}0
// REPORT: linear_residual {{ *}}1 {{ *}}0
func.func @ffn(%x: tensor<?x16x64xf32>) -> tensor<?x16x64xf32> {
  %w1 = lmopt.constant dense<0.01> : tensor<64x256xf32>
  %b1 = lmopt.constant dense<0.2> : tensor<256xf32>
  %w2 = lmopt.constant dense<0.03> : tensor<256x64xf32>
  %b2 = lmopt.constant dense<0.4> : tensor<64xf32>
  %0 = lmopt.matmul %x, %w1 : (tensor<?x16x64xf32>, tensor<64x256xf32>) -> tensor<?x16x256xf32>
  %1 = lmopt.add %0, %b1 : (tensor<?x16x256xf32>, tensor<256xf32>) -> tensor<?x16x256xf32>
  %2 = lmopt.gelu %1 : tensor<?x16x256xf32>
  %3 = lmopt.matmul %2, %w2 : (tensor<?x16x256xf32>, tensor<256x64xf32>) -> tensor<?x16x64xf32>
  %4 = lmopt.add %b2, %3 : (tensor<64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
  %5 = lmopt.add %4, %x : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
  return %5 : tensor<?x16x64xf32>
}

// -----

// PyTorch's nn.Linear weight [N, K] reaches MatMul through a Transpose.
// CHECK-LABEL: func @transposed_weight_tanh_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[WT:.*]]: tensor<128x64xf32>)
// CHECK: %[[Y:.*]] = lmopt.linear %[[X]], %[[WT]] {activation = #lmopt.activation<gelu_tanh>, transpose_weight = true} : (tensor<2x8x64xf32>, tensor<128x64xf32>) -> tensor<2x8x128xf32>
// CHECK: return %[[Y]]
func.func @transposed_weight_tanh_gelu(%x: tensor<2x8x64xf32>, %wt: tensor<128x64xf32>) -> tensor<2x8x128xf32> {
  %w = lmopt.transpose %wt {perm = array<i64: 1, 0>} : tensor<128x64xf32> -> tensor<64x128xf32>
  %0 = lmopt.matmul %x, %w : (tensor<2x8x64xf32>, tensor<64x128xf32>) -> tensor<2x8x128xf32>
  %1 = lmopt.gelu %0 {approximate = #lmopt.gelu_approximation<tanh>} : tensor<2x8x128xf32>
  return %1 : tensor<2x8x128xf32>
}

// -----

// GPT-2's Conv1D and BERT's pooler export as Gemm(a, b, c, transB).
// CHECK-LABEL: func @gemm_relu
// CHECK-SAME: (%[[A:.*]]: tensor<?x64xf32>, %[[B:.*]]: tensor<32x64xf32>, %[[C:.*]]: tensor<32xf32>)
// CHECK: %[[Y:.*]] = lmopt.linear %[[A]], %[[B]] bias %[[C]] {activation = #lmopt.activation<relu>, transpose_weight = true}
// CHECK: return %[[Y]]
// REPORT: linear {{ *}}1 {{ *}}0
// REPORT: linear_activation {{ *}}1 {{ *}}0
func.func @gemm_relu(%a: tensor<?x64xf32>, %b: tensor<32x64xf32>, %c: tensor<32xf32>) -> tensor<?x32xf32> {
  %0 = lmopt.gemm %a, %b, %c {trans_b = true} : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %1 = lmopt.relu %0 : tensor<?x32xf32>
  return %1 : tensor<?x32xf32>
}

// -----

// Attention scores multiply two activations of rank 4: not a linear.
// CHECK-LABEL: func @negative_batched_matmul
// CHECK: lmopt.matmul
// CHECK-NOT: lmopt.linear
// REPORT: linear {{ *}}0 {{ *}}0
func.func @negative_batched_matmul(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32> {
  %0 = lmopt.matmul %q, %k : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// CHECK-LABEL: func @negative_gemm_alpha
// CHECK: lmopt.gemm
// CHECK-NOT: lmopt.linear
// REPORT: near miss: linear at 'scaled_gemm': gemm alpha is not 1
func.func @negative_gemm_alpha(%a: tensor<4x64xf32>, %b: tensor<64x32xf32>) -> tensor<4x32xf32> {
  %0 = lmopt.gemm %a, %b {alpha = 0.5 : f32} : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32> loc("scaled_gemm")
  return %0 : tensor<4x32xf32>
}

// -----

// The product is also returned, so the bias cannot be folded into it.
// CHECK-LABEL: func @negative_bias_product_escapes
// CHECK: %[[L:.*]] = lmopt.linear
// CHECK-NOT: bias
// CHECK: %[[S:.*]] = lmopt.add %[[L]]
// CHECK: return %[[S]], %[[L]]
// REPORT: near miss: linear_bias at 'bias_add': the linear result has other users
func.func @negative_bias_product_escapes(%x: tensor<4x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = lmopt.matmul %x, %w : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
  %1 = lmopt.add %0, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32> loc("bias_add")
  return %1, %0 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// A residual sum that feeds a layer norm is left for skip_layer_norm.
// CHECK-LABEL: func @negative_residual_before_layer_norm
// CHECK: %[[L:.*]] = lmopt.linear %{{.*}}, %{{.*}} bias
// CHECK-NOT: residual
// CHECK: %[[S:.*]] = lmopt.add %[[L]], %{{.*}}
// CHECK: lmopt.layer_norm %[[S]]
// REPORT: near miss: linear_residual at 'residual_add': the sum feeds a layer norm; left for skip_layer_norm
func.func @negative_residual_before_layer_norm(%x: tensor<?x16x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %g: tensor<64xf32>) -> tensor<?x16x64xf32> {
  %0 = lmopt.matmul %x, %w : (tensor<?x16x64xf32>, tensor<64x64xf32>) -> tensor<?x16x64xf32>
  %1 = lmopt.add %0, %b : (tensor<?x16x64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  %2 = lmopt.add %1, %x : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32> loc("residual_add")
  %3 = lmopt.layer_norm %2, %g, %b : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  return %3 : tensor<?x16x64xf32>
}

// -----

// A residual that broadcasts is not the fused op's residual.
// CHECK-LABEL: func @negative_broadcast_residual
// CHECK: %[[L:.*]] = lmopt.linear
// CHECK: lmopt.add %[[L]]
// REPORT: near miss: linear_residual at 'broadcast_add': the residual add broadcasts
func.func @negative_broadcast_residual(%x: tensor<4x64xf32>, %w: tensor<64x32xf32>, %r: tensor<1x32xf32>) -> tensor<4x32xf32> {
  %0 = lmopt.matmul %x, %w : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
  %1 = lmopt.add %0, %r : (tensor<4x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32> loc("broadcast_add")
  return %1 : tensor<4x32xf32>
}

// -----

// GPT-2's MLP: Gemm on [B*S, K], reshape back to [B, S, N], then GELU. The
// GELU moves into the linear and the reshape stays after it.
// CHECK-LABEL: func @activation_behind_reshape
// CHECK-SAME: (%[[A:.*]]: tensor<?x64xf32>, %[[B:.*]]: tensor<64x256xf32>, %[[C:.*]]: tensor<256xf32>, %[[S:.*]]: tensor<3xi64>)
// CHECK: %[[L:.*]] = lmopt.linear %[[A]], %[[B]] bias %[[C]] {activation = #lmopt.activation<gelu_tanh>} : (tensor<?x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
// CHECK: %[[R:.*]] = lmopt.reshape %[[L]], %[[S]]
// CHECK-NOT: lmopt.gelu
// CHECK: return %[[R]]
// REPORT: linear_activation {{ *}}1 {{ *}}0
func.func @activation_behind_reshape(%a: tensor<?x64xf32>, %b: tensor<64x256xf32>, %c: tensor<256xf32>, %s: tensor<3xi64>) -> tensor<?x?x256xf32> {
  %0 = lmopt.gemm %a, %b, %c : (tensor<?x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  %1 = lmopt.reshape %0, %s : (tensor<?x256xf32>, tensor<3xi64>) -> tensor<?x?x256xf32>
  %2 = lmopt.gelu %1 {approximate = #lmopt.gelu_approximation<tanh>} : tensor<?x?x256xf32>
  return %2 : tensor<?x?x256xf32>
}

// -----

// The reshaped product is also returned: the activation cannot move into
// the linear.
// CHECK-LABEL: func @negative_reshape_escapes
// CHECK: lmopt.linear
// CHECK-NOT: activation
// CHECK: lmopt.gelu
func.func @negative_reshape_escapes(%a: tensor<?x64xf32>, %b: tensor<64x256xf32>, %s: tensor<3xi64>) -> (tensor<?x?x256xf32>, tensor<?x?x256xf32>) {
  %0 = lmopt.gemm %a, %b : (tensor<?x64xf32>, tensor<64x256xf32>) -> tensor<?x256xf32>
  %1 = lmopt.reshape %0, %s : (tensor<?x256xf32>, tensor<3xi64>) -> tensor<?x?x256xf32>
  %2 = lmopt.gelu %1 : tensor<?x?x256xf32>
  return %2, %1 : tensor<?x?x256xf32>, tensor<?x?x256xf32>
}

// -----

// A bias add and GELU after a quantized linear fold into it, and the linear
// keeps its input_quantization.
// CHECK-LABEL: func @quantized_linear_epilogue
// CHECK: lmopt.linear %{{.*}}, %{{.*}} bias %{{.*}} {activation = #lmopt.activation<gelu>, input_quantization = #lmopt.input_quantization<dynamic_per_token>}
// CHECK-NOT: lmopt.add
// CHECK-NOT: lmopt.gelu
func.func @quantized_linear_epilogue(%x: tensor<?x8xf32>, %w: tensor<8x4x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3, 0.4}>>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<?x8xf32>, tensor<8x4x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<?x4xf32>
  %1 = lmopt.add %0, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %2 = lmopt.gelu %1 : tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// A half-precision model keeps its type: the linear reads, weighs and
// returns f16.
// CHECK-LABEL: func @f16_model
// CHECK: lmopt.linear %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x4xf16>, tensor<4x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
func.func @f16_model(%x: tensor<2x4xf16>, %w: tensor<4x3xf16>, %b: tensor<3xf16>) -> tensor<2x3xf16> {
  %0 = lmopt.matmul %x, %w : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  %1 = lmopt.add %0, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  return %1 : tensor<2x3xf16>
}

// -----

// An integer product is not a linear (lmopt.linear takes integers only as
// quantized types).
// CHECK-LABEL: func @negative_integer_matmul
// CHECK: lmopt.matmul
// CHECK-NOT: lmopt.linear
func.func @negative_integer_matmul(%x: tensor<2x4xi32>, %w: tensor<4x3xi32>) -> tensor<2x3xi32> {
  %0 = lmopt.matmul %x, %w : (tensor<2x4xi32>, tensor<4x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
