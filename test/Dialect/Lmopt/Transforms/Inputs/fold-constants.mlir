// DeBERTa's relative-position projection in small (fold-constants.mlir):
// a constant table layer-normed, projected through a layer's weights and
// split into heads, read by a product with the run-time queries. As @main
// for lmopt-interpret.
func.func @main(%q: tensor<2x4x8xf32>) -> tensor<2x4x6xf32>
    attributes {lmopt.input_names = ["q"], lmopt.output_names = ["scores"]} {
  %table = lmopt.constant dense<[[0.1, -0.2, 0.3, 0.05, -0.4, 0.2, 0.7, -0.1], [0.5, 0.25, -0.6, 0.1, 0.2, -0.3, 0.0, 0.4], [-0.3, 0.9, 0.1, -0.2, 0.6, 0.1, -0.5, 0.3], [0.2, -0.7, 0.4, 0.8, -0.1, 0.3, 0.2, -0.6], [0.6, 0.1, -0.2, -0.5, 0.3, 0.7, -0.4, 0.1], [-0.1, 0.3, 0.5, -0.3, -0.6, 0.2, 0.4, 0.9]]> : tensor<6x8xf32>
  %gamma = lmopt.constant dense<[1.0, 0.5, 1.5, 2.0, 0.75, 1.25, 1.0, 0.5]> : tensor<8xf32>
  %beta = lmopt.constant dense<[0.0, 0.1, -0.1, 0.2, 0.0, -0.2, 0.1, 0.0]> : tensor<8xf32>
  %w = lmopt.constant dense<[[0.3, -0.1, 0.2, 0.4, -0.3, 0.1, 0.2, -0.2], [0.1, 0.5, -0.4, 0.2, 0.1, -0.1, 0.3, 0.6], [-0.2, 0.3, 0.1, -0.5, 0.4, 0.2, -0.1, 0.3], [0.4, -0.2, 0.3, 0.1, 0.2, 0.5, -0.3, 0.1], [0.2, 0.1, -0.3, 0.3, -0.2, 0.4, 0.1, -0.4], [-0.1, 0.4, 0.2, -0.2, 0.3, -0.3, 0.5, 0.2], [0.5, -0.3, 0.1, 0.2, 0.1, 0.2, -0.2, 0.3], [0.1, 0.2, 0.4, -0.1, -0.5, 0.1, 0.3, -0.3]]> : tensor<8x8xf32>
  %b = lmopt.constant dense<[0.01, -0.02, 0.03, 0.0, 0.05, -0.01, 0.02, 0.04]> : tensor<8xf32>
  %norm = lmopt.layer_norm %table, %gamma, %beta {axis = -1 : i64, epsilon = 1.0e-07 : f32} : (tensor<6x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  %keys = lmopt.linear %norm, %w bias %b {transpose_weight = true} : (tensor<6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  %kT = lmopt.transpose %keys {perm = array<i64: 1, 0>} : tensor<6x8xf32> -> tensor<8x6xf32>
  %scores = lmopt.matmul %q, %kT : (tensor<2x4x8xf32>, tensor<8x6xf32>) -> tensor<2x4x6xf32>
  return %scores : tensor<2x4x6xf32>
}
