// RUN: lmopt-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the lmopt dialect.

func.func @shape_wrong_length(%x: tensor<2x3x4xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{'lmopt.shape' op result shape 2 does not match expected shape 3}}
  %0 = lmopt.shape %x : tensor<2x3x4xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @constant_of_shape_value_type(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{value type 'i64' does not match result element type 'f32'}}
  %0 = lmopt.constant_of_shape %s, 0 : i64 : tensor<2xi64> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @constant_of_shape_rank(%s: tensor<3xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{result rank 2 does not match shape operand length 3}}
  %0 = lmopt.constant_of_shape %s, 0.0 : f32 : tensor<3xi64> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @range_not_scalar(%a: tensor<1xi64>, %b: tensor<i64>) -> tensor<?xi64> {
  // expected-error @+1 {{start, limit and delta must be scalars, got shape 1}}
  %0 = lmopt.range %a, %b, %b : (tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @range_element_type(%a: tensor<i32>) -> tensor<?xi64> {
  // expected-error @+1 {{operand element type 'i32' does not match result element type 'i64'}}
  %0 = lmopt.range %a, %a, %a : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @range_result_rank(%a: tensor<i64>) -> tensor<2x2xi64> {
  // expected-error @+1 {{result must be 1-D}}
  %0 = lmopt.range %a, %a, %a : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{operand shapes 2x3 and 4x3 are not broadcast-compatible}}
  %0 = lmopt.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @mul_element_types(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+1 {{operand element types 'f32' and 'f16' differ}}
  %0 = lmopt.mul %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @sub_result_element_type(%a: tensor<3xf32>) -> tensor<3xf16> {
  // expected-error @+1 {{result element type 'f16' does not match operand element type 'f32'}}
  %0 = lmopt.sub %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf16>
  return %0 : tensor<3xf16>
}

// -----

func.func @div_result_shape(%a: tensor<2x1xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result shape 2x4 does not match expected shape 2x3}}
  %0 = lmopt.div %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @pow_result_element_type(%a: tensor<3xf32>, %b: tensor<i64>) -> tensor<3xi64> {
  // expected-error @+1 {{result element type 'i64' does not match input element type 'f32'}}
  %0 = lmopt.pow %a, %b : (tensor<3xf32>, tensor<i64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @where_not_broadcastable(%c: tensor<2xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{operand shapes 2 and 3 are not broadcast-compatible}}
  %0 = lmopt.where %c, %x, %x : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @where_branch_types(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+1 {{operand element types 'f32' and 'f16' differ}}
  %0 = lmopt.where %c, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @matmul_element_types(%a: tensor<2x3xf32>, %b: tensor<3x4xf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{operand and result element types must match, got 'f32', 'f16' and 'f32'}}
  %0 = lmopt.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<5x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{cannot multiply shapes 2x3 and 5x4}}
  %0 = lmopt.matmul %a, %b : (tensor<2x3xf32>, tensor<5x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{operands 'a' and 'b' must be rank 2, got 2x3x4 and 4x5}}
  %0 = lmopt.gemm %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gemm_contraction(%a: tensor<2x3xf32>, %b: tensor<5x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{contraction dims 3 and 4 differ}}
  %0 = lmopt.gemm %a, %b {trans_b = true} : (tensor<2x3xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gemm_c_shape(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{operand 'c' of shape 3 does not broadcast to 2x4}}
  %0 = lmopt.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = lmopt.reduce_mean %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_axis_repeated(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{axis -1 appears more than once}}
  %0 = lmopt.reduce_sum %x {axes = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_result(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{result shape 2x1 does not match expected shape 2}}
  %0 = lmopt.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = lmopt.softmax %x {axis = -3 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = lmopt.layer_norm %x, %s {axis = 2 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %s: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'scale' of shape 4 does not broadcast to the normalized shape 8}}
  %0 = lmopt.layer_norm %x, %s : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'bias' of shape 2x8 does not broadcast to the normalized shape 8}}
  %0 = lmopt.layer_norm %x, %s, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{result type 'tensor<2x8xf16>' does not match input type 'tensor<2x8xf32>'}}
  %0 = lmopt.layer_norm %x, %s : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

func.func @gather_axis(%d: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = lmopt.gather %d, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_element_type(%d: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf16> {
  // expected-error @+1 {{result element type 'f16' does not match input element type 'f32'}}
  %0 = lmopt.gather %d, %i : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf16>
  return %0 : tensor<3x4xf16>
}

// -----

func.func @gather_result(%d: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{result shape 3x4 does not match expected shape 2x3x4}}
  %0 = lmopt.gather %d, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @reshape_rank(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<6xf32> {
  // expected-error @+1 {{result rank 1 does not match shape operand length 2}}
  %0 = lmopt.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>, %s: tensor<1xi64>) -> tensor<8xf32> {
  // expected-error @+1 {{cannot reshape 6 elements into 8}}
  %0 = lmopt.reshape %x, %s : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{perm is not a permutation of 2 dims}}
  %0 = lmopt.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @transpose_result(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result shape 2x3 does not match expected shape 3x2}}
  %0 = lmopt.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_not_1d(%x: tensor<8xf32>, %s: tensor<1x1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{starts, ends, axes and steps must be 1-D, got shape 1x1}}
  %0 = lmopt.slice %x, %s, %s : (tensor<8xf32>, tensor<1x1xi64>, tensor<1x1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @slice_lengths(%x: tensor<8x8xf32>, %s: tensor<1xi64>, %e: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{starts, ends, axes and steps must have one length}}
  %0 = lmopt.slice %x, %s, %e : (tensor<8x8xf32>, tensor<1xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @slice_rank(%x: tensor<8x8xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{result rank 1 does not match input rank 2}}
  %0 = lmopt.slice %x, %s, %s : (tensor<8x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @concat_empty() -> tensor<0xf32> {
  // expected-error @+1 {{needs at least one input}}
  %0 = lmopt.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @concat_axis(%a: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0 = lmopt.concat %a, %a {axis = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @concat_ranks(%a: tensor<2xf32>, %b: tensor<2x2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{inputs have ranks 1 and 2}}
  %0 = lmopt.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2x2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{inputs differ in dim 1 (3 vs 4) outside the concatenation axis}}
  %0 = lmopt.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_result(%a: tensor<2x3xf32>, %b: tensor<5x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{result shape 6x3 does not match expected shape 7x3}}
  %0 = lmopt.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<5x3xf32>) -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @split_count(%x: tensor<6xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{has 1 results but 2 split sizes}}
  %0 = lmopt.split %x {axis = 0 : i64, split_sizes = array<i64: 3, 3>} : (tensor<6xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @split_negative(%x: tensor<6xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{split size -1 is negative}}
  %0:2 = lmopt.split %x {axis = 0 : i64, split_sizes = array<i64: -1, 7>} : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %0#0 : tensor<?xf32>
}

// -----

func.func @split_total(%x: tensor<6xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{split sizes add up to 4 but the axis has 6 entries}}
  %0:2 = lmopt.split %x {axis = 0 : i64, split_sizes = array<i64: 2, 2>} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0 : tensor<2xf32>
}

// -----

func.func @expand_rank(%x: tensor<3xf32>, %s: tensor<3xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result rank 2 does not match shape operand length 3}}
  %0 = lmopt.expand %x, %s : (tensor<3xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @expand_broadcast(%x: tensor<3xf32>, %s: tensor<2xi64>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input shape 3 does not broadcast to result shape 2x4}}
  %0 = lmopt.expand %x, %s : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @squeeze_not_one(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{cannot squeeze dim 0 of size 2}}
  %0 = lmopt.squeeze %x {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @unsqueeze_axis(%x: tensor<3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = lmopt.unsqueeze %x {axes = array<i64: 2>} : tensor<3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @unsqueeze_result(%x: tensor<3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{result shape 1x3 does not match expected shape 3x1}}
  %0 = lmopt.unsqueeze %x {axes = array<i64: -1>} : tensor<3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input must have rank 1 or more}}
  %0 = lmopt.linear %x, %w : (tensor<f32>, tensor<4x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{weight must be rank 2, got shape 4}}
  %0 = lmopt.linear %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_contraction(%x: tensor<2x4xf32>, %w: tensor<8x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{input feature dim 4 does not match weight's contraction dim 5}}
  %0 = lmopt.linear %x, %w {transpose_weight = true} : (tensor<2x4xf32>, tensor<8x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @linear_bias(%x: tensor<2x4xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{bias of shape 4 must be 8}}
  %0 = lmopt.linear %x, %w bias %b : (tensor<2x4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @linear_residual(%x: tensor<2x4xf32>, %w: tensor<4x8xf32>, %r: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{residual of shape 2x4 must be 2x8}}
  %0 = lmopt.linear %x, %w residual %r : (tensor<2x4xf32>, tensor<4x8xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @linear_transpose_input_rank(%x: tensor<2x4x8xf32>, %w: tensor<2x5xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{with transpose_input, input must be rank 2 [K, M], got shape 2x4x8}}
  %0 = lmopt.linear %x, %w {transpose_input = true} : (tensor<2x4x8xf32>, tensor<2x5xf32>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @linear_transpose_input_contraction(%x: tensor<4x8xf32>, %w: tensor<8x5xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{input feature dim 4 does not match weight's contraction dim 8}}
  %0 = lmopt.linear %x, %w {transpose_input = true} : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @linear_result(%x: tensor<2x4xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result shape 2x4 does not match expected shape 2x8}}
  %0 = lmopt.linear %x, %w : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @attention_rank(%q: tensor<2x8x64xf32>, %k: tensor<2x8x4x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{query, key and value must be rank 3 [batch, seq, hidden], got 2x8x64, 2x8x4x16 and 2x8x4x16}}
  %0 = lmopt.attention %q, %k, %k {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_heads(%q: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{query hidden size 64 is not divisible by num_heads 6}}
  %0 = lmopt.attention %q, %q, %q {num_heads = 6 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x8x64xf32>, %k: tensor<3x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{query, key and value batch sizes differ}}
  %0 = lmopt.attention %q, %k, %k {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<3x8x64xf32>, tensor<3x8x64xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_key_hidden(%q: tensor<2x8x64xf32>, %k: tensor<2x8x32xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{key hidden size 32 is not 4 heads of query head size 16 (query hidden size 64, num_heads 4)}}
  %0 = lmopt.attention %q, %k, %q {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x32xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_kv_seq(%q: tensor<2x8x64xf32>, %v: tensor<2x9x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{key and value sequence lengths 8 and 9 differ}}
  %0 = lmopt.attention %q, %q, %v {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x9x64xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_scale(%q: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{scale must be positive, got 0}}
  %0 = lmopt.attention %q, %q, %q {num_heads = 4 : i64, scale = 0.0 : f32} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_mask(%q: tensor<2x8x64xf32>, %m: tensor<2x1x1x7xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{mask of shape 2x1x1x7 does not broadcast to scores 2x4x8x8}}
  %0 = lmopt.attention %q, %q, %q mask %m {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x1x1x7xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_result(%q: tensor<2x8x64xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{result shape 2x8x32 does not match expected shape 2x8x64}}
  %0 = lmopt.attention %q, %q, %q {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @attention_kv_heads_split_rank(%q: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{with kv_heads_split, key and value must be rank 4 [batch, heads, seq, head_dim], got 2x8x64 and 2x8x64}}
  %0 = lmopt.attention %q, %q, %q {num_heads = 4 : i64, kv_heads_split = true} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_kv_heads_split_heads(%q: tensor<2x8x64xf32>, %k: tensor<2x2x9x32xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{key and value head count 2 does not match num_heads 4}}
  %0 = lmopt.attention %q, %k, %k {num_heads = 4 : i64, kv_heads_split = true} : (tensor<2x8x64xf32>, tensor<2x2x9x32xf32>, tensor<2x2x9x32xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_kv_heads_split_head_dim(%q: tensor<2x8x64xf32>, %k: tensor<2x4x9x8xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{query hidden size 64 is not num_heads * key head size 4 * 8}}
  %0 = lmopt.attention %q, %k, %k {num_heads = 4 : i64, kv_heads_split = true} : (tensor<2x8x64xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x8xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @attention_kv_heads_split_value(%q: tensor<2x8x64xf32>, %k: tensor<2x4x9x16xf32>, %v: tensor<2x4x7x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{head-split key and value shapes 2x4x9x16 and 2x4x7x16 differ}}
  %0 = lmopt.attention %q, %k, %v {num_heads = 4 : i64, kv_heads_split = true} : (tensor<2x8x64xf32>, tensor<2x4x9x16xf32>, tensor<2x4x7x16xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_kv_heads_split_mask(%q: tensor<2x8x64xf32>, %k: tensor<2x4x9x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{mask of shape 2x1x1x8 does not broadcast to scores 2x4x8x9}}
  %0 = lmopt.attention %q, %k, %k mask %m {num_heads = 4 : i64, kv_heads_split = true} : (tensor<2x8x64xf32>, tensor<2x4x9x16xf32>, tensor<2x4x9x16xf32>, tensor<2x1x1x8xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @skip_layer_norm_scalar(%x: tensor<f32>, %s: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{input must have rank 1 or more}}
  %0:2 = lmopt.skip_layer_norm %x, %x, %s : (tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @skip_layer_norm_skip(%x: tensor<2x8xf32>, %k: tensor<3x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{skip of shape 3x8 does not broadcast to input shape 2x8}}
  %0:2 = lmopt.skip_layer_norm %x, %k, %s : (tensor<2x8xf32>, tensor<3x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  return %0#0 : tensor<2x8xf32>
}

// -----

func.func @skip_layer_norm_scale(%x: tensor<2x8xf32>, %s: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale and bias must be 8, got 4}}
  %0:2 = lmopt.skip_layer_norm %x, %x, %s : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<4xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  return %0#0 : tensor<2x8xf32>
}

// -----

func.func @skip_layer_norm_result(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{result type 'tensor<2x8xf16>' does not match input type 'tensor<2x8xf32>'}}
  %0:2 = lmopt.skip_layer_norm %x, %x, %s : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf16>, tensor<2x8xf32>)
  return %0#0 : tensor<2x8xf16>
}

// -----

func.func @rms_norm_scale(%x: tensor<2x8xf32>, %s: tensor<2xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'scale' of shape 2 does not broadcast to the normalized shape 8}}
  %0 = lmopt.rms_norm %x, %s : (tensor<2x8xf32>, tensor<2xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @dropout_ratio(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{ratio 1.000000e+00 is not in [0, 1)}}
  %0:2 = lmopt.dropout %x {ratio = 1.0 : f32} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @dropout_result(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result type 'tensor<4xf16>' does not match input type 'tensor<4xf32>'}}
  %0:2 = lmopt.dropout %x : (tensor<4xf32>) -> (tensor<4xf16>, tensor<4xi1>)
  return %0#0 : tensor<4xf16>
}

// -----

func.func @dropout_mask(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mask shape 5 does not match input shape 4}}
  %0:2 = lmopt.dropout %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<5xi1>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @quantize_not_quantized(%x: tensor<4xf32>) -> tensor<4xi8> {
  // expected-error @+1 {{element type 'i8' is not a quantized type}}
  %0 = lmopt.quantize %x : tensor<4xf32> -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @dequantize_expressed(%q: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4xf16> {
  // expected-error @+1 {{quantized type expresses 'f32' but the float side is 'f16'}}
  %0 = lmopt.dequantize %q : tensor<4x!quant.uniform<i8:f32, 0.5>> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @mod_float_without_fmod(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs 'fmod' for float operands}}
  %0 = lmopt.mod %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_elements_rank(%x: tensor<4x3xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{indices rank 1 does not match data rank 2}}
  %0 = lmopt.gather_elements %x, %i : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_elements_off_axis(%x: tensor<4x3xf32>, %i: tensor<5x2xi64>) -> tensor<5x2xf32> {
  // expected-error @+1 {{indices dim 0 (5) exceeds data dim 0 (4) off the axis}}
  %0 = lmopt.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x3xf32>, tensor<5x2xi64>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

func.func @gather_nd_batch_dims(%x: tensor<4x3xf32>, %i: tensor<4x1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{batch_dims 2 must be in [0, 2)}}
  %0 = lmopt.gather_nd %x, %i {batch_dims = 2 : i64} : (tensor<4x3xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_nd_dynamic_tuple(%x: tensor<4x3xf32>, %i: tensor<4x?xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{last dim of indices must be static}}
  %0 = lmopt.gather_nd %x, %i : (tensor<4x3xf32>, tensor<4x?xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_nd_tuple_too_long(%x: tensor<4x3xf32>, %i: tensor<4x3xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{index tuples of length 3 do not fit data of rank 2 after 0 batch dims}}
  %0 = lmopt.gather_nd %x, %i : (tensor<4x3xf32>, tensor<4x3xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @scatter_nd_dynamic_tuple(%x: tensor<4x3xf32>, %i: tensor<2x?xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{last dim of indices must be static}}
  %0 = lmopt.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x?xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_tuple_too_long(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{index tuples of length 3 do not fit data of rank 2}}
  %0 = lmopt.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_updates_shape(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{updates shape 2x4 does not match indices.shape[:-1] + data.shape[1:] = 2x3}}
  %0 = lmopt.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_bool_reduction(%x: tensor<4xi1>, %i: tensor<2x1xi64>, %u: tensor<2xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{reduction 'max' needs numeric data, got i1}}
  %0 = lmopt.scatter_nd %x, %i, %u {reduction = #lmopt.scatter_reduction<max>} : (tensor<4xi1>, tensor<2x1xi64>, tensor<2xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @scatter_nd_result_shape(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{result shape}}
  %0 = lmopt.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @dynamic_quantize_linear_shape(%x: tensor<2x3xf32>) -> tensor<3x2xui8> {
  // expected-error @+1 {{result shape 3x2 does not match expected shape 2x3}}
  %0:3 = lmopt.dynamic_quantize_linear %x : tensor<2x3xf32> -> (tensor<3x2xui8>, tensor<f32>, tensor<ui8>)
  return %0#0 : tensor<3x2xui8>
}

// -----

func.func @matmul_integer_shapes(%a: tensor<2x3xui8>, %b: tensor<4x5xi8>) -> tensor<2x5xi32> {
  // expected-error @+1 {{cannot multiply shapes 2x3 and 4x5}}
  %0 = lmopt.matmul_integer %a, %b : (tensor<2x3xui8>, tensor<4x5xi8>) -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// -----

func.func @matmul_integer_zero_point_type(%a: tensor<2x3xui8>, %b: tensor<3x5xi8>, %zp: tensor<i8>) -> tensor<2x5xi32> {
  // expected-error @+1 {{'a_zero_point' element type 'i8' does not match its operand's element type 'ui8'}}
  %0 = lmopt.matmul_integer %a, %b a_zero_point %zp : (tensor<2x3xui8>, tensor<3x5xi8>, tensor<i8>) -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// -----

func.func @matmul_integer_zero_point_shape(%a: tensor<2x3xui8>, %b: tensor<3x5xi8>, %zp: tensor<4xi8>) -> tensor<2x5xi32> {
  // expected-error @+1 {{'b_zero_point' of shape 4 must be a scalar or hold one entry per column (5)}}
  %0 = lmopt.matmul_integer %a, %b b_zero_point %zp : (tensor<2x3xui8>, tensor<3x5xi8>, tensor<4xi8>) -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// -----

func.func @matmul_integer_result(%a: tensor<2x3xui8>, %b: tensor<3x5xi8>) -> tensor<2x4xi32> {
  // expected-error @+1 {{result shape 2x4 does not match expected shape 2x5}}
  %0 = lmopt.matmul_integer %a, %b : (tensor<2x3xui8>, tensor<3x5xi8>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

func.func @dropout_mask_ratio(%x: tensor<2x3xf32>, %seed: tensor<i64>) -> tensor<2x3xi1> {
  // expected-error @+1 {{'lmopt.dropout_mask' op ratio 1.000000e+00 is not in [0, 1)}}
  %0 = lmopt.dropout_mask %x, %seed {ratio = 1.0 : f32, stream = 0 : i64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

func.func @dropout_mask_stream(%x: tensor<2x3xf32>, %seed: tensor<i64>) -> tensor<2x3xi1> {
  // expected-error @+1 {{'lmopt.dropout_mask' op stream -1 is not a 32-bit count}}
  %0 = lmopt.dropout_mask %x, %seed {ratio = 0.1 : f32, stream = -1 : i64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

func.func @dropout_mask_shape(%x: tensor<2x3xf32>, %seed: tensor<i64>) -> tensor<3x2xi1> {
  // expected-error @+1 {{'lmopt.dropout_mask' op mask shape 3x2 does not match 2x3}}
  %0 = lmopt.dropout_mask %x, %seed {ratio = 0.1 : f32, stream = 0 : i64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<3x2xi1>
  return %0 : tensor<3x2xi1>
}

// -----

func.func @gather_grad_dynamic(%g: tensor<2x4xf32>, %ids: tensor<2xi64>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'lmopt.gather_grad' op result type 'tensor<?x4xf32>' is not a static tensor of rank 1 or more}}
  %0 = lmopt.gather_grad %g, %ids : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @gather_grad_element_type(%g: tensor<2x4xf64>, %ids: tensor<2xi64>) -> tensor<5x4xf32> {
  // expected-error @+1 {{'lmopt.gather_grad' op gradient element type 'f64' does not match result element type 'f32'}}
  %0 = lmopt.gather_grad %g, %ids : (tensor<2x4xf64>, tensor<2xi64>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

func.func @gather_grad_shape(%g: tensor<2x3xf32>, %ids: tensor<2xi64>) -> tensor<5x4xf32> {
  // expected-error @+1 {{'lmopt.gather_grad' op gradient shape 2x3 does not match indices shape 2 followed by the rows' 4}}
  %0 = lmopt.gather_grad %g, %ids : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

func.func @adamw_betas(%p: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lmopt.adamw' op betas (1.000000e+00, 9.990000e-01) are not in [0, 1)}}
  %0:3 = lmopt.adamw %p, %p, %p, %p, %s, %s, %s, %s, %s {beta1 = 1.0 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.0 : f64} : tensor<4xf32>, tensor<f32>
  return %0#0 : tensor<4xf32>
}

// -----

func.func @adamw_epsilon(%p: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lmopt.adamw' op epsilon 0.000000e+00 is not positive}}
  %0:3 = lmopt.adamw %p, %p, %p, %p, %s, %s, %s, %s, %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 0.0 : f64, weight_decay = 0.0 : f64} : tensor<4xf32>, tensor<f32>
  return %0#0 : tensor<4xf32>
}

// -----

func.func @adamw_decay(%p: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lmopt.adamw' op weight_decay -1.000000e-02 is negative}}
  %0:3 = lmopt.adamw %p, %p, %p, %p, %s, %s, %s, %s, %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = -0.01 : f64} : tensor<4xf32>, tensor<f32>
  return %0#0 : tensor<4xf32>
}

// -----

func.func @adamw_types(%p: tensor<4xf32>, %g: tensor<5xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{all of {param, grad, m, v, new_param, new_m, new_v} have same type}}
  %0:3 = "lmopt.adamw"(%p, %g, %p, %p, %s, %s, %s, %s, %s) {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.0 : f64} : (tensor<4xf32>, tensor<5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @rotary_odd(%x: tensor<2x4x6x15xf32>, %t: tensor<6x15xf32>) -> tensor<2x4x6x15xf32> {
  // expected-error @+1 {{'lmopt.rotary' op input's last dim must be static and even, got 'tensor<2x4x6x15xf32>'}}
  %0 = lmopt.rotary %x, %t, %t : (tensor<2x4x6x15xf32>, tensor<6x15xf32>, tensor<6x15xf32>) -> tensor<2x4x6x15xf32>
  return %0 : tensor<2x4x6x15xf32>
}

// -----

func.func @rotary_tables(%x: tensor<2x6x16xf32>, %c: tensor<6x16xf32>, %s: tensor<1x16xf32>) -> tensor<2x6x16xf32> {
  // expected-error @+1 {{'lmopt.rotary' op cos and sin types 'tensor<6x16xf32>' and 'tensor<1x16xf32>' differ}}
  %0 = lmopt.rotary %x, %c, %s : (tensor<2x6x16xf32>, tensor<6x16xf32>, tensor<1x16xf32>) -> tensor<2x6x16xf32>
  return %0 : tensor<2x6x16xf32>
}

// -----

func.func @rotary_rank(%x: tensor<6x16xf32>, %t: tensor<1x6x16xf32>) -> tensor<6x16xf32> {
  // expected-error @+1 {{'lmopt.rotary' op cos and sin have rank 3, above the input's 2}}
  %0 = lmopt.rotary %x, %t, %t : (tensor<6x16xf32>, tensor<1x6x16xf32>, tensor<1x6x16xf32>) -> tensor<6x16xf32>
  return %0 : tensor<6x16xf32>
}

// -----

func.func @rotary_broadcast(%x: tensor<2x6x16xf32>, %t: tensor<5x16xf32>) -> tensor<2x6x16xf32> {
  // expected-error @+1 {{'lmopt.rotary' op operand shapes 2x6x16 and 5x16 are not broadcast-compatible}}
  %0 = lmopt.rotary %x, %t, %t : (tensor<2x6x16xf32>, tensor<5x16xf32>, tensor<5x16xf32>) -> tensor<2x6x16xf32>
  return %0 : tensor<2x6x16xf32>
}

// -----

func.func @rotary_result(%x: tensor<?x6x16xf32>, %t: tensor<6x16xf32>) -> tensor<2x6x16xf32> {
  // expected-error @+1 {{'lmopt.rotary' op result type 'tensor<2x6x16xf32>' differs from the input type 'tensor<?x6x16xf32>'}}
  %0 = lmopt.rotary %x, %t, %t : (tensor<?x6x16xf32>, tensor<6x16xf32>, tensor<6x16xf32>) -> tensor<2x6x16xf32>
  return %0 : tensor<2x6x16xf32>
}
