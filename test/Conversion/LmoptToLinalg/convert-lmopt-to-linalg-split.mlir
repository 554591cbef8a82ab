// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// Each result is a view of the input; the offsets run along the axis.
// CHECK-LABEL: func.func @split_static
// CHECK-SAME: %[[X:.*]]: tensor<2x8x192xf32>
// CHECK: %[[Q:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [2, 8, 64] [1, 1, 1] : tensor<2x8x192xf32> to tensor<2x8x64xf32>
// CHECK: %[[K:.*]] = tensor.extract_slice %[[X]][0, 0, 64] [2, 8, 64] [1, 1, 1] : tensor<2x8x192xf32> to tensor<2x8x64xf32>
// CHECK: %[[V:.*]] = tensor.extract_slice %[[X]][0, 0, 128] [2, 8, 64] [1, 1, 1] : tensor<2x8x192xf32> to tensor<2x8x64xf32>
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @split_static(%x: tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  %0:3 = lmopt.split %x {axis = 2 : i64, split_sizes = array<i64: 64, 64, 64>} : (tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// -----

// Unequal sizes, a negative axis, and a dynamic dim off the axis read with
// tensor.dim.
// CHECK-LABEL: func.func @split_dynamic
// CHECK-SAME: %[[X:.*]]: tensor<?x6xi64>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]][0, 0] [%[[D0]], 2] [1, 1] : tensor<?x6xi64> to tensor<?x2xi64>
// CHECK: %[[B:.*]] = tensor.extract_slice %[[X]][0, 2] [%[[D0]], 4] [1, 1] : tensor<?x6xi64> to tensor<?x4xi64>
// CHECK: return %[[A]], %[[B]]
func.func @split_dynamic(%x: tensor<?x6xi64>) -> (tensor<?x2xi64>, tensor<?x4xi64>) {
  %0:2 = lmopt.split %x {axis = -1 : i64, split_sizes = array<i64: 2, 4>} : (tensor<?x6xi64>) -> (tensor<?x2xi64>, tensor<?x4xi64>)
  return %0#0, %0#1 : tensor<?x2xi64>, tensor<?x4xi64>
}

// -----

// A result type that knows more than the slice (a static dim the input has
// as `?`) is reached with tensor.cast.
// CHECK-LABEL: func.func @split_refined_result
// CHECK-SAME: %[[X:.*]]: tensor<?x4xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 0] [%{{.*}}, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[S]] : tensor<?x4xf32> to tensor<3x4xf32>
// CHECK: return %[[C]]
func.func @split_refined_result(%x: tensor<?x4xf32>) -> tensor<3x4xf32> {
  %0 = lmopt.split %x {axis = 1 : i64, split_sizes = array<i64: 4>} : (tensor<?x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// A zero-size piece (ONNX allows split sizes of 0; the rotary-embedding
// expansion splits [8] into [8, 0]) is an empty tensor, not a slice that
// starts one past the axis.
// CHECK-LABEL: func.func @split_empty_piece
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[ALL:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 8] [1, 1]
// CHECK: %[[NONE:.*]] = tensor.empty() : tensor<2x0xf32>
// CHECK: return %[[ALL]], %[[NONE]]
func.func @split_empty_piece(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x0xf32>) {
  %0:2 = lmopt.split %x {axis = 1 : i64, split_sizes = array<i64: 8, 0>} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x0xf32>)
  return %0#0, %0#1 : tensor<2x8xf32>, tensor<2x0xf32>
}
