// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-attention --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// A relative-position score bias added to the scores before the softmax
// (T5, MPNet) becomes attention's `bias` operand. Inputs follow the
// TorchScript and dynamo exports of T5EncoderModel and MPNetModel
// (scripts/model_zoo.py) op for op, heads and shapes made static.
// The report is per split: the four positive cases fuse with no near miss,
// each negative one is a near miss that says why.
// REPORT-COUNT-4: attention {{ *}}1 {{ *}}0
// REPORT: attention {{ *}}0 {{ *}}1
// REPORT-NEXT: near miss: attention at 'after_softmax': attention probabilities feed 'lmopt.add', not the context matmul
// REPORT: near miss: attention at 'keys_broadcast': score bias 1x4x16x1 is constant along the keys; attention takes one element per key
// REPORT: near miss: attention at 'rank3': score bias 4x16x16 is not rank 4 [1|B, 1|H, 1|Sq, Sk]
// REPORT: near miss: attention at 'three_terms': scores have more than one mask and one score bias; attention takes one of each

// T5: no scale (the TorchScript export multiplies by 1), the bias
// [1, H, Sq, Sk] added first, then the padding mask spelled
// where(keep, 0, lowest): the mask becomes the boolean keep, the bias stays.
// CHECK-LABEL: func @t5_bias_then_mask
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x16x64xf32>, %[[K:[^:]*]]: tensor<2x16x64xf32>, %[[V:[^:]*]]: tensor<2x16x64xf32>, %[[BIAS:[^:]*]]: tensor<1x4x16x16xf32>, %[[KEEP:[^:]*]]: tensor<2x1x1x16xi1>)
// CHECK-NOT: lmopt.softmax
// CHECK: %[[OUT:.*]] = lmopt.attention %[[Q]], %[[K]], %[[V]] mask %[[KEEP]] bias %[[BIAS]] {num_heads = 4 : i64, scale = 1.000000e+00 : f32}
// CHECK: return %[[OUT]]
func.func @t5_bias_then_mask(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %bias: tensor<1x4x16x16xf32>, %keep: tensor<2x1x1x16xi1>) -> tensor<2x16x64xf32> {
  %heads = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[0, 0, -1]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s0 = lmopt.matmul %q2, %k2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %zero = lmopt.constant dense<0.0> : tensor<f32>
  %lowest = lmopt.constant dense<-3.40282347E+38> : tensor<f32>
  %s1 = lmopt.mul %s0, %one : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %s2 = lmopt.add %s1, %bias : (tensor<2x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %m = lmopt.where %keep, %zero, %lowest : (tensor<2x1x1x16xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x1x16xf32>
  %s3 = lmopt.add %s2, %m : (tensor<2x4x16x16xf32>, tensor<2x1x1x16xf32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s3 {axis = -1 : i64} : tensor<2x4x16x16xf32> loc("t5")
  %c0 = lmopt.matmul %p, %v2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x16x4x16xf32>, tensor<3xi64>) -> tensor<2x16x64xf32>
  return %c2 : tensor<2x16x64xf32>
}

// -----

// MPNet: a Div by sqrt(D), then a bias expanded to the batch [B, H, Sq, Sk]
// and an additive float mask that is no masked fill: the outer term is the
// mask, the inner one the bias.
// CHECK-LABEL: func @mpnet_div_bias_float_mask
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x16x64xf32>, %[[K:[^:]*]]: tensor<2x16x64xf32>, %[[V:[^:]*]]: tensor<2x16x64xf32>, %[[BIAS:[^:]*]]: tensor<2x4x16x16xf32>, %[[MASK:[^:]*]]: tensor<2x1x1x16xf32>)
// CHECK: %[[OUT:.*]] = lmopt.attention %[[Q]], %[[K]], %[[V]] mask %[[MASK]] bias %[[BIAS]] {num_heads = 4 : i64, scale = 2.500000e-01 : f32}
// CHECK: return %[[OUT]]
func.func @mpnet_div_bias_float_mask(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %bias: tensor<2x4x16x16xf32>, %mask: tensor<2x1x1x16xf32>) -> tensor<2x16x64xf32> {
  %heads = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[0, 0, -1]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s0 = lmopt.matmul %q2, %k2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %sqrt_d = lmopt.constant dense<4.0> : tensor<f32>
  %s1 = lmopt.div %s0, %sqrt_d : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %s2 = lmopt.add %s1, %bias : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s3 = lmopt.add %mask, %s2 : (tensor<2x1x1x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s3 {axis = -1 : i64} : tensor<2x4x16x16xf32> loc("mpnet")
  %c0 = lmopt.matmul %p, %v2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x16x4x16xf32>, tensor<3xi64>) -> tensor<2x16x64xf32>
  return %c2 : tensor<2x16x64xf32>
}

// -----

// The padding mask applied as a masked fill around the biased scores:
// where(keep, scores + bias, lowest). The one additive term is the bias.
// CHECK-LABEL: func @bias_inside_masked_fill
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x16x64xf32>, %[[K:[^:]*]]: tensor<2x16x64xf32>, %[[V:[^:]*]]: tensor<2x16x64xf32>, %[[BIAS:[^:]*]]: tensor<1x4x1x16xf32>, %[[KEEP:[^:]*]]: tensor<2x1x1x16xi1>)
// CHECK: %[[OUT:.*]] = lmopt.attention %[[Q]], %[[K]], %[[V]] mask %[[KEEP]] bias %[[BIAS]] {num_heads = 4 : i64, scale = 1.000000e+00 : f32}
// CHECK: return %[[OUT]]
func.func @bias_inside_masked_fill(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %bias: tensor<1x4x1x16xf32>, %keep: tensor<2x1x1x16xi1>) -> tensor<2x16x64xf32> {
  %heads = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[0, 0, -1]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s0 = lmopt.matmul %q2, %k2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %lowest = lmopt.constant dense<-3.40282347E+38> : tensor<f32>
  %s2 = lmopt.add %bias, %s0 : (tensor<1x4x1x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s3 = lmopt.where %keep, %s2, %lowest : (tensor<2x1x1x16xi1>, tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s3 {axis = -1 : i64} : tensor<2x4x16x16xf32> loc("fill")
  %c0 = lmopt.matmul %p, %v2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x16x4x16xf32>, tensor<3xi64>) -> tensor<2x16x64xf32>
  return %c2 : tensor<2x16x64xf32>
}

// -----

// T5 without a padding mask: the bias alone is an additive mask, which
// attention takes as it is.
// CHECK-LABEL: func @bias_alone
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x16x64xf32>, %[[K:[^:]*]]: tensor<2x16x64xf32>, %[[V:[^:]*]]: tensor<2x16x64xf32>, %[[BIAS:[^:]*]]: tensor<1x4x16x16xf32>)
// CHECK: %[[OUT:.*]] = lmopt.attention %[[Q]], %[[K]], %[[V]] mask %[[BIAS]] {num_heads = 4 : i64, scale = 1.000000e+00 : f32}
func.func @bias_alone(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %bias: tensor<1x4x16x16xf32>) -> tensor<2x16x64xf32> {
  %heads = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[0, 0, -1]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s0 = lmopt.matmul %q2, %k2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s2 = lmopt.add %s0, %bias : (tensor<2x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x4x16x16xf32> loc("alone")
  %c0 = lmopt.matmul %p, %v2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x16x4x16xf32>, tensor<3xi64>) -> tensor<2x16x64xf32>
  return %c2 : tensor<2x16x64xf32>
}

