// RUN: lmopt-opt %s -split-input-file -verify-diagnostics

// The verifier's messages for grouped-query attention (num_kv_heads), kept
// apart from invalid.mlir for its length.

func.func @attention_gqa_groups(%q: tensor<2x8x64xf32>, %k: tensor<2x8x48xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{num_heads 4 is not a multiple of num_kv_heads 3: each key/value head must serve a whole group of query heads}}
  %0 = lmopt.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 3 : i64} : (tensor<2x8x64xf32>, tensor<2x8x48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_gqa_key_width(%q: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{key hidden size 64 is not 2 heads of query head size 16 (query hidden size 64, num_heads 4)}}
  %0 = lmopt.attention %q, %q, %q {num_heads = 4 : i64, num_kv_heads = 2 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @attention_gqa_split_heads(%q: tensor<2x8x64xf32>, %k: tensor<2x4x9x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{key and value head count 4 does not match num_kv_heads 2}}
  %0 = lmopt.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, kv_heads_split = true} : (tensor<2x8x64xf32>, tensor<2x4x9x16xf32>, tensor<2x4x9x16xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}
