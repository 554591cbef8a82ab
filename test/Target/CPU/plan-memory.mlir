// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s
// RUN: lmopt-compile %s --dump-plan 2>/dev/null | %lmopt_python %S/Inputs/check_plan.py --expect-reuse | FileCheck %s --check-prefix=VALID

// A chain of intermediates: `l1` is dead once `l2` has read it, so `l3`
// takes its bytes; `l2`'s go to `l4`, the output. The checker recomputes the
// live ranges and verifies that no two live buffers overlap and that the
// arena is smaller than the sum of the intermediates.

// CHECK-LABEL: plan:
// CHECK-DAG: tensor %{{[0-9]+}} = arena @[[A:[0-9]+]] 'l1' f32 [8, 32]
// CHECK-DAG: tensor %{{[0-9]+}} = arena @[[B:[0-9]+]] 'l2' f32 [8, 32]
// CHECK-DAG: tensor %{{[0-9]+}} = arena @[[A]] 'l3' f32 [8, 32]
// CHECK-DAG: tensor %{{[0-9]+}} = arena @[[B]] 'l4' f32 [8, 32]

// VALID: plan ok: {{.*}}, arena < naive

func.func @main(%x: tensor<8x32xf32>) -> tensor<8x32xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %w = lmopt.constant dense<0.125> : tensor<32x32xf32> loc("w")
  %l1 = lmopt.linear %x, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32> loc("l1")
  %l2 = lmopt.linear %l1, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32> loc("l2")
  %l3 = lmopt.linear %l2, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32> loc("l3")
  %l4 = lmopt.linear %l3, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32> loc("l4")
  return %l4 : tensor<8x32xf32>
}
