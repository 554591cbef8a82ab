// RUN: not lmopt-compile %s --dump-plan 2>&1 | FileCheck %s

// CHECK: error: '{{.*}}negative_no-main.mlir' has no func.func @main to compile

func.func @other(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
