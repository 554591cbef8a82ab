// RUN: lmopt-opt %s -split-input-file -verify-diagnostics -lmopt-prune="ffn=0.5 heads=0.5 criterion=gradient"

// Diagnostics of the gradient criterion: a module without the mask
// gradients a labelled calibration run attaches, or with gradients of
// another width than the heads; each names the linear, and nothing is cut.
func.func @no_gradients(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w1 = lmopt.constant dense<1.0> : tensor<2x4xf32>
  %w2 = lmopt.constant dense<1.0> : tensor<4x2xf32>
  %h = lmopt.linear %x, %w1 : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  // expected-error @unknown {{lmopt-prune: criterion=gradient reads calibration statistics, and linear 'down' has no lmopt.activation_stats 'grad_feature' (lmopt-compile measures them with --calibration samples that hold labels)}}
  %y = lmopt.linear %h, %w2 {lmopt.activation_stats = {l2 = array<f32: 1.0, 1.0, 1.0, 1.0>}} : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32> loc("down")
  return %y : tensor<3x2xf32>
}

// -----

func.func @wrong_heads(%x: tensor<1x5x1xf32>) -> tensor<1x5x2xf32> {
  %wqkv = lmopt.constant dense<1.0> : tensor<1x6xf32>
  %wo = lmopt.constant dense<1.0> : tensor<2x2xf32>
  %qkv = lmopt.linear %x, %wqkv : (tensor<1x5x1xf32>, tensor<1x6xf32>) -> tensor<1x5x6xf32>
  %p:3 = lmopt.split %qkv {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x5x6xf32>) -> (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>)
  %a = lmopt.attention %p#0, %p#1, %p#2 {num_heads = 2 : i64} : (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>) -> tensor<1x5x2xf32>
  // expected-error @+1 {{lmopt.activation_stats 'grad_head' has 3 entries; its input has 2}}
  %y = lmopt.linear %a, %wo {lmopt.activation_stats = {grad_head = array<f32: 0.1, 0.2, 0.3>}} : (tensor<1x5x2xf32>, tensor<2x2xf32>) -> tensor<1x5x2xf32>
  return %y : tensor<1x5x2xf32>
}
