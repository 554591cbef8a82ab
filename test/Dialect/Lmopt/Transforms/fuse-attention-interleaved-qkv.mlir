// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// The reordered projection computes what the interleaved one did: the
// graph of @neox_interleaved (Inputs/interleaved-qkv.mlir) evaluated as
// written and after the pass, on the same inputs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %lmopt_python -c "import numpy as np; r = np.random.default_rng(0); t = r.uniform(0, 6.3, (1, 1, 3, 2)).astype(np.float32); m = np.zeros((2, 1, 3, 3), np.float32); m[1, :, :, 2] = -1e9; np.savez('%t/in.npz', x=r.standard_normal((2, 3, 4)).astype(np.float32) * 0.1, cos=np.cos(t), sin=np.sin(t), mask=m)"
// RUN: lmopt-interpret %S/Inputs/interleaved-qkv.mlir --inputs %t/in.npz --output %t/before.npz
// RUN: lmopt-interpret %S/Inputs/interleaved-qkv.mlir --inputs %t/in.npz --pass-pipeline='builtin.module(func.func(lmopt-fuse-attention))' --compare %t/before.npz --rtol 1e-6 --atol 1e-6 | FileCheck %s --check-prefix=SAME
// SAME: PASS

// Q, K and V interleaved per head in one projection, as GPT-NeoX lays them
// out: reshape to [B, S, H, 3*D], heads transposed, then a Split (dynamo
// export) or a Slice per part (TorchScript export) of the last axis. The
// projection's columns (weight and bias, constants) are reordered at
// compile time from [H][3][D] to [3][H][D], so Q, K and V become slices of
// the projection; with the rotary embeddings moved above the head split,
// the whole fuses.
//
// Weight [4, 12] holds 0..47 / 64 row by row and the bias 100..111 / 64
// (exact in f32): column
// g*H*D + h*D + d of the new ones is h*3*D + g*D + d of the old, with H = 2
// and D = 2 the order 0 1 6 7 2 3 8 9 4 5 10 11.

