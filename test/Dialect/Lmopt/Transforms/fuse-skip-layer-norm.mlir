// RUN: lmopt-opt %s -lmopt-fuse-skip-layer-norm -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-fuse-skip-layer-norm -split-input-file --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// A BERT sublayer's end: residual add, layer norm, and the next residual
// reading the sum (here the add itself, as after attention output).
// CHECK-LABEL: func @residual
// CHECK-SAME: (%[[A:.*]]: tensor<?x16x64xf32>, %[[B:.*]]: tensor<?x16x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[BETA:.*]]: tensor<64xf32>)
// CHECK: %[[OUT:.*]], %[[SUM:.*]] = lmopt.skip_layer_norm %[[A]], %[[B]], %[[G]], %[[BETA]] {epsilon = 9.99999996E-13 : f32}
// CHECK-NOT: lmopt.layer_norm
// CHECK: %[[NEXT:.*]] = lmopt.add %[[SUM]], %[[OUT]]
// CHECK: return %[[NEXT]]
// REPORT: skip_layer_norm {{ *}}1 {{ *}}0
func.func @residual(%a: tensor<?x16x64xf32>, %b: tensor<?x16x64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<?x16x64xf32> {
  %sum = lmopt.add %a, %b : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32> loc("layer.0/Add")
  %ln = lmopt.layer_norm %sum, %gamma, %beta {epsilon = 1.0e-12 : f32} : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32> loc("layer.0/LayerNorm")
  %next = lmopt.add %sum, %ln : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
  return %next : tensor<?x16x64xf32>
}

// -----

// A layer norm without bias, whose sum has no other user.
// CHECK-LABEL: func @residual_no_bias
// CHECK-SAME: (%[[A:.*]]: tensor<2x8x32xf32>, %[[B:.*]]: tensor<2x8x32xf32>, %[[G:.*]]: tensor<32xf32>)
// CHECK: %[[OUT:.*]], %{{.*}} = lmopt.skip_layer_norm %[[A]], %[[B]], %[[G]] :
// CHECK: return %[[OUT]]
// REPORT: skip_layer_norm {{ *}}1 {{ *}}0
func.func @residual_no_bias(%a: tensor<2x8x32xf32>, %b: tensor<2x8x32xf32>, %gamma: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %sum = lmopt.add %a, %b : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %ln = lmopt.layer_norm %sum, %gamma : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %ln : tensor<2x8x32xf32>
}

// -----

// RoBERTa's embeddings: word + token_type, then + position, all [B, S, H]
// (position ids derived from input_ids). The inner add is the input, the
// outer add is absorbed.
// CHECK-LABEL: func @embedding_sum
// CHECK-SAME: (%[[WORD:.*]]: tensor<?x?x64xf32>, %[[TYPE:.*]]: tensor<?x?x64xf32>, %[[POS:.*]]: tensor<?x?x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[BETA:.*]]: tensor<64xf32>)
// CHECK: %[[INNER:.*]] = lmopt.add %[[WORD]], %[[TYPE]]
// CHECK: %[[OUT:.*]], %{{.*}} = lmopt.skip_layer_norm %[[INNER]], %[[POS]], %[[G]], %[[BETA]]
// CHECK-NOT: lmopt.add
// CHECK: return %[[OUT]]
// REPORT: skip_layer_norm {{ *}}1 {{ *}}0
func.func @embedding_sum(%word: tensor<?x?x64xf32>, %type: tensor<?x?x64xf32>, %pos: tensor<?x?x64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %0 = lmopt.add %word, %type : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32> loc("embeddings/Add_1")
  %1 = lmopt.add %pos, %0 : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32> loc("embeddings/Add_2")
  %ln = lmopt.layer_norm %1, %gamma, %beta : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32> loc("embeddings/LayerNorm")
  return %ln : tensor<?x?x64xf32>
}

// -----

// BERT's embeddings: the position embedding is gathered from [1, S] ids and
// broadcasts over the batch, which skip_layer_norm's skip operand may do. The
// inner add (word + token type) is the input.
// CHECK-LABEL: func @embedding_broadcast_position
// CHECK-SAME: (%[[WORD:.*]]: tensor<?x16x64xf32>, %[[TYPE:.*]]: tensor<?x16x64xf32>, %[[POS:.*]]: tensor<1x16x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK: %[[IN:.*]] = lmopt.add %[[WORD]], %[[TYPE]]
// CHECK: %[[OUT:.*]], %{{.*}} = lmopt.skip_layer_norm %[[IN]], %[[POS]], %[[G]], %[[B]] : (tensor<?x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK-NOT: lmopt.layer_norm
// CHECK: return %[[OUT]]
// REPORT: skip_layer_norm {{ *}}1 {{ *}}0
func.func @embedding_broadcast_position(%word: tensor<?x16x64xf32>, %type: tensor<?x16x64xf32>, %pos: tensor<1x16x64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<?x16x64xf32> {
  %0 = lmopt.add %word, %type : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32> loc("embeddings/Add")
  %1 = lmopt.add %0, %pos : (tensor<?x16x64xf32>, tensor<1x16x64xf32>) -> tensor<?x16x64xf32> loc("embeddings/Add_1")
  %ln = lmopt.layer_norm %1, %gamma, %beta : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32> loc("embeddings/LayerNorm/LayerNormalization")
  return %ln : tensor<?x16x64xf32>
}

// -----

// DistilBERT-style position embedding of shape [S, H], on the left of the add.
// CHECK-LABEL: func @embedding_broadcast_rank
// CHECK-SAME: (%[[WORD:.*]]: tensor<?x16x64xf32>, %[[POS:.*]]: tensor<16x64xf32>
// CHECK: lmopt.skip_layer_norm %[[WORD]], %[[POS]], %{{.*}}, %{{.*}} : (tensor<?x16x64xf32>, tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>)
func.func @embedding_broadcast_rank(%word: tensor<?x16x64xf32>, %pos: tensor<16x64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<?x16x64xf32> {
  %0 = lmopt.add %pos, %word : (tensor<16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
  %ln = lmopt.layer_norm %0, %gamma, %beta : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32> loc("distil/LayerNorm")
  return %ln : tensor<?x16x64xf32>
}

// -----

// The importer types the Slice of the [1, 128] position-id buffer as ?x?; the
// Slice only cuts dim 1, so dim 0 is still 1: the position embedding is the
// (broadcasting) skip, the word embedding the input.
// CHECK-LABEL: func @embedding_broadcast_hidden_by_type
// CHECK-SAME: (%[[WORD:.*]]: tensor<?x?x64xf32>
// CHECK: %[[POS:.*]] = lmopt.gather
// CHECK: lmopt.skip_layer_norm %[[WORD]], %[[POS]]
func.func @embedding_broadcast_hidden_by_type(%word: tensor<?x?x64xf32>, %len: tensor<1xi64>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %ids = lmopt.constant dense<3> : tensor<1x128xi64>
  %table = lmopt.constant dense<0.5> : tensor<128x64xf32>
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %one = lmopt.constant dense<1> : tensor<1xi64>
  %pos_ids = lmopt.slice %ids, %zero, %len axes %one steps %one : (tensor<1x128xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
  %pos = lmopt.gather %table, %pos_ids : (tensor<128x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %sum = lmopt.add %pos, %word : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %ln = lmopt.layer_norm %sum, %gamma, %beta : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32> loc("bert/embeddings/LayerNorm")
  return %ln : tensor<?x?x64xf32>
}

// -----

// Both operands broadcast ([1, S, H] + [B, 1, H]): neither can be the input.
// CHECK-LABEL: func @negative_both_broadcast
// CHECK-NOT: lmopt.skip_layer_norm
// CHECK: lmopt.layer_norm
// REPORT: near miss: skip_layer_norm at 'outer/LayerNorm': neither add operand has the sum's shape 4x16x64 (input 1x16x64 broadcasts)
func.func @negative_both_broadcast(%a: tensor<1x16x64xf32>, %b: tensor<4x1x64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<4x16x64xf32> {
  %0 = lmopt.add %a, %b : (tensor<1x16x64xf32>, tensor<4x1x64xf32>) -> tensor<4x16x64xf32>
  %ln = lmopt.layer_norm %0, %gamma, %beta : (tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32> loc("outer/LayerNorm")
  return %ln : tensor<4x16x64xf32>
}

// -----

// CHECK-LABEL: func @negative_not_last_dim
// CHECK-NOT: lmopt.skip_layer_norm
// REPORT: near miss: skip_layer_norm at 'two_dims/LayerNorm': layer norm over dims [1, 3) is not over the last dim only
func.func @negative_not_last_dim(%a: tensor<2x8x32xf32>, %b: tensor<2x8x32xf32>, %gamma: tensor<8x32xf32>) -> tensor<2x8x32xf32> {
  %sum = lmopt.add %a, %b : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %ln = lmopt.layer_norm %sum, %gamma {axis = -2 : i64} : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32> loc("two_dims/LayerNorm")
  return %ln : tensor<2x8x32xf32>
}

// -----

// A one-element scale broadcasts in layer_norm but not in skip_layer_norm.
// CHECK-LABEL: func @negative_scale_not_per_feature
// CHECK-NOT: lmopt.skip_layer_norm
// REPORT: near miss: skip_layer_norm at 'scalar/LayerNorm': scale of shape 1 is not 32
func.func @negative_scale_not_per_feature(%a: tensor<2x8x32xf32>, %b: tensor<2x8x32xf32>, %gamma: tensor<1xf32>) -> tensor<2x8x32xf32> {
  %sum = lmopt.add %a, %b : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %ln = lmopt.layer_norm %sum, %gamma : (tensor<2x8x32xf32>, tensor<1xf32>) -> tensor<2x8x32xf32> loc("scalar/LayerNorm")
  return %ln : tensor<2x8x32xf32>
}

// -----

// The sum also feeds an op placed before the layer norm, which the fused op
// (created at the layer norm) would not dominate.
// CHECK-LABEL: func @negative_sum_used_before
// CHECK-NOT: lmopt.skip_layer_norm
// REPORT: near miss: skip_layer_norm at 'early/LayerNorm': the sum is used before the layer norm
func.func @negative_sum_used_before(%a: tensor<2x32xf32>, %b: tensor<2x32xf32>, %gamma: tensor<32xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>) {
  %sum = lmopt.add %a, %b : (tensor<2x32xf32>, tensor<2x32xf32>) -> tensor<2x32xf32>
  %twice = lmopt.add %sum, %sum : (tensor<2x32xf32>, tensor<2x32xf32>) -> tensor<2x32xf32>
  %ln = lmopt.layer_norm %sum, %gamma : (tensor<2x32xf32>, tensor<32xf32>) -> tensor<2x32xf32> loc("early/LayerNorm")
  return %ln, %twice : tensor<2x32xf32>, tensor<2x32xf32>
}

// -----

// A layer norm not fed by an add is not a candidate.
// CHECK-LABEL: func @negative_not_an_add
// CHECK: lmopt.layer_norm
// REPORT: skip_layer_norm {{ *}}0 {{ *}}0
func.func @negative_not_an_add(%a: tensor<2x32xf32>, %gamma: tensor<32xf32>) -> tensor<2x32xf32> {
  %ln = lmopt.layer_norm %a, %gamma : (tensor<2x32xf32>, tensor<32xf32>) -> tensor<2x32xf32>
  return %ln : tensor<2x32xf32>
}
