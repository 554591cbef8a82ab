// Slices that stay kernels (plan-attention-views.mlir): a split along the
// sequence axis, a slice with step 2, and a split whose first part is the
// attention's mask (its second part, the query, key and value, is a view).
func.func @main(%x: tensor<2x12x16xf32>, %y: tensor<2x6x32xf32>, %z: tensor<2x6x12xf32>)
    -> (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x6xf32>)
    attributes {lmopt.input_names = ["x", "y", "z"],
                lmopt.output_names = ["a", "b", "c"]} {
  %s0, %s1 = lmopt.split %x {axis = 1 : i64, split_sizes = array<i64: 6, 6>}
      : (tensor<2x12x16xf32>) -> (tensor<2x6x16xf32>, tensor<2x6x16xf32>) loc("seq_split")
  %a = lmopt.attention %s0, %s1, %s1 {num_heads = 2 : i64}
      : (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>)
      -> tensor<2x6x16xf32> loc("attn_seq")
  %c0 = lmopt.constant dense<0> : tensor<1xi64>
  %c32 = lmopt.constant dense<32> : tensor<1xi64>
  %last = lmopt.constant dense<2> : tensor<1xi64>
  %two = lmopt.constant dense<2> : tensor<1xi64>
  %even = lmopt.slice %y, %c0, %c32 axes %last steps %two
      : (tensor<2x6x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x6x16xf32> loc("strided")
  %b = lmopt.attention %even, %even, %even {num_heads = 2 : i64}
      : (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>)
      -> tensor<2x6x16xf32> loc("attn_strided")
  %m, %qkv = lmopt.split %z {axis = 2 : i64, split_sizes = array<i64: 6, 6>}
      : (tensor<2x6x12xf32>) -> (tensor<2x6x6xf32>, tensor<2x6x6xf32>) loc("mask_split")
  %c = lmopt.attention %qkv, %qkv, %qkv mask %m {num_heads = 2 : i64}
      : (tensor<2x6x6xf32>, tensor<2x6x6xf32>, tensor<2x6x6xf32>, tensor<2x6x6xf32>)
      -> tensor<2x6x6xf32> loc("attn_mask")
  return %a, %b, %c : tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x6xf32>
}
