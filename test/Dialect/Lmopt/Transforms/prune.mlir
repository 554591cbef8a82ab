// RUN: lmopt-opt %s -split-input-file -lmopt-prune="ffn=0.5 heads=0.5" | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="ffn=0.5 heads=0.5" --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: not lmopt-opt %s -split-input-file -lmopt-prune="ffn=1.0" 2>&1 | FileCheck %s --check-prefix=RATIO
// RUN: not lmopt-opt %s -split-input-file -lmopt-prune="heads=-0.25" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not lmopt-opt %s -split-input-file -lmopt-prune="ffn=0.5 criterion=random" 2>&1 | FileCheck %s --check-prefix=CRITERION
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="ffn=0.25 multiple=4" | FileCheck %s --check-prefix=MULTIPLE
// RUN: not lmopt-opt %s -split-input-file -lmopt-prune="keep-layers=0" 2>&1 | FileCheck %s --check-prefix=LAYERS

// Layer reduction (keep-layers) on whole encoders: test/e2e/prune.test.
// LAYERS: error: lmopt-prune: keep-layers names layer 0; the model has no encoder layers

// RATIO: error: lmopt-prune: ffn=1.00 is not a fraction in [0, 1)
// NEGATIVE: error: lmopt-prune: heads=-0.25 is not a fraction in [0, 1)
// CRITERION: error: lmopt-prune: unknown criterion 'random' (known: magnitude, wanda, activation, gradient)

