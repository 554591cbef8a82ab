// RUN: lmopt-opt %s --split-input-file --lmopt-autodiff --verify-diagnostics | FileCheck %s

// The gradients follow the loss, named after their parameters; an
// embedding's is a gather_grad, an unused parameter's zeros.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: -> (tensor<f32>, tensor<10x4xf32> {lmopt.gradient = "table"}, tensor<3xf32> {lmopt.gradient = "unused"})
// CHECK: %[[G:.*]] = lmopt.gather_grad %{{.*}}, %arg1 : (tensor<?x?x4xf32>, tensor<?x?xi64>) -> tensor<10x4xf32>
// CHECK: %[[Z:.*]] = lmopt.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %{{.*}}, %[[G]], %[[Z]]
func.func @embedding(%t: tensor<10x4xf32> {lmopt.trainable = "table"},
                     %ids: tensor<?x?xi64>,
                     %u: tensor<3xf32> {lmopt.trainable = "unused"}) -> tensor<f32> {
  %0 = lmopt.gather %t, %ids : (tensor<10x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %1 = lmopt.reduce_mean %0 {keepdims = false} : tensor<?x?x4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Without trainable arguments the function is left alone.
// CHECK-LABEL: func.func @inference
// CHECK-SAME: -> tensor<f32>
// CHECK-NEXT: return %arg0
func.func @inference(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

func.func @no_rule(%x: tensor<4xf32> {lmopt.trainable = "x"}) -> tensor<f32> {
  // expected-error @+1 {{'lmopt.cumsum' lies between the parameters and the loss but has no gradient rule}}
  %0 = lmopt.cumsum %x {axis = 0 : i64} : tensor<4xf32>
  %1 = lmopt.reduce_sum %0 {keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// expected-error @+1 {{the loss must be a rank-0 float tensor, not 'tensor<4xf32>'}}
func.func @not_scalar(%x: tensor<4xf32> {lmopt.trainable = "x"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @gather_dynamic_table(%t: tensor<?x4xf32> {lmopt.trainable = "t"}, %ids: tensor<3xi64>) -> tensor<f32> {
  // expected-error @+1 {{no gradient for 'lmopt.gather' along axis 0 of 'tensor<?x4xf32>' with indices of rank 1; only rows of a static table (axis 0) or a single index}}
  %0 = lmopt.gather %t, %ids : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %1 = lmopt.reduce_sum %0 {keepdims = false} : tensor<3x4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @quantized_linear(%x: tensor<2x4xf32> {lmopt.trainable = "x"}, %w: tensor<4x3x!quant.uniform<i8:f32, 0.1>>) -> tensor<f32> {
  // expected-error @+1 {{no gradient for a quantized 'lmopt.linear'; train the float model and quantize after}}
  %0 = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<2x4xf32>, tensor<4x3x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x3xf32>
  %1 = lmopt.reduce_sum %0 {keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @kv_cache_attention(%q: tensor<1x2x8xf32> {lmopt.trainable = "q"}, %k: tensor<1x2x5x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{no gradient for 'lmopt.attention' with kv_heads_split (a key/value cache); training runs without one}}
  %0 = lmopt.attention %q, %k, %k {num_heads = 2 : i64, kv_heads_split = true} : (tensor<1x2x8xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x8xf32>
  %1 = lmopt.reduce_sum %0 {keepdims = false} : tensor<1x2x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Attention's backward is one attention_grad on the forward's query, key,
// value and mask with its flags; nothing of the scores' size is built.
// CHECK-LABEL: func.func @attention
// CHECK: %[[Y:.*]] = lmopt.attention %arg0, %arg1, %arg2 mask %arg3
// CHECK: %[[DQ:[a-z_0-9]+]], %[[DK:[a-z_0-9]+]], %[[DV:[a-z_0-9]+]] = lmopt.attention_grad %arg0, %arg1, %arg2, %{{.*}} mask %arg3 {causal = true, num_heads = 2 : i64, scale = 5.000000e-01 : f32, zero_masked_rows = true}
// CHECK-NOT: lmopt.softmax
// CHECK-NOT: lmopt.matmul
// CHECK: return %{{.*}}, %[[DQ]], %[[DK]], %[[DV]]
func.func @attention(%q: tensor<2x3x8xf32> {lmopt.trainable = "q"},
                     %k: tensor<2x4x8xf32> {lmopt.trainable = "k"},
                     %v: tensor<2x4x8xf32> {lmopt.trainable = "v"},
                     %m: tensor<2x1x1x4xi1>) -> tensor<f32> {
  %0 = lmopt.attention %q, %k, %v mask %m {num_heads = 2 : i64, scale = 0.5 : f32, causal = true, zero_masked_rows = true} : (tensor<2x3x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x1x4xi1>) -> tensor<2x3x8xf32>
  %1 = lmopt.reduce_sum %0 {keepdims = false} : tensor<2x3x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A score bias needs its own gradient (the scores'), which the fused
// backward does not give: the decomposed rule stays.
// CHECK-LABEL: func.func @negative_attention_bias
// CHECK-NOT: lmopt.attention_grad
// CHECK: lmopt.softmax
// CHECK: return
func.func @negative_attention_bias(%q: tensor<2x3x8xf32> {lmopt.trainable = "q"},
                                   %b: tensor<1x2x3x3xf32> {lmopt.trainable = "b"}) -> tensor<f32> {
  %0 = lmopt.attention %q, %q, %q bias %b {num_heads = 2 : i64} : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<1x2x3x3xf32>) -> tensor<2x3x8xf32>
  %1 = lmopt.reduce_sum %0 {keepdims = false} : tensor<2x3x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A value head size of its own (4 here, the query's 8): the decomposed rule.
// CHECK-LABEL: func.func @negative_attention_value_head_size
// CHECK-NOT: lmopt.attention_grad
// CHECK: lmopt.softmax
// CHECK: return
func.func @negative_attention_value_head_size(%q: tensor<2x3x16xf32> {lmopt.trainable = "q"},
                                              %v: tensor<2x3x8xf32> {lmopt.trainable = "v"}) -> tensor<f32> {
  %0 = lmopt.attention %q, %q, %v {num_heads = 2 : i64} : (tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %1 = lmopt.reduce_sum %0 {keepdims = false} : tensor<2x3x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
