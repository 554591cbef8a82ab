// Queries flattened into the batch times position keys shared by the batch
// (fuse-attention-flat-heads.mlir): tiled as a concat of copies, and
// expanded. As @main for lmopt-interpret.
func.func @main(%q: tensor<2x3x4x8xf32>, %pos: tensor<3x5x8xf32>) -> (tensor<6x4x5xf32>, tensor<6x4x5xf32>)
    attributes {lmopt.input_names = ["q", "pos"],
                lmopt.output_names = ["tiled", "expanded"]} {
  %flat = lmopt.constant dense<[6, 4, 8]> : tensor<3xi64>
  %posflat = lmopt.constant dense<[6, 5, 8]> : tensor<3xi64>
  %wide = lmopt.constant dense<[2, 3, 5, 8]> : tensor<4xi64>
  %q3 = lmopt.reshape %q, %flat : (tensor<2x3x4x8xf32>, tensor<3xi64>) -> tensor<6x4x8xf32>
  %tiled = lmopt.concat %pos, %pos {axis = 0 : i64} : (tensor<3x5x8xf32>, tensor<3x5x8xf32>) -> tensor<6x5x8xf32>
  %tT = lmopt.transpose %tiled {perm = array<i64: 0, 2, 1>} : tensor<6x5x8xf32> -> tensor<6x8x5xf32>
  %a = lmopt.matmul %q3, %tT : (tensor<6x4x8xf32>, tensor<6x8x5xf32>) -> tensor<6x4x5xf32>
  %pos4 = lmopt.unsqueeze %pos {axes = array<i64: 0>} : tensor<3x5x8xf32> -> tensor<1x3x5x8xf32>
  %expanded = lmopt.expand %pos4, %wide : (tensor<1x3x5x8xf32>, tensor<4xi64>) -> tensor<2x3x5x8xf32>
  %e3 = lmopt.reshape %expanded, %posflat : (tensor<2x3x5x8xf32>, tensor<3xi64>) -> tensor<6x5x8xf32>
  %eT = lmopt.transpose %e3 {perm = array<i64: 0, 2, 1>} : tensor<6x5x8xf32> -> tensor<6x8x5xf32>
  %b = lmopt.matmul %q3, %eT : (tensor<6x4x8xf32>, tensor<6x8x5xf32>) -> tensor<6x4x5xf32>
  return %a, %b : tensor<6x4x5xf32>, tensor<6x4x5xf32>
}