// -----

// The bias added to the probabilities, after the softmax: not attention's
// score bias.
// CHECK-LABEL: func @negative_bias_after_softmax
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_bias_after_softmax(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %bias: tensor<1x4x16x16xf32>) -> tensor<2x16x64xf32> {
  %heads = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[0, 0, -1]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s0 = lmopt.matmul %q2, %k2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s0 {axis = -1 : i64} : tensor<2x4x16x16xf32> loc("after_softmax")
  %pb = lmopt.add %p, %bias : (tensor<2x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c0 = lmopt.matmul %pb, %v2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x16x4x16xf32>, tensor<3xi64>) -> tensor<2x16x64xf32>
  return %c2 : tensor<2x16x64xf32>
}

// -----

// A bias of one element per query row, broadcast along the keys.
// CHECK-LABEL: func @negative_bias_constant_along_keys
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_bias_constant_along_keys(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %bias: tensor<1x4x16x1xf32>, %mask: tensor<2x1x1x16xf32>) -> tensor<2x16x64xf32> {
  %heads = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[0, 0, -1]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s0 = lmopt.matmul %q2, %k2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s2 = lmopt.add %s0, %bias : (tensor<2x4x16x16xf32>, tensor<1x4x16x1xf32>) -> tensor<2x4x16x16xf32>
  %s3 = lmopt.add %s2, %mask : (tensor<2x4x16x16xf32>, tensor<2x1x1x16xf32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s3 {axis = -1 : i64} : tensor<2x4x16x16xf32> loc("keys_broadcast")
  %c0 = lmopt.matmul %p, %v2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x16x4x16xf32>, tensor<3xi64>) -> tensor<2x16x64xf32>
  return %c2 : tensor<2x16x64xf32>
}

