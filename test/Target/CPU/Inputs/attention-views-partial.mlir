// A split whose value part is also returned: the query and key stay views,
// the kernel writes only the value part (plan-attention-views.mlir).
func.func @main(%x: tensor<2x6x48xf32>) -> (tensor<2x6x16xf32>, tensor<2x6x16xf32>)
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["a", "v"]} {
  %q, %k, %v = lmopt.split %x {axis = -1 : i64, split_sizes = array<i64: 16, 16, 16>}
      : (tensor<2x6x48xf32>) -> (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>) loc("split")
  %a = lmopt.attention %q, %k, %v {num_heads = 2 : i64}
      : (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>)
      -> tensor<2x6x16xf32> loc("attn")
  return %a, %v : tensor<2x6x16xf32>, tensor<2x6x16xf32>
}
