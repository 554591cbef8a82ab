// RUN: lmopt-opt %s -split-input-file -lmopt-prune="ffn=0.5 heads=0.5 criterion=wanda" | FileCheck %s --check-prefix=WANDA
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="ffn=0.5 heads=0.5 criterion=activation" | FileCheck %s --check-prefix=ACT
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="ffn=0.5 heads=0.5" | FileCheck %s --check-prefix=MAG
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="ffn=0.5 heads=0.5 criterion=gradient" | FileCheck %s --check-prefix=GRAD

// The calibration criteria read lmopt.activation_stats on the linears
// (what lmopt-compile --calibration measures; here written by hand) and
// drop them once the inputs are cut.
//
// FFN, [K, N] weights: magnitude keeps neurons 0 and 2 (sum of squares 30,
// 1.03, 70, 0.31). Wanda, sum_k |W1[k,j]| l2_up[k] + l2_down[j] sum_n
// |W2[j,n]| with l2_up = [1, 100] and l2_down = 1: 8, 100.3, 14, 50.4, so
// neurons 1 and 3. Activation, the down projection's abs_mean
// [0.5, 0.1, 0.2, 0.9]: neurons 0 and 3. Gradient, the down projection's
// grad_feature [0.2, 0.9, 0.8, 0.1]: neurons 1 and 2.
// WANDA-LABEL: func @ffn
// WANDA-DAG: lmopt.constant dense<{{\[}}[1.000000e-01, 2.000000e-01], [1.000000e+00, 5.000000e-01]]> : tensor<2x2xf32>
// WANDA-DAG: lmopt.constant dense<1.000000e-01> : tensor<2x2xf32>
// WANDA-NOT: activation_stats
// WANDA: return
// ACT-LABEL: func @ffn
// ACT-DAG: lmopt.constant dense<{{\[}}[5.000000e+00, 2.000000e-01], [0.000000e+00, 5.000000e-01]]> : tensor<2x2xf32>
// ACT-DAG: lmopt.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [1.000000e-01, 1.000000e-01]]> : tensor<2x2xf32>
// ACT-NOT: activation_stats
// ACT: return
// MAG-LABEL: func @ffn
// MAG-DAG: lmopt.constant dense<{{\[}}[5.000000e+00, 3.000000e+00], [0.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// GRAD-LABEL: func @ffn
// GRAD-DAG: lmopt.constant dense<{{\[}}[1.000000e-01, 3.000000e+00], [1.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// GRAD-DAG: lmopt.constant dense<{{\[}}[1.000000e-01, 1.000000e-01], [5.000000e+00, 6.000000e+00]]> : tensor<2x2xf32>
// GRAD-NOT: activation_stats
// GRAD: return
func.func @ffn(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w1 = lmopt.constant dense<[[5.0, 0.1, 3.0, 0.2], [0.0, 1.0, 0.0, 0.5]]> : tensor<2x4xf32>
  %w2 = lmopt.constant dense<[[1.0, 2.0], [0.1, 0.1], [5.0, 6.0], [0.1, 0.1]]> : tensor<4x2xf32>
  %h = lmopt.linear %x, %w1 {activation = #lmopt.activation<relu>, lmopt.activation_stats = {l2 = array<f32: 1.0, 100.0>, abs_mean = array<f32: 1.0, 1.0>}} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %y = lmopt.linear %h, %w2 {lmopt.activation_stats = {l2 = array<f32: 1.0, 1.0, 1.0, 1.0>, abs_mean = array<f32: 0.5, 0.1, 0.2, 0.9>, grad_feature = array<f32: 0.2, 0.9, 0.8, 0.1>}} : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Two heads of width 1: magnitude keeps head 1 (Q/K/V columns 2, 4, 6,
// output row [3, 4]). Wanda, with the QKV input's l2 = [1] and the output
// projection's input l2 = [100, 1]: head 0 scores 2 + 100, head 1 12 + 7,
// so head 0 stays. Activation, head_l2_mean = [7, 1]: head 0. Gradient,
// grad_head = [0.1, 0.4]: head 1.
// WANDA-LABEL: func @heads
// WANDA-DAG: lmopt.constant dense<{{\[}}[1.000000e+00, 5.000000e-01, 5.000000e-01]]> : tensor<1x3xf32>
// WANDA-DAG: lmopt.constant dense<{{\[}}[1.000000e+00, 0.000000e+00]]> : tensor<1x2xf32>
// WANDA: num_heads = 1
// ACT-LABEL: func @heads
// ACT-DAG: lmopt.constant dense<{{\[}}[1.000000e+00, 5.000000e-01, 5.000000e-01]]> : tensor<1x3xf32>
// ACT: num_heads = 1
// MAG-LABEL: func @heads
// MAG-DAG: lmopt.constant dense<{{\[}}[2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<1x3xf32>
// GRAD-LABEL: func @heads
// GRAD-DAG: lmopt.constant dense<{{\[}}[2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<1x3xf32>
// GRAD-DAG: lmopt.constant dense<{{\[}}[3.000000e+00, 4.000000e+00]]> : tensor<1x2xf32>
// GRAD: num_heads = 1
func.func @heads(%x: tensor<1x5x1xf32>) -> tensor<1x5x2xf32> {
  %wqkv = lmopt.constant dense<[[1.0, 2.0, 0.5, 4.0, 0.5, 6.0]]> : tensor<1x6xf32>
  %wo = lmopt.constant dense<[[1.0, 0.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %qkv = lmopt.linear %x, %wqkv {lmopt.activation_stats = {l2 = array<f32: 1.0>, abs_mean = array<f32: 1.0>}} : (tensor<1x5x1xf32>, tensor<1x6xf32>) -> tensor<1x5x6xf32>
  %p:3 = lmopt.split %qkv {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x5x6xf32>) -> (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>)
  %a = lmopt.attention %p#0, %p#1, %p#2 {num_heads = 2 : i64} : (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>) -> tensor<1x5x2xf32>
  %y = lmopt.linear %a, %wo {lmopt.activation_stats = {l2 = array<f32: 100.0, 1.0>, abs_mean = array<f32: 1.0, 1.0>, head_l2_mean = array<f32: 7.0, 1.0>, grad_head = array<f32: 0.1, 0.4>}} : (tensor<1x5x2xf32>, tensor<2x2xf32>) -> tensor<1x5x2xf32>
  return %y : tensor<1x5x2xf32>
}
