// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// Grouped-query attention as Llama exports it (test/models/onnx/llama.onnx,
// transcribed with constant shapes): rotary embeddings applied to the split
// heads of the query and key, and repeat_kv (unsqueeze, expand, reshape)
// giving each key/value head to a group of query heads. A group count that
// does not divide the query heads is the verifier's (invalid.mlir): the
// scores matmul of such a graph does not broadcast either.

// The rotary embeddings move above the head split, the rotated query and key
// are read packed, and repeat_kv becomes num_kv_heads: the key and value
// heads are read in place, never repeated.
// REPORT: fusion {{ *}}fused {{ *}}near misses
// REPORT-NEXT: attention {{ *}}1 {{ *}}0
// CHECK-LABEL: func @llama_gqa
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x12x64xf32>, %[[KX:[^:]*]]: tensor<2x12x32xf32>, %[[VX:[^:]*]]: tensor<2x12x32xf32>, %[[COS:[^:]*]]: tensor<1x1x12x16xf32>, %[[SIN:[^:]*]]: tensor<1x1x12x16xf32>, %[[MASK:[^:]*]]: tensor<2x1x12x12xf32>)
// CHECK-NOT: lmopt.expand
// CHECK-NOT: lmopt.softmax
// CHECK-DAG: %[[QR:.*]] = lmopt.rotary {{.*}} -> tensor<2x12x4x16xf32>
// CHECK-DAG: %[[Q:.*]] = lmopt.reshape %[[QR]], {{.*}} -> tensor<2x12x64xf32>
// CHECK-DAG: %[[KR:.*]] = lmopt.rotary {{.*}} -> tensor<2x12x2x16xf32>
// CHECK-DAG: %[[K:.*]] = lmopt.reshape %[[KR]], {{.*}} -> tensor<2x12x32xf32>
// CHECK: %[[OUT:.*]] = lmopt.attention %[[Q]], %[[K]], %[[VX]] mask %[[MASK]] {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<2x12x64xf32>, tensor<2x12x32xf32>, tensor<2x12x32xf32>, tensor<2x1x12x12xf32>) -> tensor<2x12x64xf32>
// CHECK: return %[[OUT]]
func.func @llama_gqa(%x: tensor<2x12x64xf32>, %kx: tensor<2x12x32xf32>, %vx: tensor<2x12x32xf32>, %cos: tensor<1x1x12x16xf32>, %sin: tensor<1x1x12x16xf32>, %mask: tensor<2x1x12x12xf32>) -> tensor<2x12x64xf32> {
  %qs = lmopt.constant dense<[2, 12, 4, 16]> : tensor<4xi64>
  %ks = lmopt.constant dense<[2, 12, 2, 16]> : tensor<4xi64>
  %vs = lmopt.constant dense<[2, 12, 2, 16]> : tensor<4xi64>
  %ke = lmopt.constant dense<[2, 2, 2, 12, 16]> : tensor<5xi64>
  %kr = lmopt.constant dense<[2, 4, 12, 16]> : tensor<4xi64>
  %ve = lmopt.constant dense<[2, 2, 2, 12, 16]> : tensor<5xi64>
  %vr = lmopt.constant dense<[2, 4, 12, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[2, 12, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %q1 = lmopt.reshape %x, %qs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %q3 = lmopt.rotary %q2, %cos, %sin : (tensor<2x4x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x4x12x16xf32>
  %k1 = lmopt.reshape %kx, %ks : (tensor<2x12x32xf32>, tensor<4xi64>) -> tensor<2x12x2x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x2x16xf32> -> tensor<2x2x12x16xf32>
  %k3 = lmopt.rotary %k2, %cos, %sin : (tensor<2x2x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x2x12x16xf32>
  %k4 = lmopt.unsqueeze %k3 {axes = array<i64: 2>} : tensor<2x2x12x16xf32> -> tensor<2x2x1x12x16xf32>
  %k5 = lmopt.expand %k4, %ke : (tensor<2x2x1x12x16xf32>, tensor<5xi64>) -> tensor<2x2x2x12x16xf32>
  %k6 = lmopt.reshape %k5, %kr : (tensor<2x2x2x12x16xf32>, tensor<4xi64>) -> tensor<2x4x12x16xf32>
  %k7 = lmopt.transpose %k6 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x12x16xf32> -> tensor<2x4x16x12xf32>
  %v1 = lmopt.reshape %vx, %vs : (tensor<2x12x32xf32>, tensor<4xi64>) -> tensor<2x12x2x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x2x16xf32> -> tensor<2x2x12x16xf32>
  %v4 = lmopt.unsqueeze %v2 {axes = array<i64: 2>} : tensor<2x2x12x16xf32> -> tensor<2x2x1x12x16xf32>
  %v5 = lmopt.expand %v4, %ve : (tensor<2x2x1x12x16xf32>, tensor<5xi64>) -> tensor<2x2x2x12x16xf32>
  %v6 = lmopt.reshape %v5, %vr : (tensor<2x2x2x12x16xf32>, tensor<4xi64>) -> tensor<2x4x12x16xf32>
  %s0 = lmopt.matmul %q3, %k7 : (tensor<2x4x12x16xf32>, tensor<2x4x16x12xf32>) -> tensor<2x4x12x12xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x4x12x12xf32>, tensor<f32>) -> tensor<2x4x12x12xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x4x12x12xf32>, tensor<2x1x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x4x12x12xf32> loc("llama_gqa")
  %c0 = lmopt.matmul %p, %v6 : (tensor<2x4x12x12xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x12x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x12x16xf32> -> tensor<2x12x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x12x4x16xf32>, tensor<3xi64>) -> tensor<2x12x64xf32>
  return %c2 : tensor<2x12x64xf32>
}

// -----

// The value heads are expanded to a shape known only at run time: nothing
// proves that the expand repeats them rather than broadcasting other dims.
// REPORT: attention {{ *}}0 {{ *}}1
// REPORT-NEXT: near miss: attention at 'negative_gqa_runtime_repeat': value heads come from 'lmopt.reshape', not a reshape of a packed [B, S, H*D] tensor
// CHECK-LABEL: func @negative_gqa_runtime_repeat
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_gqa_runtime_repeat(%x: tensor<2x12x64xf32>, %kx: tensor<2x12x32xf32>, %vx: tensor<2x12x32xf32>, %cos: tensor<1x1x12x16xf32>, %sin: tensor<1x1x12x16xf32>, %mask: tensor<2x1x12x12xf32>, %ve: tensor<5xi64>) -> tensor<2x12x64xf32> {
  %qs = lmopt.constant dense<[2, 12, 4, 16]> : tensor<4xi64>
  %ks = lmopt.constant dense<[2, 12, 2, 16]> : tensor<4xi64>
  %vs = lmopt.constant dense<[2, 12, 2, 16]> : tensor<4xi64>
  %ke = lmopt.constant dense<[2, 2, 2, 12, 16]> : tensor<5xi64>
  %kr = lmopt.constant dense<[2, 4, 12, 16]> : tensor<4xi64>
  %vr = lmopt.constant dense<[2, 4, 12, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[2, 12, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %q1 = lmopt.reshape %x, %qs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %q3 = lmopt.rotary %q2, %cos, %sin : (tensor<2x4x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x4x12x16xf32>
  %k1 = lmopt.reshape %kx, %ks : (tensor<2x12x32xf32>, tensor<4xi64>) -> tensor<2x12x2x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x2x16xf32> -> tensor<2x2x12x16xf32>
  %k3 = lmopt.rotary %k2, %cos, %sin : (tensor<2x2x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x2x12x16xf32>
  %k4 = lmopt.unsqueeze %k3 {axes = array<i64: 2>} : tensor<2x2x12x16xf32> -> tensor<2x2x1x12x16xf32>
  %k5 = lmopt.expand %k4, %ke : (tensor<2x2x1x12x16xf32>, tensor<5xi64>) -> tensor<2x2x2x12x16xf32>
  %k6 = lmopt.reshape %k5, %kr : (tensor<2x2x2x12x16xf32>, tensor<4xi64>) -> tensor<2x4x12x16xf32>
  %k7 = lmopt.transpose %k6 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x12x16xf32> -> tensor<2x4x16x12xf32>
  %v1 = lmopt.reshape %vx, %vs : (tensor<2x12x32xf32>, tensor<4xi64>) -> tensor<2x12x2x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x2x16xf32> -> tensor<2x2x12x16xf32>
  %v4 = lmopt.unsqueeze %v2 {axes = array<i64: 2>} : tensor<2x2x12x16xf32> -> tensor<2x2x1x12x16xf32>
  %v5 = lmopt.expand %v4, %ve : (tensor<2x2x1x12x16xf32>, tensor<5xi64>) -> tensor<2x2x2x12x16xf32>
  %v6 = lmopt.reshape %v5, %vr : (tensor<2x2x2x12x16xf32>, tensor<4xi64>) -> tensor<2x4x12x16xf32>
  %s0 = lmopt.matmul %q3, %k7 : (tensor<2x4x12x16xf32>, tensor<2x4x16x12xf32>) -> tensor<2x4x12x12xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x4x12x12xf32>, tensor<f32>) -> tensor<2x4x12x12xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x4x12x12xf32>, tensor<2x1x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x4x12x12xf32> loc("negative_gqa_runtime_repeat")
  %c0 = lmopt.matmul %p, %v6 : (tensor<2x4x12x12xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x12x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x12x16xf32> -> tensor<2x12x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x12x4x16xf32>, tensor<3xi64>) -> tensor<2x12x64xf32>
  return %c2 : tensor<2x12x64xf32>
}

// -----

// Heads tiled (unsqueeze at axis 1: query head h reads key head h % 2)
// instead of repeated (h / 2): not repeat_kv.
// REPORT: attention {{ *}}0 {{ *}}1
// REPORT-NEXT: near miss: attention at 'negative_gqa_tiled': key heads come from 'lmopt.reshape', not a reshape of a packed [B, S, H*D] tensor
// CHECK-LABEL: func @negative_gqa_tiled
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_gqa_tiled(%x: tensor<2x12x64xf32>, %kx: tensor<2x12x32xf32>, %vx: tensor<2x12x32xf32>, %cos: tensor<1x1x12x16xf32>, %sin: tensor<1x1x12x16xf32>, %mask: tensor<2x1x12x12xf32>) -> tensor<2x12x64xf32> {
  %qs = lmopt.constant dense<[2, 12, 4, 16]> : tensor<4xi64>
  %ks = lmopt.constant dense<[2, 12, 2, 16]> : tensor<4xi64>
  %vs = lmopt.constant dense<[2, 12, 2, 16]> : tensor<4xi64>
  %ke = lmopt.constant dense<[2, 2, 2, 12, 16]> : tensor<5xi64>
  %kr = lmopt.constant dense<[2, 4, 12, 16]> : tensor<4xi64>
  %ve = lmopt.constant dense<[2, 2, 2, 12, 16]> : tensor<5xi64>
  %vr = lmopt.constant dense<[2, 4, 12, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[2, 12, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %q1 = lmopt.reshape %x, %qs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %q3 = lmopt.rotary %q2, %cos, %sin : (tensor<2x4x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x4x12x16xf32>
  %k1 = lmopt.reshape %kx, %ks : (tensor<2x12x32xf32>, tensor<4xi64>) -> tensor<2x12x2x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x2x16xf32> -> tensor<2x2x12x16xf32>
  %k3 = lmopt.rotary %k2, %cos, %sin : (tensor<2x2x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x2x12x16xf32>
  %k4 = lmopt.unsqueeze %k3 {axes = array<i64: 1>} : tensor<2x2x12x16xf32> -> tensor<2x1x2x12x16xf32>
  %k5 = lmopt.expand %k4, %ke : (tensor<2x1x2x12x16xf32>, tensor<5xi64>) -> tensor<2x2x2x12x16xf32>
  %k6 = lmopt.reshape %k5, %kr : (tensor<2x2x2x12x16xf32>, tensor<4xi64>) -> tensor<2x4x12x16xf32>
  %k7 = lmopt.transpose %k6 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x12x16xf32> -> tensor<2x4x16x12xf32>
  %v1 = lmopt.reshape %vx, %vs : (tensor<2x12x32xf32>, tensor<4xi64>) -> tensor<2x12x2x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x2x16xf32> -> tensor<2x2x12x16xf32>
  %v4 = lmopt.unsqueeze %v2 {axes = array<i64: 2>} : tensor<2x2x12x16xf32> -> tensor<2x2x1x12x16xf32>
  %v5 = lmopt.expand %v4, %ve : (tensor<2x2x1x12x16xf32>, tensor<5xi64>) -> tensor<2x2x2x12x16xf32>
  %v6 = lmopt.reshape %v5, %vr : (tensor<2x2x2x12x16xf32>, tensor<4xi64>) -> tensor<2x4x12x16xf32>
  %s0 = lmopt.matmul %q3, %k7 : (tensor<2x4x12x16xf32>, tensor<2x4x16x12xf32>) -> tensor<2x4x12x12xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x4x12x12xf32>, tensor<f32>) -> tensor<2x4x12x12xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x4x12x12xf32>, tensor<2x1x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x4x12x12xf32> loc("negative_gqa_tiled")
  %c0 = lmopt.matmul %p, %v6 : (tensor<2x4x12x12xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x12x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x12x16xf32> -> tensor<2x12x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x12x4x16xf32>, tensor<3xi64>) -> tensor<2x12x64xf32>
  return %c2 : tensor<2x12x64xf32>
}
