// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// Reshapes come from the input and result types: one collapse or expand
// where a reassociation exists.
// CHECK-LABEL: func.func @reshape_collapse_expand
// CHECK-SAME: %[[X:.*]]: tensor<2x8x64xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x8x64xf32> into tensor<16x64xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
// CHECK: return %[[E]]
func.func @reshape_collapse_expand(%x: tensor<2x8x64xf32>) -> tensor<16x4x16xf32> {
  %s0 = lmopt.constant dense<[-1, 64]> : tensor<2xi64>
  %0 = lmopt.reshape %x, %s0 : (tensor<2x8x64xf32>, tensor<2xi64>) -> tensor<16x64xf32>
  %s1 = lmopt.constant dense<[0, 4, 16]> : tensor<3xi64>
  %1 = lmopt.reshape %0, %s1 : (tensor<16x64xf32>, tensor<3xi64>) -> tensor<16x4x16xf32>
  return %1 : tensor<16x4x16xf32>
}

// -----

// No reassociation maps 2x8 to 16x1 (same rank): through a 1-D tensor.
// CHECK-LABEL: func.func @reshape_through_flat
// CHECK-SAME: %[[X:.*]]: tensor<2x8xi1>
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x8xi1> into tensor<16xi1>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [16, 1] : tensor<16xi1> into tensor<16x1xi1>
// CHECK: return %[[E]]
func.func @reshape_through_flat(%x: tensor<2x8xi1>) -> tensor<16x1xi1> {
  %s = lmopt.constant dense<[-1, 1]> : tensor<2xi64>
  %0 = lmopt.reshape %x, %s : (tensor<2x8xi1>, tensor<2xi64>) -> tensor<16x1xi1>
  return %0 : tensor<16x1xi1>
}

// -----

// A scalar to and from rank 2.
// CHECK-LABEL: func.func @reshape_scalar
// CHECK-SAME: %[[X:.*]]: tensor<f32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[E]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK: return %[[C]]
func.func @reshape_scalar(%x: tensor<f32>) -> tensor<f32> {
  %s0 = lmopt.constant dense<[1, 1]> : tensor<2xi64>
  %0 = lmopt.reshape %x, %s0 : (tensor<f32>, tensor<2xi64>) -> tensor<1x1xf32>
  %s1 = lmopt.constant dense<> : tensor<0xi64>
  %1 = lmopt.reshape %0, %s1 : (tensor<1x1xf32>, tensor<0xi64>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// One dynamic dim on each side: the static dims fix the grouping, and the
// expand computes the dynamic size.
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK-SAME: %[[X:.*]]: tensor<?x8x64xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<?x8x64xf32> into tensor<?x512xf32>
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0, 1]] : tensor<?x512xf32> into tensor<?xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[F]]
// CHECK: %[[D:.*]] = arith.divsi %[[N]], %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [32, %[[D]]] : tensor<?xf32> into tensor<32x?xf32>
// CHECK: return %[[E]]
func.func @reshape_dynamic(%x: tensor<?x8x64xf32>) -> tensor<32x?xf32> {
  %s0 = lmopt.constant dense<[-1, 512]> : tensor<2xi64>
  %0 = lmopt.reshape %x, %s0 : (tensor<?x8x64xf32>, tensor<2xi64>) -> tensor<?x512xf32>
  %s1 = lmopt.constant dense<[32, -1]> : tensor<2xi64>
  %1 = lmopt.reshape %0, %s1 : (tensor<?x512xf32>, tensor<2xi64>) -> tensor<32x?xf32>
  return %1 : tensor<32x?xf32>
}

// -----

// Squeeze and unsqueeze only drop or insert 1s, so any number of dynamic
// dims keeps its order.
// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK-SAME: %[[X:.*]]: tensor<?x1x?xf32>
// CHECK: %[[S:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<?x1x?xf32> into tensor<?x?xf32>
// CHECK: %[[U:.*]] = tensor.expand_shape %[[S]] {{\[}}[0, 1], [2, 3]] output_shape [1, %{{.*}}, 1, %{{.*}}] : tensor<?x?xf32> into tensor<1x?x1x?xf32>
// CHECK: return %[[S]], %[[U]]
func.func @squeeze_unsqueeze(%x: tensor<?x1x?xf32>) -> (tensor<?x?xf32>, tensor<1x?x1x?xf32>) {
  %0 = lmopt.squeeze %x {axes = array<i64: 1>} : tensor<?x1x?xf32> -> tensor<?x?xf32>
  %1 = lmopt.unsqueeze %0 {axes = array<i64: 0, -2>} : tensor<?x?xf32> -> tensor<1x?x1x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<1x?x1x?xf32>
}

// -----

// Squeeze without axes drops every static 1, here to a scalar.
// CHECK-LABEL: func.func @squeeze_all
// CHECK-SAME: %[[X:.*]]: tensor<1x1xi64>
// CHECK: %[[S:.*]] = tensor.collapse_shape %[[X]] [] : tensor<1x1xi64> into tensor<i64>
// CHECK: return %[[S]]
func.func @squeeze_all(%x: tensor<1x1xi64>) -> tensor<i64> {
  %0 = lmopt.squeeze %x : tensor<1x1xi64> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Two dynamic dims on a side: the types do not say which input dims make up
// which result dims (?x? to ?x? could be 4x6 to 6x4). Not lowered.
// CHECK-LABEL: func.func @negative_reshape_ambiguous
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: lmopt.reshape
func.func @negative_reshape_ambiguous(%x: tensor<?x?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = lmopt.reshape %x, %shape : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Two dynamic result dims from one dynamic input dim: not lowered either.
// CHECK-LABEL: func.func @negative_reshape_split_dynamic
// CHECK-NOT: tensor.expand_shape
// CHECK: lmopt.reshape
func.func @negative_reshape_split_dynamic(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = lmopt.reshape %x, %shape : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
