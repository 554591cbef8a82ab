// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// Partial rotary embeddings (Phi, GPT-NeoX): only the first R entries of
// each head rotate, concat(rotary(heads[..., :R]), heads[..., R:]) on the
// head-split heads. The rotation moves above the head transpose as a whole
// one does (cos and sin transposed, one row per position), and the query
// and key are read packed.

// REPORT: fusion {{ *}}fused {{ *}}near misses
// REPORT-NEXT: attention {{ *}}1 {{ *}}0
// CHECK-LABEL: func @phi_partial_rotary
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x12x64xf32>, %[[KX:[^:]*]]: tensor<2x12x64xf32>, %[[VX:[^:]*]]: tensor<2x12x64xf32>
// CHECK-NOT: lmopt.softmax
// CHECK: %[[QH:.*]] = lmopt.reshape %[[X]], {{.*}} -> tensor<2x12x4x16xf32>
// CHECK: %[[QA:.*]] = lmopt.slice %[[QH]], {{.*}} -> tensor<2x12x4x8xf32>
// CHECK: %[[QR:.*]] = lmopt.rotary %[[QA]], {{.*}} -> tensor<2x12x4x8xf32>
// CHECK: %[[QB:.*]] = lmopt.slice %[[QH]], {{.*}} -> tensor<2x12x4x8xf32>
// CHECK: %[[QJ:.*]] = lmopt.concat %[[QR]], %[[QB]] {axis = 3 : i64}
// CHECK: %[[Q:.*]] = lmopt.reshape %[[QJ]], {{.*}} -> tensor<2x12x64xf32>
// CHECK: %[[K:.*]] = lmopt.reshape %{{.*}} -> tensor<2x12x64xf32>
// CHECK: %[[OUT:.*]] = lmopt.attention %[[Q]], %[[K]], %[[VX]] mask %{{[^ ]*}} {num_heads = 4 : i64, scale = 2.500000e-01 : f32}
// CHECK: return %[[OUT]]
func.func @phi_partial_rotary(%x: tensor<2x12x64xf32>, %kx: tensor<2x12x64xf32>, %vx: tensor<2x12x64xf32>, %cos: tensor<1x1x12x8xf32>, %sin: tensor<1x1x12x8xf32>, %mask: tensor<2x1x12x12xf32>) -> tensor<2x12x64xf32> {
  %hs = lmopt.constant dense<[2, 12, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[2, 12, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %c0 = lmopt.constant dense<0> : tensor<1xi64>
  %c8 = lmopt.constant dense<8> : tensor<1xi64>
  %end = lmopt.constant dense<9223372036854775807> : tensor<1xi64>
  %last = lmopt.constant dense<-1> : tensor<1xi64>
  %q1 = lmopt.reshape %x, %hs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %qa = lmopt.slice %q2, %c0, %c8 axes %last : (tensor<2x4x12x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x12x8xf32>
  %qb = lmopt.slice %q2, %c8, %end axes %last : (tensor<2x4x12x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x12x8xf32>
  %qr = lmopt.rotary %qa, %cos, %sin : (tensor<2x4x12x8xf32>, tensor<1x1x12x8xf32>, tensor<1x1x12x8xf32>) -> tensor<2x4x12x8xf32>
  %q3 = lmopt.concat %qr, %qb {axis = -1 : i64} : (tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) -> tensor<2x4x12x16xf32>
  %k1 = lmopt.reshape %kx, %hs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %ka = lmopt.slice %k2, %c0, %c8 axes %last : (tensor<2x4x12x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x12x8xf32>
  %kb = lmopt.slice %k2, %c8, %end axes %last : (tensor<2x4x12x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x12x8xf32>
  %kr = lmopt.rotary %ka, %cos, %sin : (tensor<2x4x12x8xf32>, tensor<1x1x12x8xf32>, tensor<1x1x12x8xf32>) -> tensor<2x4x12x8xf32>
  %k3 = lmopt.concat %kr, %kb {axis = 3 : i64} : (tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) -> tensor<2x4x12x16xf32>
  %k4 = lmopt.transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x12x16xf32> -> tensor<2x4x16x12xf32>
  %v1 = lmopt.reshape %vx, %hs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %s0 = lmopt.matmul %q3, %k4 : (tensor<2x4x12x16xf32>, tensor<2x4x16x12xf32>) -> tensor<2x4x12x12xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x4x12x12xf32>, tensor<f32>) -> tensor<2x4x12x12xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x4x12x12xf32>, tensor<2x1x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x4x12x12xf32> loc("phi_partial_rotary")
  %o0 = lmopt.matmul %p, %v2 : (tensor<2x4x12x12xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x12x16xf32>
  %o1 = lmopt.transpose %o0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x12x16xf32> -> tensor<2x12x4x16xf32>
  %o2 = lmopt.reshape %o1, %merged : (tensor<2x12x4x16xf32>, tensor<3xi64>) -> tensor<2x12x64xf32>
  return %o2 : tensor<2x12x64xf32>
}

// -----

// The query rotates the second half of each head: not the partial form
// (which rotates the first entries), so nothing moves and the attention
// stays decomposed.
// REPORT: attention {{ *}}0 {{ *}}1
// REPORT-NEXT: near miss: attention at 'negative_rotary_second_half': query heads come from 'lmopt.concat', not a reshape of a packed [B, S, H*D] tensor
// CHECK-LABEL: func @negative_rotary_second_half
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_rotary_second_half(%x: tensor<2x12x64xf32>, %kx: tensor<2x12x64xf32>, %vx: tensor<2x12x64xf32>, %cos: tensor<1x1x12x8xf32>, %sin: tensor<1x1x12x8xf32>, %mask: tensor<2x1x12x12xf32>) -> tensor<2x12x64xf32> {
  %hs = lmopt.constant dense<[2, 12, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[2, 12, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %c0 = lmopt.constant dense<0> : tensor<1xi64>
  %c8 = lmopt.constant dense<8> : tensor<1xi64>
  %end = lmopt.constant dense<9223372036854775807> : tensor<1xi64>
  %last = lmopt.constant dense<-1> : tensor<1xi64>
  %q1 = lmopt.reshape %x, %hs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %qa = lmopt.slice %q2, %c0, %c8 axes %last : (tensor<2x4x12x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x12x8xf32>
  %qb = lmopt.slice %q2, %c8, %end axes %last : (tensor<2x4x12x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x12x8xf32>
  %qr = lmopt.rotary %qb, %cos, %sin : (tensor<2x4x12x8xf32>, tensor<1x1x12x8xf32>, tensor<1x1x12x8xf32>) -> tensor<2x4x12x8xf32>
  %q3 = lmopt.concat %qa, %qr {axis = -1 : i64} : (tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) -> tensor<2x4x12x16xf32>
  %k1 = lmopt.reshape %kx, %hs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %ka = lmopt.slice %k2, %c0, %c8 axes %last : (tensor<2x4x12x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x12x8xf32>
  %kb = lmopt.slice %k2, %c8, %end axes %last : (tensor<2x4x12x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x12x8xf32>
  %kr = lmopt.rotary %ka, %cos, %sin : (tensor<2x4x12x8xf32>, tensor<1x1x12x8xf32>, tensor<1x1x12x8xf32>) -> tensor<2x4x12x8xf32>
  %k3 = lmopt.concat %kr, %kb {axis = 3 : i64} : (tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) -> tensor<2x4x12x16xf32>
  %k4 = lmopt.transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x12x16xf32> -> tensor<2x4x16x12xf32>
  %v1 = lmopt.reshape %vx, %hs : (tensor<2x12x64xf32>, tensor<4xi64>) -> tensor<2x12x4x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %s0 = lmopt.matmul %q3, %k4 : (tensor<2x4x12x16xf32>, tensor<2x4x16x12xf32>) -> tensor<2x4x12x12xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x4x12x12xf32>, tensor<f32>) -> tensor<2x4x12x12xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x4x12x12xf32>, tensor<2x1x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x4x12x12xf32> loc("negative_rotary_second_half")
  %o0 = lmopt.matmul %p, %v2 : (tensor<2x4x12x12xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x12x16xf32>
  %o1 = lmopt.transpose %o0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x12x16xf32> -> tensor<2x12x4x16xf32>
  %o2 = lmopt.reshape %o1, %merged : (tensor<2x12x4x16xf32>, tensor<3xi64>) -> tensor<2x12x64xf32>
  return %o2 : tensor<2x12x64xf32>
}
