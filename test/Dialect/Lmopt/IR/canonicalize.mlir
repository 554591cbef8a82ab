// RUN: lmopt-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func @identity
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: lmopt.identity
// CHECK: return %[[X]]
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lmopt.identity %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @cast_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: lmopt.cast
// CHECK: return %[[X]]
func.func @cast_same_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lmopt.cast %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @negative_cast_other_type
// CHECK: %[[C:.*]] = lmopt.cast
// CHECK: return %[[C]]
func.func @negative_cast_other_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = lmopt.cast %x : tensor<4xf32> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func @shape_of_static_dims
// CHECK: %[[C:.*]] = lmopt.constant dense<[8, 16]> : tensor<2xi64>
// CHECK-NOT: lmopt.shape
// CHECK: return %[[C]]
func.func @shape_of_static_dims(%x: tensor<?x8x16xf32>) -> tensor<2xi64> {
  %0 = lmopt.shape %x {start = -2 : i64} : tensor<?x8x16xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func @negative_shape_of_dynamic_dim
// CHECK: %[[S:.*]] = lmopt.shape
// CHECK: return %[[S]]
func.func @negative_shape_of_dynamic_dim(%x: tensor<?x8xf32>) -> tensor<2xi64> {
  %0 = lmopt.shape %x : tensor<?x8xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func @reshape_to_same_shape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>
// CHECK-NOT: lmopt.reshape
// CHECK: return %[[X]]
func.func @reshape_to_same_shape(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = lmopt.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A dynamic result may still change the layout at run time.
// CHECK-LABEL: func @negative_reshape_dynamic
// CHECK: %[[R:.*]] = lmopt.reshape
// CHECK: return %[[R]]
func.func @negative_reshape_dynamic(%x: tensor<?x3xf32>, %s: tensor<2xi64>) -> tensor<?x3xf32> {
  %0 = lmopt.reshape %x, %s : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// CHECK-LABEL: func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>
// CHECK: %[[SHAPE:.*]] = lmopt.constant dense<[4, 6]> : tensor<2xi64>
// CHECK: %[[R:.*]] = lmopt.reshape %[[X]], %[[SHAPE]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
// CHECK: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>, %s1: tensor<1xi64>, %s2: tensor<2xi64>) -> tensor<4x6xf32> {
  %0 = lmopt.reshape %x, %s1 : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<24xf32>
  %1 = lmopt.reshape %0, %s2 : (tensor<24xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// The outer shape may hold 0 (copy a dim of the inner result): keep both.
// CHECK-LABEL: func @negative_reshape_of_reshape_dynamic
// CHECK: lmopt.reshape
// CHECK: lmopt.reshape
func.func @negative_reshape_of_reshape_dynamic(%x: tensor<?x4xf32>, %s1: tensor<1xi64>, %s2: tensor<2xi64>) -> tensor<?x2xf32> {
  %0 = lmopt.reshape %x, %s1 : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?xf32>
  %1 = lmopt.reshape %0, %s2 : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  return %1 : tensor<?x2xf32>
}

// -----

// CHECK-LABEL: func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: lmopt.transpose
// CHECK: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = lmopt.transpose %x {perm = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @transpose_of_transpose_cancels
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT: lmopt.transpose
// CHECK: return %[[X]]
func.func @transpose_of_transpose_cancels(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = lmopt.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %1 = lmopt.transpose %0 {perm = array<i64: 0, 2, 1>} : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// (0,2,1,3) then (0,1,3,2) is the head-split-then-key-transpose of attention.
// CHECK-LABEL: func @transpose_of_transpose_composes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x5xf32>)
// CHECK: %[[T:.*]] = lmopt.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>} : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
// CHECK-NOT: lmopt.transpose
// CHECK: return %[[T]]
func.func @transpose_of_transpose_composes(%x: tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32> {
  %0 = lmopt.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x4x5xf32> -> tensor<2x4x3x5xf32>
  %1 = lmopt.transpose %0 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x3x5xf32> -> tensor<2x4x5x3xf32>
  return %1 : tensor<2x4x5x3xf32>
}

// -----

// CHECK-LABEL: func @negative_transpose_single
// CHECK: %[[T:.*]] = lmopt.transpose
// CHECK: return %[[T]]
func.func @negative_transpose_single(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = lmopt.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func @concat_single
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: lmopt.concat
// CHECK: return %[[X]]
func.func @concat_single(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = lmopt.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @negative_concat_two
// CHECK: %[[C:.*]] = lmopt.concat
// CHECK: return %[[C]]
func.func @negative_concat_two(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = lmopt.concat %x, %x {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func @expand_to_same_shape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>
// CHECK-NOT: lmopt.expand
// CHECK: return %[[X]]
func.func @expand_to_same_shape(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = lmopt.expand %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @negative_expand_broadcasts
// CHECK: %[[E:.*]] = lmopt.expand
// CHECK: return %[[E]]
func.func @negative_expand_broadcasts(%x: tensor<1x3xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = lmopt.expand %x, %s : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @requantize_same_params
// CHECK-SAME: (%[[Q:.*]]: tensor<4x!quant.uniform<i8:f32, 5.000000e-01>>)
// CHECK-NOT: lmopt.quantize
// CHECK: return %[[Q]]
func.func @requantize_same_params(%q: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>> {
  %0 = lmopt.dequantize %q : tensor<4x!quant.uniform<i8:f32, 0.5>> -> tensor<4xf32>
  %1 = lmopt.quantize %0 : tensor<4xf32> -> tensor<4x!quant.uniform<i8:f32, 0.5>>
  return %1 : tensor<4x!quant.uniform<i8:f32, 0.5>>
}

// -----

// Requantizing with another scale rounds: keep it.
// CHECK-LABEL: func @negative_requantize_other_params
// CHECK: %[[Q:.*]] = lmopt.quantize
// CHECK: return %[[Q]]
func.func @negative_requantize_other_params(%q: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.25>> {
  %0 = lmopt.dequantize %q : tensor<4x!quant.uniform<i8:f32, 0.5>> -> tensor<4xf32>
  %1 = lmopt.quantize %0 : tensor<4xf32> -> tensor<4x!quant.uniform<i8:f32, 0.25>>
  return %1 : tensor<4x!quant.uniform<i8:f32, 0.25>>
}

// -----

// CHECK-LABEL: func @dropout_inference
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-DAG: %[[TRUE:.*]] = lmopt.constant dense<true> : tensor<4x8xi1>
// CHECK-NOT: lmopt.dropout
// CHECK: return %[[X]], %[[TRUE]]
func.func @dropout_inference(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  %0:2 = lmopt.dropout %x {ratio = 0.1 : f32} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xi1>
}

// -----

// CHECK-LABEL: func @dropout_training_ratio_zero
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK-NOT: lmopt.dropout
// CHECK: return %[[X]]
func.func @dropout_training_ratio_zero(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0:2 = lmopt.dropout %x {ratio = 0.0 : f32, training = true} : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi1>)
  return %0#0 : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func @negative_dropout_training
// CHECK: %[[OUT:.*]], %{{.*}} = lmopt.dropout
// CHECK: return %[[OUT]]
func.func @negative_dropout_training(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0:2 = lmopt.dropout %x {ratio = 0.1 : f32, training = true} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  return %0#0 : tensor<4x8xf32>
}

// -----

// A used mask of dynamic shape needs shape computations, which only
// lmopt-eliminate-dropout builds.
// CHECK-LABEL: func @negative_dropout_dynamic_mask_used
// CHECK: %[[OUT:.*]], %[[MASK:.*]] = lmopt.dropout
// CHECK: return %[[OUT]], %[[MASK]]
func.func @negative_dropout_dynamic_mask_used(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi1>) {
  %0:2 = lmopt.dropout %x {ratio = 0.1 : f32} : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi1>)
  return %0#0, %0#1 : tensor<?x8xf32>, tensor<?x8xi1>
}

// -----

// nn.MultiheadAttention computes its scale from the head size at run time:
// 1 / sqrt(float(16)). With constant operands it folds to 0.25.
// CHECK-LABEL: func @fold_scale_chain
// CHECK: %[[C:.*]] = lmopt.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NOT: lmopt.sqrt
// CHECK-NOT: lmopt.cast
// CHECK: return %[[C]]
func.func @fold_scale_chain() -> tensor<f32> {
  %d = lmopt.constant dense<16> : tensor<i64>
  %0 = lmopt.cast %d : tensor<i64> -> tensor<f32>
  %1 = lmopt.sqrt %0 : tensor<f32>
  %2 = lmopt.reciprocal %1 : tensor<f32>
  return %2 : tensor<f32>
}

// -----

// Broadcasting between two small dense constants.
// CHECK-LABEL: func @fold_broadcast_add
// CHECK: %[[C:.*]] = lmopt.constant dense<{{\[\[}}1.100000e+01, 2.100000e+01], [1.200000e+01, 2.200000e+01]]> : tensor<2x2xf32>
// CHECK: return %[[C]]
func.func @fold_broadcast_add() -> tensor<2x2xf32> {
  %a = lmopt.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %b = lmopt.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %0 = lmopt.add %a, %b : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Float to integer truncates toward zero (ONNX Cast); integer adds fold.
// CHECK-LABEL: func @fold_cast_truncates
// CHECK: %[[C:.*]] = lmopt.constant dense<[2, -2, 4]> : tensor<3xi64>
// CHECK: return %[[C]]
func.func @fold_cast_truncates() -> tensor<3xi64> {
  %a = lmopt.constant dense<[2.7, -2.7, 0.5]> : tensor<3xf32>
  %0 = lmopt.cast %a : tensor<3xf32> -> tensor<3xi64>
  %one = lmopt.constant dense<[0, 0, 4]> : tensor<3xi64>
  %1 = lmopt.add %0, %one : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %1 : tensor<3xi64>
}

// -----

// CHECK-LABEL: func @negative_fold_non_constant
// CHECK: lmopt.mul
func.func @negative_fold_non_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = lmopt.constant dense<2.0> : tensor<4xf32>
  %0 = lmopt.mul %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integer division has its own rounding rule: not folded.
// CHECK-LABEL: func @negative_fold_integer_div
// CHECK: lmopt.div
func.func @negative_fold_integer_div() -> tensor<i64> {
  %a = lmopt.constant dense<7> : tensor<i64>
  %b = lmopt.constant dense<2> : tensor<i64>
  %0 = lmopt.div %a, %b : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// A result over 65536 elements would copy a weight-sized tensor: not folded.
// CHECK-LABEL: func @negative_fold_too_large
// CHECK: lmopt.mul
func.func @negative_fold_too_large() -> tensor<300x300xf32> {
  %a = lmopt.constant dense<2.0> : tensor<300x300xf32>
  %b = lmopt.constant dense<0.5> : tensor<f32>
  %0 = lmopt.mul %a, %b : (tensor<300x300xf32>, tensor<f32>) -> tensor<300x300xf32>
  return %0 : tensor<300x300xf32>
}

// -----

// Casts to bool are left to the importer.
// CHECK-LABEL: func @negative_fold_cast_to_bool
// CHECK: lmopt.cast
func.func @negative_fold_cast_to_bool() -> tensor<2xi1> {
  %a = lmopt.constant dense<[0.0, 3.0]> : tensor<2xf32>
  %0 = lmopt.cast %a : tensor<2xf32> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}
