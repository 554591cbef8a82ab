// One BERT encoder layer (hidden 64, 4 heads, FFN 256, sequence 16, dynamic
// batch) in the form the ONNX importer produces from a PyTorch export in
// training-preserving mode: decomposed attention, GELU and layer norms, and
// three Dropout nodes. Weights are splat constants to keep the file readable.
//
// This is the README's example: `lmopt-opt --lmopt-optimize-pipeline` on it.

func.func @bert_layer(%hidden: tensor<?x16x64xf32>, %mask: tensor<?x1x1x16xf32>) -> tensor<?x16x64xf32> {
  %wq = lmopt.constant dense<0.02> : tensor<64x64xf32>
  %wk = lmopt.constant dense<0.03> : tensor<64x64xf32>
  %wv = lmopt.constant dense<0.04> : tensor<64x64xf32>
  %wo = lmopt.constant dense<0.05> : tensor<64x64xf32>
  %bq = lmopt.constant dense<0.1> : tensor<64xf32>
  %w1 = lmopt.constant dense<0.01> : tensor<64x256xf32>
  %b1 = lmopt.constant dense<0.2> : tensor<256xf32>
  %w2 = lmopt.constant dense<0.01> : tensor<256x64xf32>
  %gamma = lmopt.constant dense<1.0> : tensor<64xf32>
  %beta = lmopt.constant dense<0.0> : tensor<64xf32>
  %eps = lmopt.constant dense<1.0e-12> : tensor<f32>
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %sqrt_d = lmopt.constant dense<4.0> : tensor<f32>
  %heads_shape = lmopt.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %merged_shape = lmopt.constant dense<[0, 0, 64]> : tensor<3xi64>

  // Self-attention: projections, head split, scores, mask, softmax.
  %q0 = lmopt.matmul %hidden, %wq : (tensor<?x16x64xf32>, tensor<64x64xf32>) -> tensor<?x16x64xf32>
  %q1 = lmopt.add %q0, %bq : (tensor<?x16x64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  %k0 = lmopt.matmul %hidden, %wk : (tensor<?x16x64xf32>, tensor<64x64xf32>) -> tensor<?x16x64xf32>
  %v0 = lmopt.matmul %hidden, %wv : (tensor<?x16x64xf32>, tensor<64x64xf32>) -> tensor<?x16x64xf32>
  %q2 = lmopt.reshape %q1, %heads_shape : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
  %k2 = lmopt.reshape %k0, %heads_shape : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
  %v2 = lmopt.reshape %v0, %heads_shape : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
  %q3 = lmopt.transpose %q2 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x16x4x16xf32> -> tensor<?x4x16x16xf32>
  %k3 = lmopt.transpose %k2 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x16x4x16xf32> -> tensor<?x4x16x16xf32>
  %k4 = lmopt.transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<?x4x16x16xf32> -> tensor<?x4x16x16xf32>
  %v3 = lmopt.transpose %v2 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x16x4x16xf32> -> tensor<?x4x16x16xf32>
  %s0 = lmopt.matmul %q3, %k4 : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
  %s1 = lmopt.div %s0, %sqrt_d : (tensor<?x4x16x16xf32>, tensor<f32>) -> tensor<?x4x16x16xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<?x4x16x16xf32>, tensor<?x1x1x16xf32>) -> tensor<?x4x16x16xf32>
  %p0 = lmopt.softmax %s2 {axis = -1 : i64} : tensor<?x4x16x16xf32>
  %p1, %p1_mask = lmopt.dropout %p0 {ratio = 0.1 : f32} : (tensor<?x4x16x16xf32>) -> (tensor<?x4x16x16xf32>, tensor<?x4x16x16xi1>)
  %c0 = lmopt.matmul %p1, %v3 : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x4x16x16xf32> -> tensor<?x16x4x16xf32>
  %c2 = lmopt.reshape %c1, %merged_shape : (tensor<?x16x4x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
  %o0 = lmopt.matmul %c2, %wo : (tensor<?x16x64xf32>, tensor<64x64xf32>) -> tensor<?x16x64xf32>
  %o1, %o1_mask = lmopt.dropout %o0 {ratio = 0.1 : f32} : (tensor<?x16x64xf32>) -> (tensor<?x16x64xf32>, tensor<?x16x64xi1>)
  %r0 = lmopt.add %o1, %hidden : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>

  // Decomposed layer norm.
  %mean = lmopt.reduce_mean %r0 {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32>
  %cent = lmopt.sub %r0, %mean : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<?x16x1xf32>, tensor<f32>) -> tensor<?x16x1xf32>
  %std = lmopt.sqrt %vare : tensor<?x16x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32>
  %scaled = lmopt.mul %norm, %gamma : (tensor<?x16x64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  %ln = lmopt.add %scaled, %beta : (tensor<?x16x64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>

  // Feed-forward with erf GELU, then the second residual.
  %f0 = lmopt.matmul %ln, %w1 : (tensor<?x16x64xf32>, tensor<64x256xf32>) -> tensor<?x16x256xf32>
  %f1 = lmopt.add %f0, %b1 : (tensor<?x16x256xf32>, tensor<256xf32>) -> tensor<?x16x256xf32>
  %g0 = lmopt.gelu %f1 : tensor<?x16x256xf32>
  %f2 = lmopt.matmul %g0, %w2 : (tensor<?x16x256xf32>, tensor<256x64xf32>) -> tensor<?x16x64xf32>
  %f3, %f3_mask = lmopt.dropout %f2 {ratio = 0.1 : f32} : (tensor<?x16x64xf32>) -> (tensor<?x16x64xf32>, tensor<?x16x64xi1>)
  %out = lmopt.add %f3, %ln : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
  return %out : tensor<?x16x64xf32>
}
