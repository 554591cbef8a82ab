// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// Q, K and V taken from one [B, S, 3, H, D] reshape of a packed QKV
// projection, as ModernBERT exports it (its `unbind` becomes a Split in
// the TorchScript export and one Slice per part in the dynamo export),
// with rotary embeddings on the query and key heads. Each part becomes a
// slice of the projection's last dim (which the attention step reads in
// place) and the whole fuses.

// REPORT: fusion {{ *}}fused {{ *}}near misses
// REPORT-NEXT: attention {{ *}}1 {{ *}}0
// CHECK-LABEL: func @modernbert_split
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x12x192xf32>, %{{[^:]*}}: tensor<1x1x12x16xf32>, %{{[^:]*}}: tensor<1x1x12x16xf32>, %[[MASK:[^:]*]]: tensor<2x1x12x12xf32>)
// CHECK-NOT: lmopt.split
// CHECK-NOT: lmopt.squeeze
// CHECK-DAG: %[[C0:.*]] = lmopt.constant dense<0> : tensor<1xi64>
// CHECK-DAG: %[[C64:.*]] = lmopt.constant dense<64> : tensor<1xi64>
// CHECK-DAG: %[[C128:.*]] = lmopt.constant dense<128> : tensor<1xi64>
// CHECK-DAG: %[[C192:.*]] = lmopt.constant dense<192> : tensor<1xi64>
// CHECK-DAG: %[[AXIS:.*]] = lmopt.constant dense<2> : tensor<1xi64>
// CHECK-DAG: %[[HEADS:.*]] = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
// CHECK-DAG: %[[QP:.*]] = lmopt.slice %[[X]], %[[C0]], %[[C64]] axes %[[AXIS]] {{.*}} -> tensor<2x12x64xf32>
// CHECK-DAG: %[[KP:.*]] = lmopt.slice %[[X]], %[[C64]], %[[C128]] axes %[[AXIS]] {{.*}} -> tensor<2x12x64xf32>
// CHECK-DAG: %[[V:.*]] = lmopt.slice %[[X]], %[[C128]], %[[C192]] axes %[[AXIS]] {{.*}} -> tensor<2x12x64xf32>
// CHECK-DAG: %[[QH:.*]] = lmopt.reshape %[[QP]], %[[HEADS]]
// CHECK-DAG: %[[KH:.*]] = lmopt.reshape %[[KP]], %[[HEADS]]
// CHECK-DAG: %[[QR:.*]] = lmopt.rotary %[[QH]],
// CHECK-DAG: %[[KR:.*]] = lmopt.rotary %[[KH]],
// CHECK-DAG: %[[Q:.*]] = lmopt.reshape %[[QR]], {{.*}} -> tensor<2x12x64xf32>
// CHECK-DAG: %[[K:.*]] = lmopt.reshape %[[KR]], {{.*}} -> tensor<2x12x64xf32>
// CHECK: %[[OUT:.*]] = lmopt.attention %[[Q]], %[[K]], %[[V]] mask %[[MASK]] {num_heads = 4 : i64, scale = 2.500000e-01 : f32}
// CHECK: return %[[OUT]]
func.func @modernbert_split(%x: tensor<2x12x192xf32>, %cos: tensor<1x1x12x16xf32>, %sin: tensor<1x1x12x16xf32>, %mask: tensor<2x1x12x12xf32>) -> tensor<2x12x64xf32> {
  %grouped = lmopt.constant dense<[2, 12, 3, 4, 16]> : tensor<5xi64>
  %merged = lmopt.constant dense<[2, 12, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %g = lmopt.reshape %x, %grouped : (tensor<2x12x192xf32>, tensor<5xi64>) -> tensor<2x12x3x4x16xf32>
  %parts:3 = lmopt.split %g {axis = 2 : i64, split_sizes = array<i64: 1, 1, 1>} : (tensor<2x12x3x4x16xf32>) -> (tensor<2x12x1x4x16xf32>, tensor<2x12x1x4x16xf32>, tensor<2x12x1x4x16xf32>)
  %q0 = lmopt.squeeze %parts#0 {axes = array<i64: -3>} : tensor<2x12x1x4x16xf32> -> tensor<2x12x4x16xf32>
  %k0 = lmopt.squeeze %parts#1 {axes = array<i64: -3>} : tensor<2x12x1x4x16xf32> -> tensor<2x12x4x16xf32>
  %v0 = lmopt.squeeze %parts#2 {axes = array<i64: 2>} : tensor<2x12x1x4x16xf32> -> tensor<2x12x4x16xf32>
  %q1 = lmopt.transpose %q0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %k1 = lmopt.transpose %k0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %v1 = lmopt.transpose %v0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %q2 = lmopt.rotary %q1, %cos, %sin : (tensor<2x4x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x4x12x16xf32>
  %k2 = lmopt.rotary %k1, %cos, %sin : (tensor<2x4x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x4x12x16xf32>
  %k3 = lmopt.transpose %k2 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x12x16xf32> -> tensor<2x4x16x12xf32>
  %s0 = lmopt.matmul %q2, %k3 : (tensor<2x4x12x16xf32>, tensor<2x4x16x12xf32>) -> tensor<2x4x12x12xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x4x12x12xf32>, tensor<f32>) -> tensor<2x4x12x12xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x4x12x12xf32>, tensor<2x1x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x4x12x12xf32> loc("modernbert_split")
  %c0 = lmopt.matmul %p, %v1 : (tensor<2x4x12x12xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x12x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x12x16xf32> -> tensor<2x12x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x12x4x16xf32>, tensor<3xi64>) -> tensor<2x12x64xf32>
  return %c2 : tensor<2x12x64xf32>
}

// -----

// The dynamo export's form: a Slice per part, the last one open-ended.
// REPORT: attention {{ *}}1 {{ *}}0
// CHECK-LABEL: func @modernbert_slices
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x12x192xf32>
// CHECK-NOT: lmopt.squeeze
// CHECK: lmopt.slice %[[X]], {{.*}} -> tensor<2x12x64xf32>
// CHECK: lmopt.slice %[[X]], {{.*}} -> tensor<2x12x64xf32>
// CHECK: %[[V:[0-9]+]] = lmopt.slice %[[X]], {{.*}} -> tensor<2x12x64xf32>
// CHECK: %[[OUT:[0-9]+]] = lmopt.attention %{{[0-9]+}}, %{{[0-9]+}}, %[[V]] mask %{{.*}} {num_heads = 4 : i64, scale = 2.500000e-01 : f32}
// CHECK: return %[[OUT]]
func.func @modernbert_slices(%x: tensor<2x12x192xf32>, %cos: tensor<1x1x12x16xf32>, %sin: tensor<1x1x12x16xf32>, %mask: tensor<2x1x12x12xf32>) -> tensor<2x12x64xf32> {
  %grouped = lmopt.constant dense<[2, 12, 3, 4, 16]> : tensor<5xi64>
  %merged = lmopt.constant dense<[2, 12, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %g = lmopt.reshape %x, %grouped : (tensor<2x12x192xf32>, tensor<5xi64>) -> tensor<2x12x3x4x16xf32>
  %i0 = lmopt.constant dense<0> : tensor<1xi64>
  %i1 = lmopt.constant dense<1> : tensor<1xi64>
  %i2 = lmopt.constant dense<2> : tensor<1xi64>
  %end = lmopt.constant dense<9223372036854775807> : tensor<1xi64>
  %axis = lmopt.constant dense<-3> : tensor<1xi64>
  %pq = lmopt.slice %g, %i0, %i1 axes %axis : (tensor<2x12x3x4x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x12x1x4x16xf32>
  %pk = lmopt.slice %g, %i1, %i2 axes %axis : (tensor<2x12x3x4x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x12x1x4x16xf32>
  %pv = lmopt.slice %g, %i2, %end axes %axis : (tensor<2x12x3x4x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x12x1x4x16xf32>
  %q0 = lmopt.squeeze %pq {axes = array<i64: -3>} : tensor<2x12x1x4x16xf32> -> tensor<2x12x4x16xf32>
  %k0 = lmopt.squeeze %pk {axes = array<i64: -3>} : tensor<2x12x1x4x16xf32> -> tensor<2x12x4x16xf32>
  %v0 = lmopt.squeeze %pv {axes = array<i64: 2>} : tensor<2x12x1x4x16xf32> -> tensor<2x12x4x16xf32>
  %q1 = lmopt.transpose %q0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %k1 = lmopt.transpose %k0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %v1 = lmopt.transpose %v0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x12x4x16xf32> -> tensor<2x4x12x16xf32>
  %q2 = lmopt.rotary %q1, %cos, %sin : (tensor<2x4x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x4x12x16xf32>
  %k2 = lmopt.rotary %k1, %cos, %sin : (tensor<2x4x12x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32>) -> tensor<2x4x12x16xf32>
  %k3 = lmopt.transpose %k2 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x12x16xf32> -> tensor<2x4x16x12xf32>
  %s0 = lmopt.matmul %q2, %k3 : (tensor<2x4x12x16xf32>, tensor<2x4x16x12xf32>) -> tensor<2x4x12x12xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x4x12x12xf32>, tensor<f32>) -> tensor<2x4x12x12xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x4x12x12xf32>, tensor<2x1x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x4x12x12xf32> loc("modernbert_slices")
  %c0 = lmopt.matmul %p, %v1 : (tensor<2x4x12x12xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x12x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x12x16xf32> -> tensor<2x12x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x12x4x16xf32>, tensor<3xi64>) -> tensor<2x12x64xf32>
  return %c2 : tensor<2x12x64xf32>
}

// -----

// Run-time batch and sequence (a bounded compile): the grouped reshape and
// the context reshape read them from the projection's shape, and both are
// proven to keep them through the slices.
// REPORT: attention {{ *}}1 {{ *}}0
// CHECK-LABEL: func @modernbert_runtime_shapes
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x192xf32>, %[[MASK:[^:]*]]: tensor<?x1x?x?xf32>)
// CHECK: %[[Q:[0-9]+]] = lmopt.slice %[[X]], {{.*}} -> tensor<?x?x64xf32>
// CHECK: %[[K:[0-9]+]] = lmopt.slice %[[X]], {{.*}} -> tensor<?x?x64xf32>
// CHECK: %[[V:[0-9]+]] = lmopt.slice %[[X]], {{.*}} -> tensor<?x?x64xf32>
// CHECK: %[[OUT:[0-9]+]] = lmopt.attention %[[Q]], %[[K]], %[[V]] mask %[[MASK]] {num_heads = 4 : i64, scale = 2.500000e-01 : f32}
// CHECK: return %[[OUT]]
func.func @modernbert_runtime_shapes(%x: tensor<?x?x192xf32>, %mask: tensor<?x1x?x?xf32>) -> tensor<?x?x64xf32> {
  %i0 = lmopt.constant dense<0> : tensor<i64>
  %i1 = lmopt.constant dense<1> : tensor<i64>
  %three = lmopt.constant dense<3> : tensor<1xi64>
  %minus1 = lmopt.constant dense<-1> : tensor<1xi64>
  %d = lmopt.constant dense<16> : tensor<1xi64>
  %p0 = lmopt.constant dense<0> : tensor<1xi64>
  %p1 = lmopt.constant dense<1> : tensor<1xi64>
  %p2 = lmopt.constant dense<2> : tensor<1xi64>
  %p3 = lmopt.constant dense<3> : tensor<1xi64>
  %axis = lmopt.constant dense<2> : tensor<1xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %shape = lmopt.shape %x : tensor<?x?x192xf32> -> tensor<3xi64>
  %batch = lmopt.gather %shape, %i0 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %seq = lmopt.gather %shape, %i1 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %b1 = lmopt.unsqueeze %batch {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %s1 = lmopt.unsqueeze %seq {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %grouped = lmopt.concat %b1, %s1, %three, %minus1, %d {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi64>
  %merged = lmopt.concat %b1, %s1, %minus1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %g = lmopt.reshape %x, %grouped : (tensor<?x?x192xf32>, tensor<5xi64>) -> tensor<?x?x3x?x16xf32>
  %pq = lmopt.slice %g, %p0, %p1 axes %axis : (tensor<?x?x3x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x1x?x16xf32>
  %pk = lmopt.slice %g, %p1, %p2 axes %axis : (tensor<?x?x3x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x1x?x16xf32>
  %pv = lmopt.slice %g, %p2, %p3 axes %axis : (tensor<?x?x3x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x1x?x16xf32>
  %q0 = lmopt.squeeze %pq {axes = array<i64: -3>} : tensor<?x?x1x?x16xf32> -> tensor<?x?x?x16xf32>
  %k0 = lmopt.squeeze %pk {axes = array<i64: -3>} : tensor<?x?x1x?x16xf32> -> tensor<?x?x?x16xf32>
  %v0 = lmopt.squeeze %pv {axes = array<i64: -3>} : tensor<?x?x1x?x16xf32> -> tensor<?x?x?x16xf32>
  %q1 = lmopt.transpose %q0 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x16xf32> -> tensor<?x?x?x16xf32>
  %k1 = lmopt.transpose %k0 {perm = array<i64: 0, 2, 3, 1>} : tensor<?x?x?x16xf32> -> tensor<?x?x16x?xf32>
  %v1 = lmopt.transpose %v0 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x16xf32> -> tensor<?x?x?x16xf32>
  %sc0 = lmopt.matmul %q1, %k1 : (tensor<?x?x?x16xf32>, tensor<?x?x16x?xf32>) -> tensor<?x?x?x?xf32>
  %sc1 = lmopt.mul %sc0, %scale : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %sc2 = lmopt.add %sc1, %mask : (tensor<?x?x?x?xf32>, tensor<?x1x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = lmopt.softmax %sc2 {axis = -1 : i64} : tensor<?x?x?x?xf32> loc("modernbert_runtime_shapes")
  %c0 = lmopt.matmul %p, %v1 : (tensor<?x?x?x?xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x16xf32> -> tensor<?x?x?x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<?x?x?x16xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  return %c2 : tensor<?x?x64xf32>
}

// -----

// The reshape regroups the batch and sequence ([2, 12] as [12, 2]): the
// parts are no slices of a [B, S, H*D] projection, nothing is rewritten
// and the attention stays decomposed with a near miss.
// REPORT: attention {{ *}}0 {{ *}}1
// REPORT-NEXT: near miss: attention at 'negative_regrouped': query heads come from 'lmopt.squeeze', not a reshape of a packed [B, S, H*D] tensor
// CHECK-LABEL: func @negative_regrouped
// CHECK: lmopt.split
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_regrouped(%x: tensor<2x12x192xf32>, %cos: tensor<1x1x2x16xf32>, %sin: tensor<1x1x2x16xf32>, %mask: tensor<12x1x2x2xf32>) -> tensor<12x2x64xf32> {
  %grouped = lmopt.constant dense<[12, 2, 3, 4, 16]> : tensor<5xi64>
  %merged = lmopt.constant dense<[12, 2, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %g = lmopt.reshape %x, %grouped : (tensor<2x12x192xf32>, tensor<5xi64>) -> tensor<12x2x3x4x16xf32>
  %parts:3 = lmopt.split %g {axis = 2 : i64, split_sizes = array<i64: 1, 1, 1>} : (tensor<12x2x3x4x16xf32>) -> (tensor<12x2x1x4x16xf32>, tensor<12x2x1x4x16xf32>, tensor<12x2x1x4x16xf32>)
  %q0 = lmopt.squeeze %parts#0 {axes = array<i64: 2>} : tensor<12x2x1x4x16xf32> -> tensor<12x2x4x16xf32>
  %k0 = lmopt.squeeze %parts#1 {axes = array<i64: 2>} : tensor<12x2x1x4x16xf32> -> tensor<12x2x4x16xf32>
  %v0 = lmopt.squeeze %parts#2 {axes = array<i64: 2>} : tensor<12x2x1x4x16xf32> -> tensor<12x2x4x16xf32>
  %q1 = lmopt.transpose %q0 {perm = array<i64: 0, 2, 1, 3>} : tensor<12x2x4x16xf32> -> tensor<12x4x2x16xf32>
  %k1 = lmopt.transpose %k0 {perm = array<i64: 0, 2, 3, 1>} : tensor<12x2x4x16xf32> -> tensor<12x4x16x2xf32>
  %v1 = lmopt.transpose %v0 {perm = array<i64: 0, 2, 1, 3>} : tensor<12x2x4x16xf32> -> tensor<12x4x2x16xf32>
  %s0 = lmopt.matmul %q1, %k1 : (tensor<12x4x2x16xf32>, tensor<12x4x16x2xf32>) -> tensor<12x4x2x2xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<12x4x2x2xf32>, tensor<f32>) -> tensor<12x4x2x2xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<12x4x2x2xf32>, tensor<12x1x2x2xf32>) -> tensor<12x4x2x2xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<12x4x2x2xf32> loc("negative_regrouped")
  %c0 = lmopt.matmul %p, %v1 : (tensor<12x4x2x2xf32>, tensor<12x4x2x16xf32>) -> tensor<12x4x2x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<12x4x2x16xf32> -> tensor<12x2x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<12x2x4x16xf32>, tensor<3xi64>) -> tensor<12x2x64xf32>
  return %c2 : tensor<12x2x64xf32>
}
