// A mask built from `mask` broadcast against scores built from `x`, then
// flattened with a -1 that only divides out if the two inputs' batch and
// length are known equal (the dynamo exporter's DeBERTa attention).
func.func @main(%x: tensor<?x?xf32>, %mask: tensor<?x?xi64>) -> tensor<?x?x?xf32>
    attributes {lmopt.input_names = ["x", "mask"],
                lmopt.output_names = ["probs"]} {
  %b = lmopt.shape %x {end = 1 : i64} : tensor<?x?xf32> -> tensor<1xi64>
  %s = lmopt.shape %x {end = 2 : i64, start = 1 : i64} : tensor<?x?xf32> -> tensor<1xi64>
  %four = lmopt.constant dense<4> : tensor<1xi64>
  %minus1 = lmopt.constant dense<-1> : tensor<1xi64>
  %full = lmopt.concat %b, %four, %s, %s {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x4 = lmopt.unsqueeze %x {axes = array<i64: 1, 2>} : tensor<?x?xf32> -> tensor<?x1x1x?xf32>
  %scores = lmopt.expand %x4, %full : (tensor<?x1x1x?xf32>, tensor<4xi64>) -> tensor<?x4x?x?xf32>
  %m4 = lmopt.unsqueeze %mask {axes = array<i64: 1, 2>} : tensor<?x?xi64> -> tensor<?x1x1x?xi64>
  %m3 = lmopt.squeeze %m4 {axes = array<i64: -2>} : tensor<?x1x1x?xi64> -> tensor<?x1x?xi64>
  %m5 = lmopt.unsqueeze %m3 {axes = array<i64: -1>} : tensor<?x1x?xi64> -> tensor<?x1x?x1xi64>
  %mm = lmopt.mul %m4, %m5 : (tensor<?x1x1x?xi64>, tensor<?x1x?x1xi64>) -> tensor<?x1x?x?xi64>
  %cond = lmopt.cast %mm : tensor<?x1x?x?xi64> -> tensor<?x1x?x?xi1>
  %hidden = lmopt.not %cond : tensor<?x1x?x?xi1>
  %fill = lmopt.constant dense<-3.0e+38> : tensor<f32>
  %masked = lmopt.where %hidden, %fill, %scores : (tensor<?x1x?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %p = lmopt.softmax %masked {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %flat_shape = lmopt.concat %minus1, %s, %s {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %flat = lmopt.reshape %p, %flat_shape {allowzero = true} : (tensor<?x4x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %flat : tensor<?x?x?xf32>
}
