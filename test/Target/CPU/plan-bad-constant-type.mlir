// RUN: not lmopt-compile %s --dump-plan 2>&1 | FileCheck %s

// A constant no runtime dtype can hold is an error only when a step or an
// output needs its bytes; here the output does.

// CHECK: error: constant of type 'tensor<2xi4>' cannot be stored in a bundle: not a static tensor of a runtime dtype
// CHECK-NOT: plan:

func.func @main(%x: tensor<2xf32>) -> tensor<2xi4> {
  %c = lmopt.constant dense<1> : tensor<2xi4>
  return %c : tensor<2xi4>
}
