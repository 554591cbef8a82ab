// lmopt-prune's layers=N: the encoder layers of highest block importance
// (lmopt.block_importance on each attention, which a calibration run
// attaches) stay; the others go as with keep-layers (test/e2e/prune-layers.test
// checks the scores against PyTorch).
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="layers=2" 2>/dev/null | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="layers=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="layers=0.34" 2>&1 >/dev/null | FileCheck %s --check-prefix=FRACTION
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="layers=3" 2>&1 >/dev/null | FileCheck %s --check-prefix=ALL-REMARK
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="layers=3" 2>/dev/null | FileCheck %s --check-prefix=ALL
// RUN: not lmopt-opt %s -split-input-file -lmopt-prune="layers=4" 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not lmopt-opt %s -split-input-file -lmopt-prune="layers=1.5" 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: not lmopt-opt %s -split-input-file -lmopt-prune="layers=-1" 2>&1 | FileCheck %s --check-prefix=WHOLE-NEG
// RUN: not lmopt-opt %s -split-input-file -lmopt-prune="layers=1 keep-layers=0" 2>&1 | FileCheck %s --check-prefix=BOTH

// Layer 1 matters least (0.05): layers=2 drops it, so layer 2 reads layer
// 0's output; the scores are removed.
// REMARK: remark: {{.*}}layer 0 ('layer.0/attention'): block importance 0.300000, kept
// REMARK: remark: {{.*}}layer 1 ('layer.1/attention'): block importance 0.050000, dropped
// REMARK: remark: {{.*}}layer 2 ('layer.2/attention'): block importance 0.125000, kept
// REMARK: remark: kept 2 of 3 encoder layers
// CHECK-LABEL: func.func @ranked
// CHECK: lmopt.attention
// CHECK-NOT: block_importance
// CHECK: %[[N0:[a-z0-9_]+]], %{{.*}} = lmopt.skip_layer_norm
// CHECK: %[[Y0:[a-z0-9_]+]], %{{.*}} = lmopt.skip_layer_norm %{{.*}}, %[[N0]],
// CHECK: lmopt.linear %[[Y0]], %{{.*}} : (tensor<1x3x2xf32>, tensor<2x6xf32>)
// CHECK: lmopt.attention
// CHECK: lmopt.skip_layer_norm
// CHECK: %[[Y2:[a-z0-9_]+]], %{{.*}} = lmopt.skip_layer_norm
// CHECK-NOT: lmopt.attention
// CHECK: return %[[Y2]] :
// A fraction keeps ceil(0.34 * 3) = 2 layers; the same two.
// FRACTION: remark: {{.*}}layer 1 ('layer.1/attention'): block importance 0.050000, dropped
// FRACTION: remark: kept 2 of 3 encoder layers
// Negative: keeping every layer drops none.
// ALL-REMARK: remark: {{.*}}layer 1 ('layer.1/attention'): block importance 0.050000, kept
// ALL-REMARK: remark: kept 3 of 3 encoder layers
// ALL-LABEL: func.func @ranked
// ALL-COUNT-3: lmopt.attention
// ALL-LABEL: func.func @ties
// MANY: error: lmopt-prune: layers=4 keeps more layers than the model's 3
// WHOLE: error: lmopt-prune: layers=1.5 is neither a whole number of layers to keep nor a fraction in (0, 1)
// WHOLE-NEG: error: lmopt-prune: layers=-1 is neither a whole number of layers to keep nor a fraction in (0, 1)
// BOTH: error: lmopt-prune: give keep-layers or layers=1, not both
func.func @ranked(%x: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %wqkv = lmopt.constant dense<0.5> : tensor<2x6xf32>
  %wo = lmopt.constant dense<0.25> : tensor<2x2xf32>
  %g = lmopt.constant dense<1.0> : tensor<2xf32>
  %w1 = lmopt.constant dense<0.5> : tensor<2x4xf32>
  %w2 = lmopt.constant dense<0.25> : tensor<4x2xf32>
  %qkv0 = lmopt.linear %x, %wqkv : (tensor<1x3x2xf32>, tensor<2x6xf32>) -> tensor<1x3x6xf32>
  %s0:3 = lmopt.split %qkv0 {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x3x6xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %a0 = lmopt.attention %s0#0, %s0#1, %s0#2 {num_heads = 1 : i64, lmopt.block_importance = 0.3 : f64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32> loc("layer.0/attention")
  %o0 = lmopt.linear %a0, %wo : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %n0:2 = lmopt.skip_layer_norm %o0, %x, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %h0 = lmopt.linear %n0#0, %w1 {activation = #lmopt.activation<gelu>} : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %f0 = lmopt.linear %h0, %w2 : (tensor<1x3x4xf32>, tensor<4x2xf32>) -> tensor<1x3x2xf32>
  %y0:2 = lmopt.skip_layer_norm %f0, %n0#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %qkv1 = lmopt.linear %y0#0, %wqkv : (tensor<1x3x2xf32>, tensor<2x6xf32>) -> tensor<1x3x6xf32>
  %s1:3 = lmopt.split %qkv1 {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x3x6xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %a1 = lmopt.attention %s1#0, %s1#1, %s1#2 {num_heads = 1 : i64, lmopt.block_importance = 0.05 : f64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32> loc("layer.1/attention")
  %o1 = lmopt.linear %a1, %wo : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %n1:2 = lmopt.skip_layer_norm %o1, %y0#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %h1 = lmopt.linear %n1#0, %w1 {activation = #lmopt.activation<gelu>} : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %f1 = lmopt.linear %h1, %w2 : (tensor<1x3x4xf32>, tensor<4x2xf32>) -> tensor<1x3x2xf32>
  %y1:2 = lmopt.skip_layer_norm %f1, %n1#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %qkv2 = lmopt.linear %y1#0, %wqkv : (tensor<1x3x2xf32>, tensor<2x6xf32>) -> tensor<1x3x6xf32>
  %s2:3 = lmopt.split %qkv2 {axis = 2 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<1x3x6xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %a2 = lmopt.attention %s2#0, %s2#1, %s2#2 {num_heads = 1 : i64, lmopt.block_importance = 0.125 : f64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32> loc("layer.2/attention")
  %o2 = lmopt.linear %a2, %wo : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %n2:2 = lmopt.skip_layer_norm %o2, %y1#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  %h2 = lmopt.linear %n2#0, %w1 {activation = #lmopt.activation<gelu>} : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %f2 = lmopt.linear %h2, %w2 : (tensor<1x3x4xf32>, tensor<4x2xf32>) -> tensor<1x3x2xf32>
  %y2:2 = lmopt.skip_layer_norm %f2, %n2#0, %g : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>)
  return %y2#0 : tensor<1x3x2xf32>
}

// -----

// Ties go to the lower index: layers 0 and 1 score the same, layer 0 stays.
// REMARK: remark: {{.*}}layer 0 ('layer.0/attention'): block importance 0.200000, kept
// REMARK: remark: {{.*}}layer 1 ('layer.1/attention'): block importance 0.200000, dropped
// REMARK: remark: {{.*}}layer 2 ('layer.2/attention'): block importance 0.900000, kept
// CHECK-LABEL: func.func @ties
// CHECK-COUNT-2: lmopt.attention
// CHECK-NOT: lmopt.attention
func.func @ties(%x: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
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
  %a1 = lmopt.attention %s1#0, %s1#1, %s1#2 {num_heads = 1 : i64, lmopt.block_importance = 0.2 : f64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32> loc("layer.1/attention")
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
