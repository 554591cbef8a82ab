// RUN: lmopt-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of lmopt.attention_grad.

func.func @attention_grad_rank(%a0: tensor<2x8x64xf32>, %a1: tensor<2x8x4x16xf32>, %a2: tensor<2x8x4x16xf32>, %a3: tensor<2x8x64xf32>) {
  // expected-error @+1 {{query, key, value and output_grad must be rank 3 [batch, seq, hidden], got 2x8x64, 2x8x4x16, 2x8x4x16 and 2x8x64}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>)
  return
}

// -----

func.func @attention_grad_element_type(%a0: tensor<2x8x64xf32>, %a1: tensor<2x8x64xf32>, %a2: tensor<2x8x64xf32>, %a3: tensor<2x8x64xf16>) {
  // expected-error @+1 {{operands and results must share the query's element type 'f32', got 'f16'}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf16>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  return
}

// -----

func.func @attention_grad_heads(%a0: tensor<2x8x64xf32>, %a1: tensor<2x8x64xf32>, %a2: tensor<2x8x64xf32>, %a3: tensor<2x8x64xf32>) {
  // expected-error @+1 {{query hidden size 64 is not divisible by num_heads 6}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 {num_heads = 6 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  return
}

// -----

func.func @attention_grad_batch(%a0: tensor<2x8x64xf32>, %a1: tensor<3x8x64xf32>, %a2: tensor<3x8x64xf32>, %a3: tensor<2x8x64xf32>) {
  // expected-error @+1 {{query, key and value batch sizes differ}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<3x8x64xf32>, tensor<3x8x64xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<3x8x64xf32>, tensor<3x8x64xf32>)
  return
}

// -----

func.func @attention_grad_value_head_size(%a0: tensor<2x8x64xf32>, %a1: tensor<2x8x64xf32>, %a2: tensor<2x8x32xf32>, %a3: tensor<2x8x64xf32>) {
  // expected-error @+1 {{key and value hidden sizes 64 and 32 must equal the query's 64}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x32xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x32xf32>)
  return
}

// -----

func.func @attention_grad_kv_seq(%a0: tensor<2x8x64xf32>, %a1: tensor<2x8x64xf32>, %a2: tensor<2x9x64xf32>, %a3: tensor<2x8x64xf32>) {
  // expected-error @+1 {{key and value sequence lengths 8 and 9 differ}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x9x64xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x9x64xf32>)
  return
}

// -----

func.func @attention_grad_output_grad(%a0: tensor<2x8x64xf32>, %a1: tensor<2x8x64xf32>, %a2: tensor<2x8x64xf32>, %a3: tensor<2x7x64xf32>) {
  // expected-error @+1 {{output_grad shape 2x7x64 does not match the query's 2x8x64}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x7x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  return
}

// -----

func.func @attention_grad_scale(%a0: tensor<2x8x64xf32>, %a1: tensor<2x8x64xf32>, %a2: tensor<2x8x64xf32>, %a3: tensor<2x8x64xf32>) {
  // expected-error @+1 {{scale must be positive, got -1}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 {num_heads = 4 : i64, scale = -1.0 : f32} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  return
}

// -----

func.func @attention_grad_mask(%a0: tensor<2x8x64xf32>, %a1: tensor<2x8x64xf32>, %a2: tensor<2x8x64xf32>, %a3: tensor<2x8x64xf32>, %a4: tensor<2x1x1x7xi1>) {
  // expected-error @+1 {{mask of shape 2x1x1x7 does not broadcast to scores 2x4x8x8}}
  %0:3 = lmopt.attention_grad %a0, %a1, %a2, %a3 mask %a4 {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x1x1x7xi1>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  return
}

// -----

func.func @attention_grad_result(%q: tensor<2x8x64xf32>, %k: tensor<2x9x64xf32>) {
  // expected-error @+1 {{result shape 2x8x64 does not match its operand's 2x9x64}}
  %0:3 = lmopt.attention_grad %q, %k, %k, %q {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<2x9x64xf32>, tensor<2x9x64xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x9x64xf32>)
  return
}
