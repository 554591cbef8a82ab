// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// Identity is its operand.
// CHECK-LABEL: func.func @identity
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>
// CHECK-NOT: lmopt.identity
// CHECK: return %[[X]], %[[X]]
func.func @identity(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = lmopt.identity %x : tensor<4xf32>
  %1 = lmopt.identity %0 : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Constants keep their attribute: dense, splat, and dense_resource (model
// weights), whose blob stays in the resource section.
// CHECK-LABEL: func.func @constants
// CHECK: %[[D:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[S:.*]] = arith.constant dense<true> : tensor<2x3xi1>
// CHECK: %[[R:.*]] = arith.constant dense_resource<weights> : tensor<2xi64>
// CHECK: return %[[D]], %[[S]], %[[R]]
// CHECK: weights: "0x0800000001000000000000000200000000000000"
func.func @constants() -> (tensor<2xf32>, tensor<2x3xi1>, tensor<2xi64>) {
  %0 = lmopt.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = lmopt.constant dense<true> : tensor<2x3xi1>
  %2 = lmopt.constant dense_resource<weights> : tensor<2xi64>
  return %0, %1, %2 : tensor<2xf32>, tensor<2x3xi1>, tensor<2xi64>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x0800000001000000000000000200000000000000"
    }
  }
#-}