// REPORT: fusion {{ *}}fused {{ *}}near misses
// REPORT-NEXT: attention {{ *}}1 {{ *}}0
// CHECK-LABEL: func @neox_interleaved
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x4xf32>
// CHECK-NOT: lmopt.split
// CHECK-DAG: %[[W:.*]] = lmopt.constant dense<{{\[}}[0.000000e+00, 1.562500e-02, 9.375000e-02, 1.093750e-01, 3.125000e-02, 4.687500e-02, 1.250000e-01, 1.406250e-01, 6.250000e-02, 7.812500e-02, 1.562500e-01, 1.718750e-01], [
// CHECK-DAG: %[[B:.*]] = lmopt.constant dense<[1.562500e+00, 1.578125, 1.656250e+00, 1.671875, 1.593750e+00, 1.609375, 1.687500e+00, 1.703125, 1.625000e+00, 1.640625, 1.718750e+00, 1.734375]> : tensor<12xf32>
// CHECK: %[[P0:.*]] = lmopt.matmul %[[X]], %[[W]]
// CHECK: %[[P:.*]] = lmopt.add %[[P0]], %[[B]]
// CHECK: %[[V:.*]] = lmopt.slice %[[P]], {{.*}} -> tensor<2x3x4xf32>
// CHECK: %[[OUT:.*]] = lmopt.attention %{{[0-9]+}}, %{{[0-9]+}}, %[[V]] mask %{{[^ ]*}} {num_heads = 2 : i64, scale = 5.000000e-01 : f32}
// CHECK: return %[[OUT]]
func.func @neox_interleaved(%x: tensor<2x3x4xf32>, %cos: tensor<1x1x3x2xf32>, %sin: tensor<1x1x3x2xf32>, %mask: tensor<2x1x3x3xf32>) -> tensor<2x3x4xf32>
    attributes {lmopt.input_names = ["x", "cos", "sin", "mask"],
                lmopt.output_names = ["context"]} {
  %w = lmopt.constant dense<[[0.0, 0.015625, 0.03125, 0.046875, 0.0625, 0.078125, 0.09375, 0.109375, 0.125, 0.140625, 0.15625, 0.171875], [0.1875, 0.203125, 0.21875, 0.234375, 0.25, 0.265625, 0.28125, 0.296875, 0.3125, 0.328125, 0.34375, 0.359375], [0.375, 0.390625, 0.40625, 0.421875, 0.4375, 0.453125, 0.46875, 0.484375, 0.5, 0.515625, 0.53125, 0.546875], [0.5625, 0.578125, 0.59375, 0.609375, 0.625, 0.640625, 0.65625, 0.671875, 0.6875, 0.703125, 0.71875, 0.734375]]> : tensor<4x12xf32>
  %b = lmopt.constant dense<[1.5625, 1.578125, 1.59375, 1.609375, 1.625, 1.640625, 1.65625, 1.671875, 1.6875, 1.703125, 1.71875, 1.734375]> : tensor<12xf32>
  %hs = lmopt.constant dense<[2, 3, 2, 6]> : tensor<4xi64>
  %merged = lmopt.constant dense<[2, 3, 4]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.5> : tensor<f32>
  %p0 = lmopt.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x12xf32>) -> tensor<2x3x12xf32>
  %p = lmopt.add %p0, %b : (tensor<2x3x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32>
  %g = lmopt.reshape %p, %hs : (tensor<2x3x12xf32>, tensor<4xi64>) -> tensor<2x3x2x6xf32>
  %t = lmopt.transpose %g {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x6xf32> -> tensor<2x2x3x6xf32>
  %parts:3 = lmopt.split %t {axis = 3 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<2x2x3x6xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>)
  %q = lmopt.rotary %parts#0, %cos, %sin : (tensor<2x2x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> tensor<2x2x3x2xf32>
  %k = lmopt.rotary %parts#1, %cos, %sin : (tensor<2x2x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> tensor<2x2x3x2xf32>
  %kt = lmopt.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x3x2xf32> -> tensor<2x2x2x3xf32>
  %s0 = lmopt.matmul %q, %kt : (tensor<2x2x3x2xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x3x3xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x2x3x3xf32>, tensor<f32>) -> tensor<2x2x3x3xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x3x3xf32>
  %pr = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x2x3x3xf32> loc("neox_interleaved")
  %c0 = lmopt.matmul %pr, %parts#2 : (tensor<2x2x3x3xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x2xf32> -> tensor<2x3x2x2xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x3x2x2xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %c2 : tensor<2x3x4xf32>
}

// -----

// The weight is an input: its columns cannot be reordered, nothing is
// rewritten, and the attention stays decomposed with a near miss.
// REPORT: attention {{ *}}0 {{ *}}1
// REPORT-NEXT: near miss: attention at 'negative_interleaved_runtime_weight': query heads come from 'lmopt.rotary', not a reshape of a packed [B, S, H*D] tensor
// CHECK-LABEL: func @negative_interleaved_runtime_weight
// CHECK: lmopt.split
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_interleaved_runtime_weight(%x: tensor<2x3x4xf32>, %w: tensor<4x12xf32>, %cos: tensor<1x1x3x2xf32>, %sin: tensor<1x1x3x2xf32>, %mask: tensor<2x1x3x3xf32>) -> tensor<2x3x4xf32>
    attributes {lmopt.input_names = ["x", "w", "cos", "sin", "mask"],
                lmopt.output_names = ["context"]} {
  %b = lmopt.constant dense<[1.5625, 1.578125, 1.59375, 1.609375, 1.625, 1.640625, 1.65625, 1.671875, 1.6875, 1.703125, 1.71875, 1.734375]> : tensor<12xf32>
  %hs = lmopt.constant dense<[2, 3, 2, 6]> : tensor<4xi64>
  %merged = lmopt.constant dense<[2, 3, 4]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.5> : tensor<f32>
  %p0 = lmopt.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x12xf32>) -> tensor<2x3x12xf32>
  %p = lmopt.add %p0, %b : (tensor<2x3x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32>
  %g = lmopt.reshape %p, %hs : (tensor<2x3x12xf32>, tensor<4xi64>) -> tensor<2x3x2x6xf32>
  %t = lmopt.transpose %g {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x6xf32> -> tensor<2x2x3x6xf32>
  %parts:3 = lmopt.split %t {axis = 3 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<2x2x3x6xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>)
  %q = lmopt.rotary %parts#0, %cos, %sin : (tensor<2x2x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> tensor<2x2x3x2xf32>
  %k = lmopt.rotary %parts#1, %cos, %sin : (tensor<2x2x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> tensor<2x2x3x2xf32>
  %kt = lmopt.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x3x2xf32> -> tensor<2x2x2x3xf32>
  %s0 = lmopt.matmul %q, %kt : (tensor<2x2x3x2xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x3x3xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x2x3x3xf32>, tensor<f32>) -> tensor<2x2x3x3xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x3x3xf32>
  %pr = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x2x3x3xf32> loc("negative_interleaved_runtime_weight")
  %c0 = lmopt.matmul %pr, %parts#2 : (tensor<2x2x3x3xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x2xf32> -> tensor<2x3x2x2xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x3x2x2xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %c2 : tensor<2x3x4xf32>
}
