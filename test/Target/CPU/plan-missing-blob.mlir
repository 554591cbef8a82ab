// RUN: not lmopt-compile %s --dump-plan 2>&1 | FileCheck %s

// A dense_resource constant whose blob the file does not define is an error
// at the constant.

// CHECK: error: constant's dense_resource blob 'missing' has no data
// CHECK-NOT: plan:

func.func @main(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
  %w = lmopt.constant dense_resource<missing> : tensor<4x2xf32>
  %y = lmopt.linear %x, %w : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}
