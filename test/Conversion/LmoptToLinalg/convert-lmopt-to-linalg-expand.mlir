// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// The attention mask stretched over the heads: a copy through the
// elementwise patterns' broadcasting map (a stretched dim of size 1 reads
// index 0).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @expand_heads
// CHECK-SAME: %[[X:.*]]: tensor<2x1x1x12xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4x1x12xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x1x1x12xf32>) outs(%[[E]] : tensor<2x4x1x12xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK: linalg.yield %[[A]]
// CHECK: return %[[R]]
func.func @expand_heads(%x: tensor<2x1x1x12xf32>) -> tensor<2x4x1x12xf32> {
  %shape = lmopt.constant dense<[2, 4, 1, 12]> : tensor<4xi64>
  %0 = lmopt.expand %x, %shape : (tensor<2x1x1x12xf32>, tensor<4xi64>) -> tensor<2x4x1x12xf32>
  return %0 : tensor<2x4x1x12xf32>
}

// -----

// New leading dims are not read; a dynamic dim whose shape entry is 1 keeps
// the input's size.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @expand_rank_dynamic
// CHECK-SAME: %[[X:.*]]: tensor<?x3xi64>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<5x?x3xi64>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.*}}]{{.*}} ins(%[[X]] : tensor<?x3xi64>) outs(%[[E]] : tensor<5x?x3xi64>)
func.func @expand_rank_dynamic(%x: tensor<?x3xi64>) -> tensor<5x?x3xi64> {
  %shape = lmopt.constant dense<[5, 1, 3]> : tensor<3xi64>
  %0 = lmopt.expand %x, %shape : (tensor<?x3xi64>, tensor<3xi64>) -> tensor<5x?x3xi64>
  return %0 : tensor<5x?x3xi64>
}

// -----

// A shape computed at run time may stretch a dynamic dim: not lowered.
// CHECK-LABEL: func.func @negative_expand_runtime_shape
// CHECK-NOT: linalg.generic
// CHECK: lmopt.expand
func.func @negative_expand_runtime_shape(%x: tensor<?x3xf32>, %shape: tensor<2xi64>) -> tensor<?x3xf32> {
  %0 = lmopt.expand %x, %shape : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// A dynamic input dim facing a static result size above 1 may be a run-time
// 1 that broadcasts, which a static map cannot express: not lowered.
// CHECK-LABEL: func.func @negative_expand_dynamic_to_static
// CHECK-NOT: linalg.generic
// CHECK: lmopt.expand
func.func @negative_expand_dynamic_to_static(%x: tensor<?x3xf32>) -> tensor<4x3xf32> {
  %shape = lmopt.constant dense<[4, 3]> : tensor<2xi64>
  %0 = lmopt.expand %x, %shape : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
