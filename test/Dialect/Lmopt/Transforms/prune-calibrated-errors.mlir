// RUN: lmopt-opt %s -split-input-file -verify-diagnostics -lmopt-prune="ffn=0.5 heads=0.5 criterion=wanda"

// Diagnostics: a calibration criterion without the statistics (lmopt-opt
// on a module no calibration run annotated), or with statistics of another
// width; each names the linear, and nothing is cut.
func.func @no_stats(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w1 = lmopt.constant dense<1.0> : tensor<2x4xf32>
  %w2 = lmopt.constant dense<1.0> : tensor<4x2xf32>
  // expected-error @unknown {{lmopt-prune: criterion=wanda reads calibration statistics, and linear 'up' has no lmopt.activation_stats 'l2' (lmopt-compile measures them with --calibration)}}
  %h = lmopt.linear %x, %w1 : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32> loc("up")
  %y = lmopt.linear %h, %w2 : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @wrong_width(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w1 = lmopt.constant dense<1.0> : tensor<2x4xf32>
  %w2 = lmopt.constant dense<1.0> : tensor<4x2xf32>
  %h = lmopt.linear %x, %w1 {lmopt.activation_stats = {l2 = array<f32: 1.0, 1.0>}} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  // expected-error @+1 {{lmopt.activation_stats 'l2' has 3 entries; its input has 4}}
  %y = lmopt.linear %h, %w2 {lmopt.activation_stats = {l2 = array<f32: 1.0, 1.0, 1.0>}} : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
