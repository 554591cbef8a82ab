// Half-precision linears the CPU backend refuses (quant-linear-steps.test).

// A half-precision linear imported as is: the result is f16.
func.func @half_result(%x: tensor<4x16xf16>) -> tensor<4x8xf16>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %w = lmopt.constant dense<1.0> : tensor<16x8xf16>
  %y = lmopt.linear %x, %w : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// An fp16 linear whose weight is computed, not a constant.
func.func @computed_weight(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4x8xf32>
    attributes {lmopt.input_names = ["x", "w"], lmopt.output_names = ["y"]} {
  %xh = lmopt.cast %x : tensor<4x16xf32> -> tensor<4x16xf16>
  %wh = lmopt.cast %w : tensor<16x8xf32> -> tensor<16x8xf16>
  %y = lmopt.linear %xh, %wh : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
