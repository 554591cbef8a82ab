// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s

// Each output owns an arena tensor: an input or a constant returned as is is
// copied into the arena at the end of the plan.

// CHECK-DAG: tensor %[[X:[0-9]+]] = input 0 'x' f32 [2, 2]
// CHECK-DAG: tensor %[[C:[0-9]+]] = weight @0 '{{.*}}' f32 [2, 2]
// CHECK-DAG: tensor %[[XC:[0-9]+]] = arena @{{[0-9]+}} 'same' f32 [2, 2]
// CHECK-DAG: tensor %[[CC:[0-9]+]] = arena @{{[0-9]+}} 'const' f32 [2, 2]
// CHECK: output 'same' = %[[XC]]
// CHECK: output 'const' = %[[CC]]
// CHECK: step 0: copy 'same' (%[[X]]) -> (%[[XC]])
// CHECK: step 1: copy 'const' (%[[C]]) -> (%[[CC]])
// CHECK-NOT: step 2

func.func @main(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["same", "const"]} {
  %c = lmopt.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  return %x, %c : tensor<2x2xf32>, tensor<2x2xf32>
}