// -----

// A rank-3 bias [H, Sq, Sk] broadcast by the add: attention takes rank 4.
// CHECK-LABEL: func @negative_bias_rank_3
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_bias_rank_3(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %bias: tensor<4x16x16xf32>, %mask: tensor<2x1x1x16xf32>) -> tensor<2x16x64xf32> {
  %heads = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[0, 0, -1]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s0 = lmopt.matmul %q2, %k2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s2 = lmopt.add %s0, %bias : (tensor<2x4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s3 = lmopt.add %s2, %mask : (tensor<2x4x16x16xf32>, tensor<2x1x1x16xf32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s3 {axis = -1 : i64} : tensor<2x4x16x16xf32> loc("rank3")
  %c0 = lmopt.matmul %p, %v2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x16x4x16xf32>, tensor<3xi64>) -> tensor<2x16x64xf32>
  return %c2 : tensor<2x16x64xf32>
}

// -----

// Two biases and a mask: attention takes one bias and one mask.
// CHECK-LABEL: func @negative_three_additive_terms
// CHECK: lmopt.softmax
// CHECK-NOT: lmopt.attention
func.func @negative_three_additive_terms(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %bias: tensor<1x4x16x16xf32>, %mask: tensor<2x1x1x16xf32>) -> tensor<2x16x64xf32> {
  %heads = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged = lmopt.constant dense<[0, 0, -1]> : tensor<3xi64>
  %q1 = lmopt.reshape %q, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %k1 = lmopt.reshape %k, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %v1 = lmopt.reshape %v, %heads : (tensor<2x16x64xf32>, tensor<4xi64>) -> tensor<2x16x4x16xf32>
  %q2 = lmopt.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %k2 = lmopt.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %v2 = lmopt.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s0 = lmopt.matmul %q2, %k2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s2 = lmopt.add %s0, %bias : (tensor<2x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s3 = lmopt.add %s2, %bias : (tensor<2x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s4 = lmopt.add %s3, %mask : (tensor<2x4x16x16xf32>, tensor<2x1x1x16xf32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s4 {axis = -1 : i64} : tensor<2x4x16x16xf32> loc("three_terms")
  %c0 = lmopt.matmul %p, %v2 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x16x4x16xf32>, tensor<3xi64>) -> tensor<2x16x64xf32>
  return %c2 : tensor<2x16x64xf32>
}
