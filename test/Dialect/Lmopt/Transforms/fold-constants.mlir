// RUN: lmopt-opt %S/Inputs/fold-constants.mlir -lmopt-fold-constants | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-fold-constants | FileCheck %s --check-prefix=NEG

// The layer norm, the projection and the transpose of constants become one
// constant (the constants it was computed from go); the product with the
// run-time queries stays.
// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[KT:.*]] = lmopt.constant dense_resource<{{.*}}> : tensor<8x6xf32>
// CHECK-NEXT: lmopt.matmul %arg0, %[[KT]]
// CHECK-NOT: lmopt.layer_norm
// CHECK-NOT: lmopt.linear
// CHECK-NOT: lmopt.transpose

// The folded graph computes what the graph did (the linear in f32, the
// rest in double rounded to f32).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %lmopt_python -c "import numpy as np; np.savez('%t/in.npz', q=np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32))"
// RUN: lmopt-interpret %S/Inputs/fold-constants.mlir --inputs %t/in.npz --output %t/before.npz
// RUN: lmopt-interpret %S/Inputs/fold-constants.mlir --inputs %t/in.npz --pass-pipeline='builtin.module(func.func(lmopt-fold-constants))' --compare %t/before.npz --rtol 1e-6 --atol 1e-6 | FileCheck %s --check-prefix=SAME
// SAME: PASS

// A concat of copies of one constant (an imported Tile) would grow the
// model: it stays, as does an expand.
// NEG-LABEL: func.func @growing
// NEG: lmopt.concat %[[C:.*]], %[[C]], %[[C]], %[[C]]
// NEG: lmopt.expand
func.func @growing() -> (tensor<16x8xf32>, tensor<4x4x8xf32>) {
  %c = lmopt.constant dense<0.5> : tensor<4x8xf32>
  %shape = lmopt.constant dense<[4, 4, 8]> : tensor<3xi64>
  %tiled = lmopt.concat %c, %c, %c, %c {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %wide = lmopt.expand %c, %shape : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<4x4x8xf32>
  return %tiled, %wide : tensor<16x8xf32>, tensor<4x4x8xf32>
}

// -----

// An op that reads a run-time value, or yields a dynamic or non-f32
// result, stays.
// NEG-LABEL: func.func @not_constant
// NEG: lmopt.add %arg0
// NEG: lmopt.shape
// NEG: lmopt.cast
func.func @not_constant(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<2xi64>, tensor<4x8xi32>) {
  %c = lmopt.constant dense<0.5> : tensor<4x8xf32>
  %sum = lmopt.add %x, %c : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %shape = lmopt.shape %c : tensor<4x8xf32> -> tensor<2xi64>
  %ints = lmopt.cast %c : tensor<4x8xf32> -> tensor<4x8xi32>
  return %sum, %shape, %ints : tensor<?x8xf32>, tensor<2xi64>, tensor<4x8xi32>
}

// -----

// A reshape of a model constant stays a view of its bytes, and a constant
// above 64 KiB that something else reads too is not stored a second time
// transposed.
// NEG-LABEL: func.func @views_and_shared
// NEG: lmopt.reshape %[[W:.*]], %{{.*}}
// NEG: lmopt.transpose %[[BIG:[^ ]*]]
// NEG: return {{.*}}, %[[BIG]]
func.func @views_and_shared() -> (tensor<32xf32>, tensor<160x128xf32>, tensor<128x160xf32>) {
  %w = lmopt.constant dense<0.25> : tensor<4x8xf32>
  %flat = lmopt.constant dense<[32]> : tensor<1xi64>
  %big = lmopt.constant dense<0.5> : tensor<128x160xf32>
  %wf = lmopt.reshape %w, %flat : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<32xf32>
  %bt = lmopt.transpose %big {perm = array<i64: 1, 0>} : tensor<128x160xf32> -> tensor<160x128xf32>
  return %wf, %bt, %big : tensor<32xf32>, tensor<160x128xf32>, tensor<128x160xf32>
}
