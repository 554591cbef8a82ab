// Views whose dims are also read (plan-attention-views.mlir): `xq`'s shape
// is read in the split's own kernel, which then writes nothing; `yq`'s is
// read by a later kernel, so the split's kernel writes `yq` for it. Dims are
// symbolic, so that the shapes are not folded.
func.func @main(%x: tensor<?x?x48xf32>, %y: tensor<?x?x48xf32>)
    -> (tensor<?x?x16xf32>, tensor<2xi64>, tensor<?x?x16xf32>, tensor<2xi64>)
    attributes {lmopt.input_names = ["x", "y"],
                lmopt.output_names = ["a", "sa", "b", "sb"]} {
  %xq, %xk, %xv = lmopt.split %x {axis = 2 : i64, split_sizes = array<i64: 16, 16, 16>}
      : (tensor<?x?x48xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) loc("xsplit")
  %sa = lmopt.shape %xq {end = 2 : i64} : tensor<?x?x16xf32> -> tensor<2xi64> loc("xshape")
  %a = lmopt.attention %xq, %xk, %xv {num_heads = 2 : i64}
      : (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
      -> tensor<?x?x16xf32> loc("attn_x")
  %yq, %yk, %yv = lmopt.split %y {axis = 2 : i64, split_sizes = array<i64: 16, 16, 16>}
      : (tensor<?x?x48xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) loc("ysplit")
  %b = lmopt.attention %yq, %yk, %yv {num_heads = 2 : i64}
      : (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
      -> tensor<?x?x16xf32> loc("attn_y")
  %sb = lmopt.shape %yq {end = 2 : i64} : tensor<?x?x16xf32> -> tensor<2xi64> loc("yshape")
  return %a, %sa, %b, %sb : tensor<?x?x16xf32>, tensor<2xi64>, tensor<?x?x16xf32>, tensor<2xi64>
}
