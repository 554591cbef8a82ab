// A model whose input has one fixed dim and one dynamic dim.
func.func @main(%x: tensor<2x?xf32>) -> tensor<2x?xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %y = lmopt.relu %x : tensor<2x?xf32> loc("act")
  return %y : tensor<2x?xf32>
}
