// Symbolic batch and sequence, static width: the views' offsets and row
// stride are static (plan-attention-views.mlir).
func.func @main(%x: tensor<?x?x48xf32>) -> tensor<?x?x16xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["a"]} {
  %q, %k, %v = lmopt.split %x {axis = 2 : i64, split_sizes = array<i64: 16, 16, 16>}
      : (tensor<?x?x48xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) loc("split")
  %a = lmopt.attention %q, %k, %v {num_heads = 2 : i64}
      : (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
      -> tensor<?x?x16xf32> loc("attn")
  return %a : tensor<?x?x16xf32>
}
