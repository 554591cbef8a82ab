// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// GPT-2's KV cache: the past and the new step written into one destination
// at running offsets along the axis.
// CHECK-LABEL: func.func @concat_kv_cache
// CHECK-SAME: %[[PAST:[^:]*]]: tensor<2x4x4x16xf32>, %[[NEW:[^:]*]]: tensor<2x4x1x16xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4x5x16xf32>
// CHECK: %[[A:.*]] = tensor.insert_slice %[[PAST]] into %[[E]][0, 0, 0, 0] [2, 4, 4, 16] [1, 1, 1, 1] : tensor<2x4x4x16xf32> into tensor<2x4x5x16xf32>
// CHECK: %[[B:.*]] = tensor.insert_slice %[[NEW]] into %[[A]][0, 0, 4, 0] [2, 4, 1, 16] [1, 1, 1, 1] : tensor<2x4x1x16xf32> into tensor<2x4x5x16xf32>
// CHECK: return %[[B]]
func.func @concat_kv_cache(%past: tensor<2x4x4x16xf32>, %new: tensor<2x4x1x16xf32>) -> tensor<2x4x5x16xf32> {
  %0 = lmopt.concat %past, %new {axis = 2 : i64} : (tensor<2x4x4x16xf32>, tensor<2x4x1x16xf32>) -> tensor<2x4x5x16xf32>
  return %0 : tensor<2x4x5x16xf32>
}

// -----

// Three inputs on a negative axis, one of them empty along it (skipped: it
// adds nothing).
// CHECK-LABEL: func.func @concat_three
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x1xi64>, %[[Y:[^:]*]]: tensor<2x0xi64>, %[[Z:[^:]*]]: tensor<2x3xi64>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4xi64>
// CHECK: %[[A:.*]] = tensor.insert_slice %[[X]] into %[[E]][0, 0] [2, 1] [1, 1]
// CHECK-NOT: insert_slice %[[Y]]
// CHECK: %[[C:.*]] = tensor.insert_slice %[[Z]] into %[[A]][0, 1] [2, 3] [1, 1]
// CHECK: return %[[C]]
func.func @concat_three(%x: tensor<2x1xi64>, %y: tensor<2x0xi64>, %z: tensor<2x3xi64>) -> tensor<2x4xi64> {
  %0 = lmopt.concat %x, %y, %z {axis = -1 : i64} : (tensor<2x1xi64>, tensor<2x0xi64>, tensor<2x3xi64>) -> tensor<2x4xi64>
  return %0 : tensor<2x4xi64>
}

// -----

// A dynamic size along the axis: offsets and the total are computed with
// tensor.dim; a dynamic dim off the axis comes from the first input, and the
// inputs are checked to agree there at run time.
// CHECK-LABEL: func.func @concat_dynamic
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?xf32>, %[[Y:[^:]*]]: tensor<?x3xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[XD0:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK: %[[YD0:.*]] = tensor.dim %[[Y]], %[[C0]]
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[XD0]], %[[YD0]] : index
// CHECK: cf.assert %[[EQ]], "concatenated inputs must agree in dim 0"
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK: %[[TOTAL:.*]] = arith.addi %[[D1:.*]], %[[C3]] : index
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]], %[[TOTAL]]) : tensor<?x?xf32>
// CHECK: %[[A:.*]] = tensor.insert_slice %[[X]] into %[[E]][0, 0]
// CHECK: %[[B:.*]] = tensor.insert_slice %[[Y]] into %[[A]][0, %[[D1]]]
// CHECK: return %[[B]]
func.func @concat_dynamic(%x: tensor<?x?xf32>, %y: tensor<?x3xf32>) -> tensor<?x?xf32> {
  %0 = lmopt.concat %x, %y {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// An input empty along the axis (the rotary-embedding expansion concatenates
// an empty pass-through piece) is skipped, not inserted one past the end.
// CHECK-LABEL: func.func @concat_empty_input
// CHECK-SAME: (%[[A:[^:]*]]: tensor<2x8xf32>, %[[E:[^:]*]]: tensor<2x0xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK: %[[R:.*]] = tensor.insert_slice %[[A]] into %[[INIT]][0, 0] [2, 8] [1, 1]
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[R]]
func.func @concat_empty_input(%a: tensor<2x8xf32>, %e: tensor<2x0xf32>) -> tensor<2x8xf32> {
  %0 = lmopt.concat %a, %e {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x0xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
