// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// Shapes pinned to a batch of one (`--input-shape input_ids:1x128`): the
// static unit batch must stay its own dim when the hidden dim is split into
// heads, not merge into the sequence dim.

// REPORT: attention {{ *}}1 {{ *}}0
// REPORT-NOT: near miss:
// REPORT: attention {{ *}}0 {{ *}}1
// REPORT-NEXT: near miss: attention at {{.*}}: query heads are not a transpose of [B, S, H, D]

// CHECK-LABEL: func @bert_batch_one
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x8x64xf32>, %[[K:[^:]*]]: tensor<1x8x64xf32>, %[[V:[^:]*]]: tensor<1x8x64xf32>, %[[MASK:[^:]*]]: tensor<1x1x8x8xf32>)
// CHECK-NOT: lmopt.softmax
// CHECK: %[[OUT:.*]] = lmopt.attention %[[Q]], %[[K]], %[[V]] mask %[[MASK]] {num_heads = 4 : i64, scale = 2.500000e-01 : f32}
// CHECK: return %[[OUT]]
func.func @bert_batch_one(%q: tensor<1x8x64xf32>, %k: tensor<1x8x64xf32>, %v: tensor<1x8x64xf32>, %mask: tensor<1x1x8x8xf32>) -> tensor<1x8x64xf32> {
  %heads = lmopt.constant dense<[1, 8, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[1, 8, 64]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.25> : tensor<f32>
  %q1 = lmopt.reshape %q, %heads : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<1x8x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x4x16xf32> -> tensor<1x4x8x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<1x8x4x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x4x16xf32> -> tensor<1x4x16x8xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<1x8x4x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x4x16xf32> -> tensor<1x4x8x16xf32>
  %s = lmopt.matmul %q2, %k2 : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  %s1 = lmopt.mul %s, %scale : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p = lmopt.softmax %s2 {axis = 3 : i64} : tensor<1x4x8x8xf32>
  %c0 = lmopt.matmul %p, %v2 : (tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x8x16xf32> -> tensor<1x8x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<1x8x4x16xf32>, tensor<3xi64>) -> tensor<1x8x64xf32>
  return %c2 : tensor<1x8x64xf32>
}

// -----

// negative_: the unit dim is not where the batch was: [1, 8, 64] reshaped
// to [8, 1, 4, 16] moves the sequence into the batch position, which no
// transpose of [B, S, H, D] gives; the report says so.
// CHECK-LABEL: func @negative_unit_moved
// CHECK: lmopt.softmax
func.func @negative_unit_moved(%q: tensor<1x8x64xf32>, %k: tensor<1x8x64xf32>, %v: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %heads = lmopt.constant dense<[8, 1, 4, 16]> : tensor<4xi64>
  %kheads = lmopt.constant dense<[1, 8, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[1, 8, 64]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<8x1x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 1, 2, 0, 3>} : tensor<8x1x4x16xf32> -> tensor<1x4x8x16xf32>
  %k1 = lmopt.reshape %k, %kheads : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<1x8x4x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x4x16xf32> -> tensor<1x4x16x8xf32>
  %v1 = lmopt.reshape %v, %kheads : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<1x8x4x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x4x16xf32> -> tensor<1x4x8x16xf32>
  %s = lmopt.matmul %q2, %k2 : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  %p = lmopt.softmax %s {axis = 3 : i64} : tensor<1x4x8x8xf32>
  %c0 = lmopt.matmul %p, %v2 : (tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x8x16xf32> -> tensor<1x8x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<1x8x4x16xf32>, tensor<3xi64>) -> tensor<1x8x64xf32>
  return %c2 : tensor<1x8x64xf32>
}
