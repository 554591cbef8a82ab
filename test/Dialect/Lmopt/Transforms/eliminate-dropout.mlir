// RUN: lmopt-opt %s -lmopt-eliminate-dropout -split-input-file | FileCheck %s

// CHECK-LABEL: func @inference_dropout
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf32>, %[[W:.*]]: tensor<64x64xf32>)
// CHECK-NOT: lmopt.dropout
// CHECK: %[[Y:.*]] = lmopt.matmul %[[X]], %[[W]]
// CHECK: return %[[Y]]
func.func @inference_dropout(%x: tensor<?x16x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x16x64xf32> {
  %0:2 = lmopt.dropout %x {ratio = 0.1 : f32} : (tensor<?x16x64xf32>) -> (tensor<?x16x64xf32>, tensor<?x16x64xi1>)
  %1 = lmopt.matmul %0#0, %w : (tensor<?x16x64xf32>, tensor<64x64xf32>) -> tensor<?x16x64xf32>
  return %1 : tensor<?x16x64xf32>
}

// -----

// A used mask with dynamic dims becomes an all-true tensor of the input's
// run-time shape.
// CHECK-LABEL: func @dynamic_mask_used
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK: %[[SHAPE:.*]] = lmopt.shape %[[X]] : tensor<?x8xf32> -> tensor<2xi64>
// CHECK: %[[MASK:.*]] = lmopt.constant_of_shape %[[SHAPE]], true : tensor<2xi64> -> tensor<?x8xi1>
// CHECK-NOT: lmopt.dropout
// CHECK: return %[[X]], %[[MASK]]
func.func @dynamic_mask_used(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi1>) {
  %0:2 = lmopt.dropout %x {ratio = 0.5 : f32, training = false} : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi1>)
  return %0#0, %0#1 : tensor<?x8xf32>, tensor<?x8xi1>
}

// -----

// CHECK-LABEL: func @static_mask_used
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[MASK:.*]] = lmopt.constant dense<true> : tensor<2x8xi1>
// CHECK-NOT: lmopt.dropout
// CHECK: return %[[X]], %[[MASK]]
func.func @static_mask_used(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi1>) {
  %0:2 = lmopt.dropout %x : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi1>)
  return %0#0, %0#1 : tensor<2x8xf32>, tensor<2x8xi1>
}

// -----

// CHECK-LABEL: func @negative_training_dropout
// CHECK: %[[OUT:.*]], %{{.*}} = lmopt.dropout %{{.*}} {ratio = 1.000000e-01 : f32, training = true}
// CHECK: return %[[OUT]]
func.func @negative_training_dropout(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0:2 = lmopt.dropout %x {ratio = 0.1 : f32, training = true} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi1>)
  return %0#0 : tensor<2x8xf32>
}
