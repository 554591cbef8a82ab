// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s
// RUN: lmopt-compile %s --dump-kernels 2>/dev/null | FileCheck %s --check-prefix=KERNELS
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=4x8x64:float32 input1=4x8x64:float32 input2=64:float32 input3=32x64:float32
// RUN: lmopt-interpret %s --function=main --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-compile %s -o %t.lmopt
// RUN: lmopt-run %t.lmopt --inputs %t.npz --compare %t.ref.npz --threads 3 | FileCheck %s --check-prefix=SAME
// RUN: strings %t.lmopt | FileCheck %s --check-prefix=PARTS

// A layer norm's backward with its parameter gradients, as a training step
// computes it: the input gradient is a loop over rows, the weight gradient
// a sum over rows of dy * x_hat, and both read x_hat and the row
// statistics. The group is cut in two: first every op but the column sums
// (a row loop that also writes x_hat and dy, which the sums read), then the
// sums (one loop each over blocks of columns), so that both kernels have a
// partitioned entry. After the linear, a layer norm next to a column sum of
// an unrelated input stays one kernel: no sum reads a row reduction.

// CHECK-LABEL: plan:
// CHECK: step 0: kernel 'ln_grad' ({{.*}}) -> (%[[DY:[0-9]+]], %[[XHAT:[0-9]+]], %[[DX:[0-9]+]]) {entry = "k0"}
// CHECK: step 1: kernel '{{.*}}' ({{.*}}%[[DY]], %[[XHAT]]{{.*}}) -> (%[[DBETA:[0-9]+]], %[[DGAMMA:[0-9]+]]) {entry = "k1"}
// CHECK: step 2: linear
// CHECK: step 3: kernel '{{.*}}' ({{.*}}) -> ({{.*}}) {entry = "k2"}
// CHECK-NOT: step 4

// The first kernel has the row statistics and no column sum; the second
// only the sums and the product they read.
// KERNELS-LABEL: func.func @k0
// KERNELS: lmopt.reduce_mean {{.*}} {axes = array<i64: 2>}
// KERNELS-NOT: axes = array<i64: 0, 1>
// KERNELS: return
// KERNELS-LABEL: func.func @k1
// KERNELS-NOT: lmopt.reduce_mean
// KERNELS: lmopt.reduce_sum {{.*}} {axes = array<i64: 0, 1>, keepdims = false}
// KERNELS: lmopt.mul
// KERNELS: lmopt.reduce_sum {{.*}} {axes = array<i64: 0, 1>, keepdims = false}
// KERNELS: return
// KERNELS-LABEL: func.func @k2
// KERNELS: lmopt.layer_norm
// KERNELS: lmopt.reduce_sum {{.*}} {axes = array<i64: 0>, keepdims = false}

// SAME: PASS: 4 outputs

// Both kernels of the cut group are split between threads (uncut, the
// group had no partitioned entry).
// PARTS-DAG: __lmopt_part_k0
// PARTS-DAG: __lmopt_part_k1

func.func @main(%dy0: tensor<4x8x64xf32>, %x: tensor<4x8x64xf32>, %gamma: tensor<64xf32>, %h: tensor<32x64xf32>) -> (tensor<4x8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<32x64xf32>)
    attributes {lmopt.input_names = ["input0", "input1", "input2", "input3"], lmopt.output_names = ["output0", "output1", "output2", "output3"]} {
  %eps = lmopt.constant dense<1.0e-12> : tensor<f32> loc("eps")
  %two = lmopt.constant dense<2.0> : tensor<f32> loc("two")
  %dy = lmopt.mul %dy0, %two : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %mean = lmopt.reduce_mean %x {axes = array<i64: 2>} : tensor<4x8x64xf32> -> tensor<4x8x1xf32> loc("ln_grad")
  %xc = lmopt.sub %x, %mean : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %sq = lmopt.mul %xc, %xc : (tensor<4x8x64xf32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %var = lmopt.reduce_mean %sq {axes = array<i64: 2>} : tensor<4x8x64xf32> -> tensor<4x8x1xf32> loc("ln_grad")
  %ve = lmopt.add %var, %eps : (tensor<4x8x1xf32>, tensor<f32>) -> tensor<4x8x1xf32> loc("ln_grad")
  %sd = lmopt.sqrt %ve : tensor<4x8x1xf32> loc("ln_grad")
  %rstd = lmopt.reciprocal %sd : tensor<4x8x1xf32> loc("ln_grad")
  %xhat = lmopt.mul %xc, %rstd : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %dbeta = lmopt.reduce_sum %dy {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x8x64xf32> -> tensor<64xf32> loc("ln_grad")
  %t = lmopt.mul %dy, %xhat : (tensor<4x8x64xf32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %dgamma = lmopt.reduce_sum %t {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x8x64xf32> -> tensor<64xf32> loc("ln_grad")
  %g = lmopt.mul %dy, %gamma : (tensor<4x8x64xf32>, tensor<64xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %gm = lmopt.reduce_mean %g {axes = array<i64: 2>} : tensor<4x8x64xf32> -> tensor<4x8x1xf32> loc("ln_grad")
  %gx = lmopt.mul %g, %xhat : (tensor<4x8x64xf32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %gxm = lmopt.reduce_mean %gx {axes = array<i64: 2>} : tensor<4x8x64xf32> -> tensor<4x8x1xf32> loc("ln_grad")
  %p = lmopt.mul %xhat, %gxm : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %d1 = lmopt.sub %g, %gm : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %d2 = lmopt.sub %d1, %p : (tensor<4x8x64xf32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %dx = lmopt.mul %rstd, %d2 : (tensor<4x8x1xf32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32> loc("ln_grad")
  %w = lmopt.constant dense<0.25> : tensor<64x64xf32> loc("w")
  %y = lmopt.linear %h, %w : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32> loc("fc")
  %n = lmopt.layer_norm %y, %gamma {epsilon = 1.0e-5 : f32} : (tensor<32x64xf32>, tensor<64xf32>) -> tensor<32x64xf32> loc("norm")
  %hs = lmopt.reduce_sum %h {axes = array<i64: 0>, keepdims = false} : tensor<32x64xf32> -> tensor<64xf32> loc("norm")
  %out = lmopt.add %n, %hs : (tensor<32x64xf32>, tensor<64xf32>) -> tensor<32x64xf32> loc("norm")
  return %dx, %dgamma, %dbeta, %out : tensor<4x8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<32x64xf32>
}
