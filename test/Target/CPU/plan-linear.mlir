// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s

// Linear steps carry their epilogue as attributes; weights are Weight
// tensors. `fc3`'s residual `fc2` dies there, so fc3 writes over it in place
// (same offset, an alias of it); `fc4` also reads its residual as its input,
// so it gets a buffer of its own.

// CHECK-LABEL: plan:
// CHECK-DAG: tensor %[[X:[0-9]+]] = input 0 'x' f32 [4, 8]
// CHECK-DAG: tensor %[[W1:[0-9]+]] = weight @{{[0-9]+}} 'w1' f32 [8, 8]
// CHECK-DAG: tensor %[[B1:[0-9]+]] = weight @{{[0-9]+}} 'b1' f32 [8]
// CHECK-DAG: tensor %[[H:[0-9]+]] = arena @{{[0-9]+}} 'fc1' f32 [4, 8]
// CHECK-DAG: tensor %[[W2:[0-9]+]] = weight @{{[0-9]+}} 'w2' f32 [8, 8]
// CHECK-DAG: tensor %[[R:[0-9]+]] = arena @[[ROFF:[0-9]+]] 'fc2' f32 [4, 8]
// CHECK-DAG: tensor %[[Z:[0-9]+]] = arena @[[ROFF]] 'fc3' f32 [4, 8] alias of %[[R]]
// CHECK-DAG: tensor %[[Y:[0-9]+]] = arena @{{[0-9]+}} 'fc4' f32 [4, 8]{{$}}
// CHECK: input 'x' = %[[X]]
// CHECK: output 'y' = %[[Y]]
// CHECK: step 0: linear 'fc1' (%[[X]], %[[W1]], %[[B1]]) -> (%[[H]]) {transpose_weight = 0, activation = 2, has_bias = 1, has_residual = 0}
// CHECK: step 1: linear 'fc2' (%[[X]], %[[W2]]) -> (%[[R]]) {transpose_weight = 1, activation = 1, has_bias = 0, has_residual = 0}
// CHECK: step 2: linear 'fc3' (%[[H]], %[[W1]], %[[B1]], %[[R]]) -> (%[[Z]]) {transpose_weight = 0, activation = 3, has_bias = 1, has_residual = 1}
// CHECK: step 3: linear 'fc4' (%[[Z]], %[[W2]], %[[Z]]) -> (%[[Y]]) {transpose_weight = 0, activation = 0, has_bias = 0, has_residual = 1}
// CHECK-NOT: step 4

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %w1 = lmopt.constant dense<0.5> : tensor<8x8xf32> loc("w1")
  %b1 = lmopt.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32> loc("b1")
  %w2 = lmopt.constant dense<0.25> : tensor<8x8xf32> loc("w2")
  %h = lmopt.linear %x, %w1 bias %b1 {activation = #lmopt.activation<gelu>}
      : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> loc("fc1")
  %r = lmopt.linear %x, %w2 {activation = #lmopt.activation<relu>, transpose_weight = true}
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc2")
  %z = lmopt.linear %h, %w1 bias %b1 residual %r {activation = #lmopt.activation<gelu_tanh>}
      : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("fc3")
  %y = lmopt.linear %z, %w2 residual %z
      : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("fc4")
  return %y : tensor<4x8xf32>
}
