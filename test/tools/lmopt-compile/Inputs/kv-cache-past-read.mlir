// A past input read other than by its concatenation (a scaled copy): the
// cache could not stay in place.
func.func @main(%ids: tensor<?x?xi64>, %past: tensor<?x2x?x4xf32>)
    -> (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
    attributes {lmopt.input_names = ["input_ids", "past"],
                lmopt.output_names = ["scaled", "present"]} {
  %new = lmopt.constant dense<1.0> : tensor<1x2x1x4xf32>
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %scaled = lmopt.mul %past, %two : (tensor<?x2x?x4xf32>, tensor<f32>) -> tensor<?x2x?x4xf32> loc("scale_past")
  %present = lmopt.concat %past, %new {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<1x2x1x4xf32>) -> tensor<?x2x?x4xf32> loc("present")
  return %scaled, %present : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
}