// Neurons 0 and 2 carry the largest weights (W1 columns and W2 rows
// together: 25+0, 0.02, 9+16, 0.08), so they stay, in their order; b1
// keeps their entries. The rounding to a multiple of 4 keeps all four.
// CHECK-LABEL: func @ffn
// CHECK-DAG: %[[W1:.*]] = lmopt.constant dense<{{\[}}[5.000000e+00, 3.000000e+00], [0.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[B1:.*]] = lmopt.constant dense<[1.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[W2:.*]] = lmopt.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[H:.*]] = lmopt.linear %arg0, %[[W1]] bias %[[B1]] {activation = #lmopt.activation<gelu>} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK: %[[Y:.*]] = lmopt.linear %[[H]], %[[W2]] residual %arg0 : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK: return %[[Y]]
// REPORT: pruned_ffn {{ *}}1 {{ *}}0
// MULTIPLE-LABEL: func @ffn
// MULTIPLE: tensor<2x4xf32>
// MULTIPLE-NOT: pruned
func.func @ffn(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w1 = lmopt.constant dense<[[5.0, 0.1, 3.0, 0.2], [0.0, 0.1, 4.0, 0.2]]> : tensor<2x4xf32>
  %b1 = lmopt.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %w2 = lmopt.constant dense<[[1.0, 2.0], [0.0, 0.0], [5.0, 6.0], [0.0, 0.0]]> : tensor<4x2xf32>
  %h = lmopt.linear %x, %w1 bias %b1 {activation = #lmopt.activation<gelu>} : (tensor<3x2xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %y = lmopt.linear %h, %w2 residual %x : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// PyTorch's layout ([N, K] weights, transpose_weight): neurons are W1 rows
// and W2 columns. Neuron 1 is the heaviest, then neuron 3; ties would go
// to the lower index.
// CHECK-LABEL: func @ffn_transposed
// CHECK-DAG: %[[W1:.*]] = lmopt.constant dense<{{\[}}[2.000000e+00, 2.000000e+00], [1.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[W2:.*]] = lmopt.constant dense<{{\[}}[7.000000e+00, 8.000000e+00]]> : tensor<1x2xf32>
// CHECK: lmopt.linear %arg0, %[[W1]] {transpose_weight = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
// CHECK: lmopt.linear %{{.*}}, %[[W2]] {transpose_weight = true} : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x1xf32>
func.func @ffn_transposed(%x: tensor<3x2xf32>) -> tensor<3x1xf32> {
  %w1 = lmopt.constant dense<[[0.5, 0.5], [2.0, 2.0], [0.5, 0.5], [1.0, 1.0]]> : tensor<4x2xf32>
  %w2 = lmopt.constant dense<[[0.0, 7.0, 0.0, 8.0]]> : tensor<1x4xf32>
  %h = lmopt.linear %x, %w1 {transpose_weight = true} : (tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<3x4xf32>
  %y = lmopt.linear %h, %w2 {transpose_weight = true} : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x1xf32>
  return %y : tensor<3x1xf32>
}

// -----

// Negative: the inner linear's output is also returned, so removing its
// neurons would change a result. Near miss, nothing cut.
// CHECK-LABEL: func @ffn_shared_hidden
// CHECK: lmopt.linear %arg0, %{{.*}} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// REPORT: near miss: pruned_ffn {{.*}}: the inner linear's output has another reader
func.func @ffn_shared_hidden(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x4xf32>) {
  %w1 = lmopt.constant dense<1.0> : tensor<2x4xf32>
  %w2 = lmopt.constant dense<1.0> : tensor<4x2xf32>
  %h = lmopt.linear %x, %w1 : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %y = lmopt.linear %h, %w2 : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  return %y, %h : tensor<3x2xf32>, tensor<3x4xf32>
}

// -----

// Two heads of width 1 (hidden 2): head 1 has the heavier Q/K/V columns and
// output row, so it stays; the QKV weight keeps columns 1, 3 and 5, the
// bias their entries, the output projection row 1; num_heads drops to 1
// and the explicit scale stays.
// REPORT: pruned_heads {{ *}}1 {{ *}}0
// CHECK-LABEL: func @heads
// CHECK-DAG: %[[WQKV:.*]] = lmopt.constant dense<{{\[}}[2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<1x3xf32>
// CHECK-DAG: %[[BQKV:.*]] = lmopt.constant dense<[2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[WO:.*]] = lmopt.constant dense<{{\[}}[3.000000e+00, 4.000000e+00]]> : tensor<1x2xf32>
// CHECK: %[[QKV:.*]] = lmopt.linear %arg0, %[[WQKV]] bias %[[BQKV]] : (tensor<1x5x1xf32>, tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x5x3xf32>
// CHECK: %[[P:.*]]:3 = lmopt.split %[[QKV]] {axis = 2 : i64, split_sizes = array<i64: 1, 1, 1>}
// CHECK: %[[A:.*]] = lmopt.attention %[[P]]#0, %[[P]]#1, %[[P]]#2 mask %arg1 {causal = true, num_heads = 1 : i64, scale = 5.000000e-01 : f32} : (tensor<1x5x1xf32>, tensor<1x5x1xf32>, tensor<1x5x1xf32>, tensor<1x1x5x5xi1>) -> tensor<1x5x1xf32>
// CHECK: lmopt.linear %[[A]], %[[WO]] : (tensor<1x5x1xf32>, tensor<1x2xf32>) -> tensor<1x5x2xf32>
func.func @heads(%x: tensor<1x5x1xf32>, %mask: tensor<1x1x5x5xi1>) -> tensor<1x5x2xf32> {
  %wqkv = lmopt.constant dense<[[1.0, 2.0, 0.5, 4.0, 0.5, 6.0]]> : tensor<1x6xf32>
  %bqkv = lmopt.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %wo = lmopt.constant dense<[[1.0, 0.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %qkv = lmopt.linear %x, %wqkv bias %bqkv : (tensor<1x5x1xf32>, tensor<1x6xf32>, tensor<6xf32>) -> tensor<1x5x6xf32>
  %p:3 = lmopt.split %qkv {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x5x6xf32>) -> (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>)
  %a = lmopt.attention %p#0, %p#1, %p#2 mask %mask {num_heads = 2 : i64, scale = 0.5 : f32, causal = true} : (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x1x5x5xi1>) -> tensor<1x5x2xf32>
  %y = lmopt.linear %a, %wo : (tensor<1x5x2xf32>, tensor<2x2xf32>) -> tensor<1x5x2xf32>
  return %y : tensor<1x5x2xf32>
}

// -----

// Negative: a per-head mask would need its own cut; the attention stays.
// CHECK-LABEL: func @heads_mask_per_head
// CHECK: lmopt.attention {{.*}}num_heads = 2
// REPORT: near miss: pruned_heads {{.*}}: the mask has a head dim
func.func @heads_mask_per_head(%x: tensor<1x5x1xf32>, %mask: tensor<1x2x5x5xf32>) -> tensor<1x5x2xf32> {
  %wqkv = lmopt.constant dense<1.0> : tensor<1x6xf32>
  %wo = lmopt.constant dense<1.0> : tensor<2x2xf32>
  %qkv = lmopt.linear %x, %wqkv : (tensor<1x5x1xf32>, tensor<1x6xf32>) -> tensor<1x5x6xf32>
  %p:3 = lmopt.split %qkv {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x5x6xf32>) -> (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>)
  %a = lmopt.attention %p#0, %p#1, %p#2 mask %mask {num_heads = 2 : i64} : (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x2x5x5xf32>) -> tensor<1x5x2xf32>
  %y = lmopt.linear %a, %wo : (tensor<1x5x2xf32>, tensor<2x2xf32>) -> tensor<1x5x2xf32>
  return %y : tensor<1x5x2xf32>
}

// -----

// Negative: separate Q, K and V products (not merged by lmopt-fuse-qkv).
// CHECK-LABEL: func @heads_unmerged
// CHECK: lmopt.attention {{.*}}num_heads = 2
// REPORT: near miss: pruned_heads {{.*}}: query, key and value are not the three parts of one split of a QKV linear
func.func @heads_unmerged(%q: tensor<1x5x2xf32>, %k: tensor<1x5x2xf32>, %v: tensor<1x5x2xf32>) -> tensor<1x5x2xf32> {
  %a = lmopt.attention %q, %k, %v {num_heads = 2 : i64} : (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>) -> tensor<1x5x2xf32>
  return %a : tensor<1x5x2xf32>
}

// -----

// A function marked lmopt.frozen (a distillation teacher compiled beside
// its student, lmopt-compile --distill-from) keeps every unit.
// CHECK-LABEL: func @frozen_ffn
// CHECK: lmopt.constant {{.*}} : tensor<2x4xf32>
// CHECK: lmopt.linear {{.*}} -> tensor<3x4xf32>
func.func @frozen_ffn(%x: tensor<3x2xf32>) -> tensor<3x2xf32> attributes {lmopt.frozen} {
  %w1 = lmopt.constant dense<[[5.0, 0.1, 3.0, 0.2], [0.0, 0.1, 4.0, 0.2]]> : tensor<2x4xf32>
  %b1 = lmopt.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %w2 = lmopt.constant dense<[[1.0, 2.0], [0.0, 0.0], [5.0, 6.0], [0.0, 0.0]]> : tensor<4x2xf32>
  %h = lmopt.linear %x, %w1 bias %b1 {activation = #lmopt.activation<gelu>} : (tensor<3x2xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %y = lmopt.linear %h, %w2 residual %x : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
