// RUN: lmopt-opt %s -split-input-file -verify-diagnostics -lmopt-prune="layers=2"

// Diagnostics of layers=N: a layer without its block importance (lmopt-opt
// on a module no calibration run annotated) is an error naming it, and
// nothing is dropped.
func.func @missing(%x: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %wqkv = lmopt.constant dense<0.5> : tensor<2x6xf32>
  %wo = lmopt.constant dense<0.25> : tensor<2x2xf32>
  %g = lmopt.constant dense<1.0> : tensor<2xf32>
  %w1 = lmopt.constant dense<0.5> : tensor<2x4xf32>
  %w2 = lmopt.constant dense<0.25> : tensor<4x2xf32>
  %qkv0 = lmopt.linear %x, %wqkv : (tensor<1x3x2xf32>, tensor<2x6xf32>) -> tensor<1x3x6xf32>
  %s0:3 = lmopt.split %qkv0 {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x3x6xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %a0 = lmopt.attention %s0#0, %s0#1, %s0#2 {num_heads = 1 : i64, lmopt.block_importance = 0.2 : f64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32> loc("layer.0/attention")
  %o0 = lmopt.linear %a0, %wo : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %n0:2 = lmopt.skip_layer_norm %o0, %x, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %h0 = lmopt.linear %n0#0, %w1 {activation = #lmopt.activation<gelu>} : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %f0 = lmopt.linear %h0, %w2 : (tensor<1x3x4xf32>, tensor<4x2xf32>) -> tensor<1x3x2xf32>
  %y0:2 = lmopt.skip_layer_norm %f0, %n0#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %qkv1 = lmopt.linear %y0#0, %wqkv : (tensor<1x3x2xf32>, tensor<2x6xf32>) -> tensor<1x3x6xf32>
  %s1:3 = lmopt.split %qkv1 {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x3x6xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  // expected-error @unknown {{lmopt-prune: layers=2 ranks layers by block importance; layer 1 ('layer.1/attention') has no lmopt.block_importance (lmopt-compile --calibration measures it)}}
  %a1 = lmopt.attention %s1#0, %s1#1, %s1#2 {num_heads = 1 : i64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32> loc("layer.1/attention")
  %o1 = lmopt.linear %a1, %wo : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %n1:2 = lmopt.skip_layer_norm %o1, %y0#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %h1 = lmopt.linear %n1#0, %w1 {activation = #lmopt.activation<gelu>} : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %f1 = lmopt.linear %h1, %w2 : (tensor<1x3x4xf32>, tensor<4x2xf32>) -> tensor<1x3x2xf32>
  %y1:2 = lmopt.skip_layer_norm %f1, %n1#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %qkv2 = lmopt.linear %y1#0, %wqkv : (tensor<1x3x2xf32>, tensor<2x6xf32>) -> tensor<1x3x6xf32>
  %s2:3 = lmopt.split %qkv2 {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x3x6xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %a2 = lmopt.attention %s2#0, %s2#1, %s2#2 {num_heads = 1 : i64, lmopt.block_importance = 0.9 : f64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32> loc("layer.2/attention")
  %o2 = lmopt.linear %a2, %wo : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %n2:2 = lmopt.skip_layer_norm %o2, %y1#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %h2 = lmopt.linear %n2#0, %w1 {activation = #lmopt.activation<gelu>} : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %f2 = lmopt.linear %h2, %w2 : (tensor<1x3x4xf32>, tensor<4x2xf32>) -> tensor<1x3x2xf32>
  %y2:2 = lmopt.skip_layer_norm %f2, %n2#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  return %y2#0 : tensor<1x3x2xf32>
}

// -----

// No encoder layers to rank.
// expected-error @+1 {{lmopt-prune: layers=2 ranks encoder layers; the model has none}}
module {
func.func @none(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  return %x : tensor<3x2xf32>
}
}
