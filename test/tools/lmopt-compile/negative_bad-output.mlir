// RUN: rm -rf %t && mkdir -p %t
// RUN: not lmopt-compile %s -o %t/missing/model.lmopt 2>&1 | FileCheck %s
// RUN: ls %t | count 0

// A bundle that cannot be written is an error naming the path, and nothing
// is left behind.

// CHECK: error: cannot write '{{.*}}missing/model.lmopt'

func.func @main(%x: tensor<2x8xf32>) -> tensor<2x4xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %w = lmopt.constant dense<0.5> : tensor<8x4xf32>
  %y = lmopt.linear %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
