// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s

// Attention steps read q, k, v and the mask; `scale` is the op's, or
// 1/sqrt(head dim) when it has none (D = 16 / 2 = 8 here: 0.353553391).

// CHECK-LABEL: plan:
// CHECK-DAG: tensor %[[Q:[0-9]+]] = input 0 'q' f32 [1, 4, 16]
// CHECK-DAG: tensor %[[K:[0-9]+]] = input 1 'k' f32 [1, 4, 16]
// CHECK-DAG: tensor %[[V:[0-9]+]] = input 2 'v' f32 [1, 4, 16]
// CHECK-DAG: tensor %[[M:[0-9]+]] = input 3 'mask' bool [1, 1, 4, 4]
// CHECK-DAG: tensor %[[A:[0-9]+]] = arena @{{[0-9]+}} 'attn' f32 [1, 4, 16]
// CHECK-DAG: tensor %[[C:[0-9]+]] = arena @{{[0-9]+}} 'causal_attn' f32 [1, 4, 16]
// CHECK: step 0: attention 'attn' (%[[Q]], %[[K]], %[[V]], %[[M]]) -> (%[[A]]) {num_heads = 2, scale = 0.353553391, causal = 0, kv_heads_split = 0, zero_masked_rows = 0}
// CHECK: step 1: attention 'causal_attn' (%[[A]], %[[K]], %[[V]]) -> (%[[C]]) {num_heads = 4, scale = 0.125, causal = 1, kv_heads_split = 0, zero_masked_rows = 1}

func.func @main(%q: tensor<1x4x16xf32>, %k: tensor<1x4x16xf32>,
                %v: tensor<1x4x16xf32>, %mask: tensor<1x1x4x4xi1>)
    -> tensor<1x4x16xf32>
    attributes {lmopt.input_names = ["q", "k", "v", "mask"],
                lmopt.output_names = ["out"]} {
  %a = lmopt.attention %q, %k, %v mask %mask {num_heads = 2 : i64}
      : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x1x4x4xi1>)
      -> tensor<1x4x16xf32> loc("attn")
  %c = lmopt.attention %a, %k, %v {num_heads = 4 : i64, scale = 0.125 : f32,
                                   causal = true, zero_masked_rows = true}
      : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
      -> tensor<1x4x16xf32> loc("causal_attn")
  return %c : tensor<1x4x16xf32>
}
