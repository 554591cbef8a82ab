// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s
// RUN: lmopt-compile %s --dump-kernels 2>/dev/null | FileCheck %s --check-prefix=KERNELS

// Consecutive ops without a library step become one kernel that returns only
// what later steps read: `scale` and `shift` are one kernel, and `scaled`
// stays inside it. The linear splits the run, so `act` and `out` are a second
// kernel. Constants of at most 64 elements (and splats) are cloned into the
// kernel; the 100-element `bias` is passed as a weight.

// CHECK-LABEL: plan:
// CHECK-DAG: tensor %[[X:[0-9]+]] = input 0 'x' f32 [4, 100]
// CHECK-DAG: tensor %[[BIAS:[0-9]+]] = weight @{{[0-9]+}} 'bias' f32 [100]
// CHECK-DAG: tensor %[[SHIFTED:[0-9]+]] = arena @{{[0-9]+}} 'shift' f32 [4, 100]
// CHECK-DAG: tensor %[[H:[0-9]+]] = arena @{{[0-9]+}} 'fc' f32 [4, 100]
// CHECK-DAG: tensor %[[OUT:[0-9]+]] = arena @{{[0-9]+}} 'out' f32 [4, 100]
// CHECK: step 0: kernel 'scale' (%[[X]], %[[BIAS]]) -> (%[[SHIFTED]]) {entry = "k0"}
// CHECK: step 1: linear 'fc' (%[[SHIFTED]], %{{[0-9]+}}) -> (%[[H]])
// CHECK: step 2: kernel 'act' (%[[H]], %[[BIAS]]) -> (%[[OUT]]) {entry = "k1"}
// CHECK-NOT: step 3

// KERNELS-LABEL: func.func @k0
// KERNELS-SAME: (%[[X:.*]]: tensor<4x100xf32>, %[[BIAS:.*]]: tensor<100xf32>) -> tensor<4x100xf32>
// KERNELS: %[[TWO:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// KERNELS: %[[SCALED:.*]] = lmopt.mul %[[X]], %[[TWO]]
// KERNELS: %[[SHIFTED:.*]] = lmopt.add %[[SCALED]], %[[BIAS]]
// KERNELS: return %[[SHIFTED]]
// KERNELS-LABEL: func.func @k1
// KERNELS-SAME: (%[[H:.*]]: tensor<4x100xf32>, %[[BIAS:.*]]: tensor<100xf32>) -> tensor<4x100xf32>
// KERNELS: %[[SMALL:.*]] = arith.constant dense<{{\[}}[1.000000e+00], [2.000000e+00], [3.000000e+00], [4.000000e+00]]> : tensor<4x1xf32>
// KERNELS: %[[ACT:.*]] = lmopt.exp %[[H]]
// KERNELS: %[[MUL:.*]] = lmopt.mul %[[ACT]], %[[SMALL]]
// KERNELS: %[[OUT:.*]] = lmopt.sub %[[MUL]], %[[BIAS]]
// KERNELS: return %[[OUT]]

func.func @main(%x: tensor<4x100xf32>) -> tensor<4x100xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %two = lmopt.constant dense<2.0> : tensor<f32> loc("two")
  %bias = lmopt.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0]> : tensor<100xf32> loc("bias")
  %small = lmopt.constant dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32> loc("small")
  %w = lmopt.constant dense<0.5> : tensor<100x100xf32> loc("w")
  %scaled = lmopt.mul %x, %two : (tensor<4x100xf32>, tensor<f32>) -> tensor<4x100xf32> loc("scale")
  %shifted = lmopt.add %scaled, %bias : (tensor<4x100xf32>, tensor<100xf32>) -> tensor<4x100xf32> loc("shift")
  %h = lmopt.linear %shifted, %w : (tensor<4x100xf32>, tensor<100x100xf32>) -> tensor<4x100xf32> loc("fc")
  %act = lmopt.exp %h : tensor<4x100xf32> loc("act")
  %m = lmopt.mul %act, %small : (tensor<4x100xf32>, tensor<4x1xf32>) -> tensor<4x100xf32> loc("mul")
  %out = lmopt.sub %m, %bias : (tensor<4x100xf32>, tensor<100xf32>) -> tensor<4x100xf32> loc("out")
  return %out : tensor<4x100xf32>
}
