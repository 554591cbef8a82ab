// RUN: not lmopt-compile %s --dump-plan 2>&1 | FileCheck %s

// Ops with no CPU lowering are all reported, each with its node, and no plan
// is printed.

// CHECK-DAG: error: no CPU lowering for 'lmopt.abs' (node 'abs_i4'): result 0 has type tensor<2xi4>, not a static tensor of a runtime dtype
// CHECK-DAG: error: no CPU lowering for 'lmopt.neg' (node 'neg_i4'): result 0 has type tensor<2xi4>, not a static tensor of a runtime dtype
// CHECK-NOT: plan:

func.func @main(%a: tensor<2xi4>, %n: tensor<2xi4>) -> (tensor<2xi4>, tensor<2xi4>)
    attributes {lmopt.input_names = ["a", "n"], lmopt.output_names = ["y", "m"]} {
  %y = lmopt.abs %a : tensor<2xi4> loc("abs_i4")
  %m = lmopt.neg %n : tensor<2xi4> loc("neg_i4")
  return %y, %m : tensor<2xi4>, tensor<2xi4>
}
