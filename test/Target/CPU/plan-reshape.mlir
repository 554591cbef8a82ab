// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s

// Static reshapes take no step: the result names its operand's bytes (an
// arena alias, or a weight at the same offset). A model input is the one
// exception: the plan has one tensor per input, so its reshape is a copy.

// CHECK-LABEL: plan:
// CHECK-DAG: tensor %[[X:[0-9]+]] = input 0 'x' f32 [2, 16]
// CHECK-DAG: tensor %[[XR:[0-9]+]] = arena @{{[0-9]+}} 'x_flat' f32 [32]{{$}}
// CHECK-DAG: tensor %[[W:[0-9]+]] = weight @[[WOFF:[0-9]+]] 'w' f32 [16, 2]
// CHECK-DAG: tensor %[[WR:[0-9]+]] = weight @[[WOFF]] 'w_flat' f32 [32]
// CHECK-DAG: tensor %[[H:[0-9]+]] = arena @[[HOFF:[0-9]+]] 'fc' f32 [2, 2]
// CHECK-DAG: tensor %[[HR:[0-9]+]] = arena @[[HOFF]] 'h_3d' f32 [2, 1, 2] alias of %[[H]]
// CHECK-DAG: tensor %[[HS:[0-9]+]] = arena @[[HOFF]] 'h_2d' f32 [2, 2] alias of %[[H]]
// CHECK: step 0: copy 'x_flat' (%[[X]]) -> (%[[XR]])
// CHECK: step 1: kernel 'add' (%[[XR]], %[[WR]]) -> ({{.*}}) {entry = "k0"}
// CHECK: step 2: linear 'fc' (%[[X]], %[[W]]) -> (%[[H]])
// CHECK: step 3: kernel 'relu' (%[[HS]]) -> ({{.*}}) {entry = "k1"}
// CHECK-NOT: step 4

func.func @main(%x: tensor<2x16xf32>) -> (tensor<32xf32>, tensor<2x2xf32>)
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["sum", "act"]} {
  %w = lmopt.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0], [11.0, 12.0], [13.0, 14.0], [15.0, 16.0], [17.0, 18.0], [19.0, 20.0], [21.0, 22.0], [23.0, 24.0], [25.0, 26.0], [27.0, 28.0], [29.0, 30.0], [31.0, 32.0]]> : tensor<16x2xf32> loc("w")
  %flat = lmopt.constant dense<[32]> : tensor<1xi64>
  %s3 = lmopt.constant dense<[2, 1, 2]> : tensor<3xi64>
  %xf = lmopt.reshape %x, %flat : (tensor<2x16xf32>, tensor<1xi64>) -> tensor<32xf32> loc("x_flat")
  %wf = lmopt.reshape %w, %flat : (tensor<16x2xf32>, tensor<1xi64>) -> tensor<32xf32> loc("w_flat")
  %sum = lmopt.add %xf, %wf : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32> loc("add")
  %h = lmopt.linear %x, %w : (tensor<2x16xf32>, tensor<16x2xf32>) -> tensor<2x2xf32> loc("fc")
  %h3 = lmopt.reshape %h, %s3 : (tensor<2x2xf32>, tensor<3xi64>) -> tensor<2x1x2xf32> loc("h_3d")
  %h2 = lmopt.squeeze %h3 {axes = array<i64: 1>} : tensor<2x1x2xf32> -> tensor<2x2xf32> loc("h_2d")
  %act = lmopt.relu %h2 : tensor<2x2xf32> loc("relu")
  return %sum, %act : tensor<32xf32>, tensor<2x2xf32>
}
