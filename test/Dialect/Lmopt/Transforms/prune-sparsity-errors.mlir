// RUN: lmopt-opt %s -split-input-file -verify-diagnostics -lmopt-prune="sparsity=2:4 criterion=wanda"

// Wanda sparsity reads the linear's input norms, which only a calibration
// run attaches: an error naming the linear, and nothing is cut.
func.func @no_stats(%x: tensor<3x8xf32>) -> tensor<3x2xf32> {
  %w = lmopt.constant dense<1.0> : tensor<8x2xf32>
  // expected-error @unknown {{lmopt-prune: criterion=wanda reads calibration statistics, and linear 'proj' has no lmopt.activation_stats 'l2' (lmopt-compile measures them with --calibration)}}
  %y = lmopt.linear %x, %w : (tensor<3x8xf32>, tensor<8x2xf32>) -> tensor<3x2xf32> loc("proj")
  return %y : tensor<3x2xf32>
}
