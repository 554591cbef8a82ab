// RUN: lmopt-opt %s -split-input-file -verify-diagnostics

// The verifier's messages for attention's score bias ([1|B, 1|H, 1|Sq, Sk]),
// kept apart from invalid.mlir for its length. Each names the bias's
// producer when it has one.

func.func @attention_bias_rank(%q: tensor<2x8x64xf32>, %b: tensor<4x8x8xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{bias of shape 4x8x8 must be rank 4 [1|B, 1|H, 1|Sq, Sk], got rank 3}}
  %0 = lmopt.attention %q, %q, %q bias %b {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<4x8x8xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_bias_heads(%q: tensor<2x8x64xf32>, %b: tensor<1x2x8x8xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{bias of shape 1x2x8x8 does not broadcast to scores 2x4x8x8 in dim 1}}
  %0 = lmopt.attention %q, %q, %q bias %b {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<1x2x8x8xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_bias_keys(%q: tensor<2x8x64xf32>, %k: tensor<2x12x64xf32>, %b: tensor<1x4x8x1xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{bias of shape 1x4x8x1 must have one element per key (12), got 1}}
  %0 = lmopt.attention %q, %k, %k bias %b {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x12x64xf32>, tensor<2x12x64xf32>, tensor<1x4x8x1xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_bias_type(%q: tensor<2x8x64xf32>, %b: tensor<1x4x8x8xf16>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{bias of shape 1x4x8x8 must have the query's element type 'f32', got 'f16'}}
  %0 = lmopt.attention %q, %q, %q bias %b {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<1x4x8x8xf16>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

// The bias's producer is named.
func.func @attention_bias_producer(%q: tensor<2x8x64xf32>, %b: tensor<4x8x1xf32>) -> tensor<2x8x64xf32> {
  %u = lmopt.unsqueeze %b {axes = array<i64: 0>} : tensor<4x8x1xf32> -> tensor<1x4x8x1xf32>
  // expected-error @+1 {{bias 'lmopt.unsqueeze' result of shape 1x4x8x1 must have one element per key (8), got 1}}
  %0 = lmopt.attention %q, %q, %q bias %u {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<1x4x8x1xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}
