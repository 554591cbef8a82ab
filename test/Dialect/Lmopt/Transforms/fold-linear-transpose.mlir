// RUN: lmopt-opt %s -lmopt-fold-linear-transpose -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-fold-linear-transpose -split-input-file --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// A weight gradient x^T dy as the backward pass builds it: the matmul
// becomes a linear that reads x where it lies, and the transpose goes.
// CHECK-LABEL: func @weight_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<32x16xf32>, %[[DY:.*]]: tensor<32x8xf32>)
// CHECK: %[[DW:.*]] = lmopt.linear %[[X]], %[[DY]] {transpose_input = true} : (tensor<32x16xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
// CHECK-NOT: lmopt.transpose
// CHECK: return %[[DW]]
// REPORT: linear_transposed_input {{ *}}1 {{ *}}0
func.func @weight_gradient(%x: tensor<32x16xf32>, %dy: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %xt = lmopt.transpose %x {perm = array<i64: 1, 0>} : tensor<32x16xf32> -> tensor<16x32xf32>
  %dw = lmopt.matmul %xt, %dy : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  return %dw : tensor<16x8xf32>
}

// -----

// The bf16 form: a linear reading bf16 copies into f32 keeps its types and
// epilogue; a transpose with another reader stays for that reader.
// CHECK-LABEL: func @bf16_linear_shared_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<32x16xbf16>, %[[DY:.*]]: tensor<32x8xbf16>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[XT:.*]] = lmopt.transpose %[[X]]
// CHECK: %[[DW:.*]] = lmopt.linear %[[X]], %[[DY]] bias %[[B]] {transpose_input = true} : (tensor<32x16xbf16>, tensor<32x8xbf16>, tensor<8xf32>) -> tensor<16x8xf32>
// CHECK: return %[[DW]], %[[XT]]
func.func @bf16_linear_shared_transpose(%x: tensor<32x16xbf16>, %dy: tensor<32x8xbf16>, %b: tensor<8xf32>) -> (tensor<16x8xf32>, tensor<16x32xbf16>) {
  %xt = lmopt.transpose %x {perm = array<i64: 1, 0>} : tensor<32x16xbf16> -> tensor<16x32xbf16>
  %dw = lmopt.linear %xt, %dy bias %b : (tensor<16x32xbf16>, tensor<32x8xbf16>, tensor<8xf32>) -> tensor<16x8xf32>
  return %dw, %xt : tensor<16x8xf32>, tensor<16x32xbf16>
}

// -----

// A transposed weight keeps its flag: dW = dy^T x for PyTorch's [N, K].
// CHECK-LABEL: func @transposed_weight_layout
// CHECK-SAME: (%[[X:.*]]: tensor<32x16xf32>, %[[DY:.*]]: tensor<32x8xf32>)
// CHECK: lmopt.linear %[[DY]], %[[X]] {transpose_input = true} : (tensor<32x8xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
func.func @transposed_weight_layout(%x: tensor<32x16xf32>, %dy: tensor<32x8xf32>) -> tensor<8x16xf32> {
  %dyt = lmopt.transpose %dy {perm = array<i64: 1, 0>} : tensor<32x8xf32> -> tensor<8x32xf32>
  %dw = lmopt.matmul %dyt, %x : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  return %dw : tensor<8x16xf32>
}

// -----

// A dynamic contraction length (bounded shapes) stays a matmul of the
// transposed copy: the step needs the length when it is built.
// CHECK-LABEL: func @negative_dynamic_rows
// CHECK: lmopt.transpose
// CHECK: lmopt.matmul
// CHECK-NOT: transpose_input
func.func @negative_dynamic_rows(%x: tensor<?x16xf32>, %dy: tensor<?x8xf32>) -> tensor<16x8xf32> {
  %xt = lmopt.transpose %x {perm = array<i64: 1, 0>} : tensor<?x16xf32> -> tensor<16x?xf32>
  %dw = lmopt.matmul %xt, %dy : (tensor<16x?xf32>, tensor<?x8xf32>) -> tensor<16x8xf32>
  return %dw : tensor<16x8xf32>
}

// -----

// Batched transposes (attention's backward) and integer products are left
// alone.
// CHECK-LABEL: func @negative_batched_and_integer
// CHECK-COUNT-2: lmopt.transpose
// CHECK-NOT: transpose_input
func.func @negative_batched_and_integer(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %a: tensor<4x3xi32>, %b: tensor<4x5xi32>) -> (tensor<2x8x8xf32>, tensor<3x5xi32>) {
  %qt = lmopt.transpose %q {perm = array<i64: 0, 2, 1>} : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = lmopt.matmul %qt, %k : (tensor<2x8x4xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
  %at = lmopt.transpose %a {perm = array<i64: 1, 0>} : tensor<4x3xi32> -> tensor<3x4xi32>
  %p = lmopt.matmul %at, %b : (tensor<3x4xi32>, tensor<4x5xi32>) -> tensor<3x5xi32>
  return %s, %p : tensor<2x8x8xf32>, tensor<3x5xi32>
}
