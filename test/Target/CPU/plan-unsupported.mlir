// RUN: not lmopt-compile %s --dump-plan 2>&1 | FileCheck %s

// Ops with no CPU lowering are all reported, each with its node, and no plan
// is printed.

// CHECK-DAG: error: no CPU lowering for 'lmopt.gemm' (node 'gemm_ta')
// CHECK-DAG: error: no CPU lowering for 'lmopt.neg' (node 'neg_i4'): result 0 has type tensor<2xi4>, not a static tensor of a runtime dtype
// CHECK-NOT: plan:

func.func @main(%x: tensor<4x2xf32>, %w: tensor<4x3xf32>, %n: tensor<2xi4>) -> (tensor<2x3xf32>, tensor<2xi4>)
    attributes {lmopt.input_names = ["x", "w", "n"], lmopt.output_names = ["y", "m"]} {
  %c = lmopt.constant dense<1.0> : tensor<3xf32>
  %y = lmopt.gemm %x, %w, %c {alpha = 2.0 : f32, trans_a = true}
      : (tensor<4x2xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("gemm_ta")
  %m = lmopt.neg %n : tensor<2xi4> loc("neg_i4")
  return %y, %m : tensor<2x3xf32>, tensor<2xi4>
}
