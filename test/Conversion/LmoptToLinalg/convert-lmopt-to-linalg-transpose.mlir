// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @transpose_heads
// CHECK-SAME: %[[X:.*]]: tensor<2x8x4x16xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4x8x16xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x8x4x16xf32>) outs(%[[E]] : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
// CHECK: return %[[T]]
func.func @transpose_heads(%x: tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32> {
  %0 = lmopt.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// A dynamic dim moves with the permutation: result dim 1 is input dim 0.
// CHECK-LABEL: func.func @transpose_dynamic
// CHECK-SAME: %[[X:.*]]: tensor<?x3x4xi1>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]]) : tensor<4x?x3xi1>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<?x3x4xi1>) outs(%[[E]] : tensor<4x?x3xi1>) permutation = [2, 0, 1]
// CHECK: return %[[T]]
func.func @transpose_dynamic(%x: tensor<?x3x4xi1>) -> tensor<4x?x3xi1> {
  %0 = lmopt.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<?x3x4xi1> -> tensor<4x?x3xi1>
  return %0 : tensor<4x?x3xi1>
}
