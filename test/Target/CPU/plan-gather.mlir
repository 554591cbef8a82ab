// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s

// Gather steps read data and indices, with the axis made non-negative; a
// scalar index constant is a weight like any other constant a step reads.

// CHECK-LABEL: plan:
// CHECK-DAG: tensor %[[IDS:[0-9]+]] = input 0 'ids' i64 [2, 3]
// CHECK-DAG: tensor %[[TABLE:[0-9]+]] = weight @{{[0-9]+}} 'table' f32 [10, 4]
// CHECK-DAG: tensor %[[EMB:[0-9]+]] = arena @{{[0-9]+}} 'embed' f32 [2, 3, 4]
// CHECK-DAG: tensor %[[ZERO:[0-9]+]] = weight @{{[0-9]+}} 'zero' i32 []
// CHECK-DAG: tensor %[[FIRST:[0-9]+]] = arena @{{[0-9]+}} 'first' f32 [2, 4]
// CHECK: step 0: gather 'embed' (%[[TABLE]], %[[IDS]]) -> (%[[EMB]]) {axis = 0}
// CHECK: step 1: gather 'first' (%[[EMB]], %[[ZERO]]) -> (%[[FIRST]]) {axis = 1}

func.func @main(%ids: tensor<2x3xi64>) -> tensor<2x4xf32>
    attributes {lmopt.input_names = ["ids"], lmopt.output_names = ["out"]} {
  %table = lmopt.constant dense<1.0> : tensor<10x4xf32> loc("table")
  %zero = lmopt.constant dense<0> : tensor<i32> loc("zero")
  %e = lmopt.gather %table, %ids : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32> loc("embed")
  %f = lmopt.gather %e, %zero {axis = -2 : i64} : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<2x4xf32> loc("first")
  return %f : tensor<2x4xf32>
}
