// DeBERTa-v2's attention on heads flattened into the batch (see
// fuse-attention-flat-heads.mlir), as @main for lmopt-interpret.
func.func @main(%x: tensor<?x?x64xf32>, %y: tensor<?x?x64xf32>, %rel: tensor<?x?x?xf32>, %mask: tensor<?x1x?x?xi1>) -> tensor<?x?x64xf32>
    attributes {lmopt.input_names = ["x", "y", "rel", "mask"],
                lmopt.output_names = ["context"]} {
  // Q, K and V: three views of the hidden states (projections in a model).
  %q = lmopt.add %x, %y : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %k = lmopt.sub %x, %y : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %v = lmopt.mul %x, %y : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %minus1 = lmopt.constant dense<-1> : tensor<1xi64>
  %heads = lmopt.constant dense<4> : tensor<1xi64>
  %three = lmopt.constant dense<3.0> : tensor<f32>
  %fill = lmopt.constant dense<-3.40282347E+38> : tensor<f32>
  %b = lmopt.shape %q {end = 1 : i64} : tensor<?x?x64xf32> -> tensor<1xi64>
  %s = lmopt.shape %q {start = 1 : i64, end = 2 : i64} : tensor<?x?x64xf32> -> tensor<1xi64>
  %split = lmopt.concat %b, %s, %heads, %minus1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %q4 = lmopt.reshape %q, %split : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x?xf32>
  %qt = lmopt.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x?xf32> -> tensor<?x4x?x?xf32>
  %qd = lmopt.shape %q4 {start = 3 : i64} : tensor<?x?x4x?xf32> -> tensor<1xi64>
  %flat = lmopt.concat %minus1, %s, %qd {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %q3 = lmopt.reshape %qt, %flat : (tensor<?x4x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %k4 = lmopt.reshape %k, %split : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x?xf32>
  %kt = lmopt.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x?xf32> -> tensor<?x4x?x?xf32>
  %k3 = lmopt.reshape %kt, %flat : (tensor<?x4x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %v4 = lmopt.reshape %v, %split : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x?xf32>
  %vt = lmopt.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x?xf32> -> tensor<?x4x?x?xf32>
  %v3 = lmopt.reshape %vt, %flat : (tensor<?x4x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  // scale = sqrt(float(q3.size(-1)) * 3), from a dim the types leave dynamic
  %d1 = lmopt.shape %q3 {start = 2 : i64} : tensor<?x?x?xf32> -> tensor<1xi64>
  %d = lmopt.squeeze %d1 : tensor<1xi64> -> tensor<i64>
  %df = lmopt.cast %d : tensor<i64> -> tensor<f32>
  %d3 = lmopt.mul %df, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %scale = lmopt.sqrt %d3 : tensor<f32>
  %kT = lmopt.transpose %k3 {perm = array<i64: 0, 2, 1>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %kS = lmopt.div %kT, %scale : (tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %scores = lmopt.matmul %q3, %kS : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %biased = lmopt.add %scores, %rel : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %unflat = lmopt.concat %minus1, %heads, %s, %s {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %s4 = lmopt.reshape %biased, %unflat : (tensor<?x?x?xf32>, tensor<4xi64>) -> tensor<?x4x?x?xf32>
  %hidden = lmopt.not %mask : tensor<?x1x?x?xi1>
  %masked = lmopt.where %hidden, %fill, %s4 : (tensor<?x1x?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %p = lmopt.softmax %masked {axis = -1 : i64} : tensor<?x4x?x?xf32> loc("deberta_flat_heads")
  %pflat = lmopt.concat %minus1, %s, %s {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %p3 = lmopt.reshape %p, %pflat : (tensor<?x4x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %c3 = lmopt.matmul %p3, %v3 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %cunflat = lmopt.concat %minus1, %heads, %s, %qd {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %c4 = lmopt.reshape %c3, %cunflat : (tensor<?x?x?xf32>, tensor<4xi64>) -> tensor<?x4x?x?xf32>
  %ct = lmopt.transpose %c4 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x?xf32> -> tensor<?x?x4x?xf32>
  %merge = lmopt.concat %b, %s, %minus1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %out = lmopt.reshape %ct, %merge : (tensor<?x?x4x?xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  return %out : tensor<?x?x64xf32>
}
