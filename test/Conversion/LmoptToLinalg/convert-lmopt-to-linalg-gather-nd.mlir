// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// One batch dim, tuples of length 1, a trailing data dim copied: the generic
// runs over the output, reads the tuple entry at the output's leading
// position, maps it into dim 1 (negative from the end, clamped to [0, 4])
// and reads data at (batch, index, trailing).
// CHECK-LABEL: func.func @gather_nd_batch_dims
// CHECK-SAME: %[[DATA:[^:]*]]: tensor<2x5x3xf32>, %[[IDX:[^:]*]]: tensor<2x4x1xi64>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[SIZE:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[LAST:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[K0:.*]] = arith.constant 0 : index
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4x3xf32>
// CHECK: linalg.generic
// CHECK-NOT: ins(
// CHECK-SAME: outs(%[[INIT]] : tensor<2x4x3xf32>)
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[T:.*]] = linalg.index 2 : index
// CHECK: %[[I:.*]] = tensor.extract %[[IDX]][%[[B]], %[[J]], %[[K0]]] : tensor<2x4x1xi64>
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]]
// CHECK: %[[WRAP:.*]] = arith.addi %[[I]], %[[SIZE]]
// CHECK: %[[SEL:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[I]]
// CHECK: %[[LO:.*]] = arith.maxsi %[[SEL]], %[[ZERO]]
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %[[LAST]]
// CHECK: %[[POS:.*]] = arith.index_cast %[[HI]] : i64 to index
// CHECK: %[[V:.*]] = tensor.extract %[[DATA]][%[[B]], %[[POS]], %[[T]]] : tensor<2x5x3xf32>
// CHECK: linalg.yield %[[V]]
// CHECK-NOT: lmopt.gather_nd
func.func @gather_nd_batch_dims(%data: tensor<2x5x3xf32>, %idx: tensor<2x4x1xi64>) -> tensor<2x4x3xf32> {
  %0 = lmopt.gather_nd %data, %idx {batch_dims = 1 : i64} : (tensor<2x5x3xf32>, tensor<2x4x1xi64>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// The dynamo exports' attention mask: tuples of length 2 index every data
// dim, each entry clamped into its own dim (2 and 12), on i1 data.
// CHECK-LABEL: func.func @gather_nd_full_tuple
// CHECK-SAME: %[[DATA:[^:]*]]: tensor<2x12xi1>, %[[IDX:[^:]*]]: tensor<2x1x1x12x2xi64>
// CHECK-DAG: %[[LAST0:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[SIZE1:.*]] = arith.constant 12 : i64
// CHECK-DAG: %[[LAST1:.*]] = arith.constant 11 : i64
// CHECK-DAG: %[[SIZE0:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[K0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[K1:.*]] = arith.constant 1 : index
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<2x1x1x12xi1>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK: %[[D2:.*]] = linalg.index 2 : index
// CHECK: %[[D3:.*]] = linalg.index 3 : index
// CHECK: %[[I0:.*]] = tensor.extract %[[IDX]][%[[D0]], %[[D1]], %[[D2]], %[[D3]], %[[K0]]]
// CHECK: arith.addi %[[I0]], %[[SIZE0]]
// CHECK: %[[HI0:.*]] = arith.minsi %{{.*}}, %[[LAST0]]
// CHECK: %[[P0:.*]] = arith.index_cast %[[HI0]] : i64 to index
// CHECK: %[[I1:.*]] = tensor.extract %[[IDX]][%[[D0]], %[[D1]], %[[D2]], %[[D3]], %[[K1]]]
// CHECK: arith.addi %[[I1]], %[[SIZE1]]
// CHECK: %[[HI1:.*]] = arith.minsi %{{.*}}, %[[LAST1]]
// CHECK: %[[P1:.*]] = arith.index_cast %[[HI1]] : i64 to index
// CHECK: %[[V:.*]] = tensor.extract %[[DATA]][%[[P0]], %[[P1]]] : tensor<2x12xi1>
// CHECK: linalg.yield %[[V]] : i1
func.func @gather_nd_full_tuple(%data: tensor<2x12xi1>, %idx: tensor<2x1x1x12x2xi64>) -> tensor<2x1x1x12xi1> {
  %0 = lmopt.gather_nd %data, %idx : (tensor<2x12xi1>, tensor<2x1x1x12x2xi64>) -> tensor<2x1x1x12xi1>
  return %0 : tensor<2x1x1x12xi1>
}

// -----

// One tuple of a rank-1 indices: a rank-0 result, a generic of no loops.
// CHECK-LABEL: func.func @gather_nd_scalar
// CHECK-SAME: %[[DATA:[^:]*]]: tensor<3x4xi64>, %[[IDX:[^:]*]]: tensor<2xi64>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = []
// CHECK-SAME: outs(%{{.*}} : tensor<i64>)
// CHECK: tensor.extract %[[IDX]][%{{.*}}] : tensor<2xi64>
// CHECK: tensor.extract %[[IDX]][%{{.*}}] : tensor<2xi64>
// CHECK: %[[V:.*]] = tensor.extract %[[DATA]][%{{.*}}, %{{.*}}] : tensor<3x4xi64>
// CHECK: linalg.yield %[[V]] : i64
func.func @gather_nd_scalar(%data: tensor<3x4xi64>, %idx: tensor<2xi64>) -> tensor<i64> {
  %0 = lmopt.gather_nd %data, %idx : (tensor<3x4xi64>, tensor<2xi64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Run-time sizes (bounded shapes): the output's leading dim comes from the
// indices, the tuple entry is clamped to the data dim read with tensor.dim.
// CHECK-LABEL: func.func @gather_nd_dynamic
// CHECK-SAME: (%[[DATA:.*]]: tensor<?x?xi1>, %[[IDX:.*]]: tensor<?x3x2xi64>)
// CHECK: %[[N:.*]] = tensor.dim %[[IDX]], %{{.*}} : tensor<?x3x2xi64>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xi1>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[INIT]] : tensor<?x3xi1>)
// CHECK: tensor.dim %[[DATA]], %{{.*}} : tensor<?x?xi1>
// CHECK: arith.minsi
// CHECK: tensor.extract %[[DATA]]
// CHECK-NOT: lmopt.gather_nd
func.func @gather_nd_dynamic(%data: tensor<?x?xi1>, %idx: tensor<?x3x2xi64>) -> tensor<?x3xi1> {
  %0 = lmopt.gather_nd %data, %idx : (tensor<?x?xi1>, tensor<?x3x2xi64>) -> tensor<?x3xi1>
  return %0 : tensor<?x3xi1>
}

// -----

// Batch dims that differ between data and indices (the evaluator reports
// them at run time) are not lowered.
// CHECK-LABEL: func.func @negative_gather_nd_batch_mismatch
// CHECK-NOT: linalg.generic
// CHECK: lmopt.gather_nd
func.func @negative_gather_nd_batch_mismatch(%data: tensor<2x5x3xf32>, %idx: tensor<3x4x1xi64>) -> tensor<3x4x3xf32> {
  %0 = lmopt.gather_nd %data, %idx {batch_dims = 1 : i64} : (tensor<2x5x3xf32>, tensor<3x4x1xi64>) -> tensor<3x4x3xf32>
  return %0 : tensor<3x4x3xf32>
}

// -----

// No index is valid into an empty dim, and clamping has nothing to clamp to.
// CHECK-LABEL: func.func @negative_gather_nd_empty_dim
// CHECK-NOT: linalg.generic
// CHECK: lmopt.gather_nd
func.func @negative_gather_nd_empty_dim(%data: tensor<2x0x3xf32>, %idx: tensor<2x4x1xi64>) -> tensor<2x4x3xf32> {
  %0 = lmopt.gather_nd %data, %idx {batch_dims = 1 : i64} : (tensor<2x0x3xf32>, tensor<2x4x1xi64>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}
