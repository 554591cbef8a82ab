// RUN: not lmopt-compile %s --dump-plan 2>&1 | FileCheck %s

// Ops with no CPU lowering are all reported, each with its node, and no plan
// is printed.

// CHECK-DAG: error: no CPU lowering for 'lmopt.dynamic_quantize_linear' (node 'quantize_x')
// CHECK-DAG: error: no CPU lowering for 'lmopt.matmul_integer' (node 'int8_matmul')
// CHECK-DAG: error: no CPU lowering for 'lmopt.neg' (node 'neg_i4'): result 0 has type tensor<2xi4>, not a static tensor of a runtime dtype
// CHECK-NOT: plan:

func.func @main(%x: tensor<2x4xf32>, %n: tensor<2xi4>) -> (tensor<2x3xi32>, tensor<2xi4>)
    attributes {lmopt.input_names = ["x", "n"], lmopt.output_names = ["y", "m"]} {
  %w = lmopt.constant dense<1> : tensor<4x3xi8>
  %q, %scale, %zp = lmopt.dynamic_quantize_linear %x
      : tensor<2x4xf32> -> (tensor<2x4xui8>, tensor<f32>, tensor<ui8>) loc("quantize_x")
  %y = lmopt.matmul_integer %q, %w a_zero_point %zp
      : (tensor<2x4xui8>, tensor<4x3xi8>, tensor<ui8>) -> tensor<2x3xi32> loc("int8_matmul")
  %m = lmopt.neg %n : tensor<2xi4> loc("neg_i4")
  return %y, %m : tensor<2x3xi32>, tensor<2xi4>
}
