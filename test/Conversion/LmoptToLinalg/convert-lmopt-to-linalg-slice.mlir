// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// BERT's position ids: a prefix of a constant table. The bounds fold into
// the slice; the constant becomes an arith.constant.
// CHECK-LABEL: func.func @slice_prefix
// CHECK: %[[T:.*]] = arith.constant dense<7> : tensor<1x128xi64>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[T]][0, 0] [1, 8] [1, 1] : tensor<1x128xi64> to tensor<1x8xi64>
// CHECK: return %[[S]]
func.func @slice_prefix() -> tensor<1x8xi64> {
  %table = lmopt.constant dense<7> : tensor<1x128xi64>
  %starts = lmopt.constant dense<0> : tensor<1xi64>
  %ends = lmopt.constant dense<8> : tensor<1xi64>
  %axes = lmopt.constant dense<1> : tensor<1xi64>
  %steps = lmopt.constant dense<1> : tensor<1xi64>
  %0 = lmopt.slice %table, %starts, %ends axes %axes steps %steps : (tensor<1x128xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8xi64>
  return %0 : tensor<1x8xi64>
}

// -----

// Without axes and steps: axes 0.. and step 1. Negative starts count from
// the end; ends past the dim are clamped (i64 max, as exporters write "to
// the end").
// CHECK-LABEL: func.func @slice_defaults_clamped
// CHECK-SAME: %[[X:.*]]: tensor<4x10xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][1, 7] [3, 3] [1, 1] : tensor<4x10xf32> to tensor<3x3xf32>
// CHECK: return %[[S]]
func.func @slice_defaults_clamped(%x: tensor<4x10xf32>) -> tensor<3x3xf32> {
  %starts = lmopt.constant dense<[1, -3]> : tensor<2xi64>
  %ends = lmopt.constant dense<[9223372036854775807, 100]> : tensor<2xi64>
  %0 = lmopt.slice %x, %starts, %ends : (tensor<4x10xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Step 2 on a negative axis, i32 bounds, and a dynamic dim that is not
// sliced (read with tensor.dim).
// CHECK-LABEL: func.func @slice_strided_dynamic
// CHECK-SAME: %[[X:.*]]: tensor<?x7xf32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 1] [%[[D0]], 3] [1, 2] : tensor<?x7xf32> to tensor<?x3xf32>
// CHECK: return %[[S]]
func.func @slice_strided_dynamic(%x: tensor<?x7xf32>) -> tensor<?x3xf32> {
  %starts = lmopt.constant dense<1> : tensor<1xi32>
  %ends = lmopt.constant dense<7> : tensor<1xi32>
  %axes = lmopt.constant dense<-1> : tensor<1xi32>
  %steps = lmopt.constant dense<2> : tensor<1xi32>
  %0 = lmopt.slice %x, %starts, %ends axes %axes steps %steps : (tensor<?x7xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// A negative step: the slice takes the selected elements with the positive
// stride from the lowest one (indices 4 and 1 of 0..4 from start -1 by -3),
// and a generic reads the axis back to front.
// CHECK-DAG: #[[REV:.*]] = affine_map<(d0, d1) -> (d0, -d1 + 1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @slice_negative_step
// CHECK-SAME: %[[X:.*]]: tensor<2x5xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 1] [2, 2] [1, 3] : tensor<2x5xf32> to tensor<2x2xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[REV]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[S]] : tensor<2x2xf32>) outs(%[[E]] : tensor<2x2xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: linalg.yield %[[IN]]
// CHECK: return %[[R]]
func.func @slice_negative_step(%x: tensor<2x5xf32>) -> tensor<2x2xf32> {
  %starts = lmopt.constant dense<-1> : tensor<1xi64>
  %ends = lmopt.constant dense<-9223372036854775807> : tensor<1xi64>
  %axes = lmopt.constant dense<1> : tensor<1xi64>
  %steps = lmopt.constant dense<-3> : tensor<1xi64>
  %0 = lmopt.slice %x, %starts, %ends axes %axes steps %steps : (tensor<2x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// An empty selection (start after end for a positive step) is a slice of
// size 0; one element taken with a negative step needs no reversal.
// CHECK-LABEL: func.func @slice_empty_and_single
// CHECK-SAME: %[[X:.*]]: tensor<6xf32>
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]][4] [0] [1] : tensor<6xf32> to tensor<0xf32>
// CHECK: %[[B:.*]] = tensor.extract_slice %[[X]][5] [1] [2] : tensor<6xf32> to tensor<1xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[A]], %[[B]]
func.func @slice_empty_and_single(%x: tensor<6xf32>) -> (tensor<0xf32>, tensor<1xf32>) {
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %four = lmopt.constant dense<4> : tensor<1xi64>
  %two = lmopt.constant dense<2> : tensor<1xi64>
  %five = lmopt.constant dense<5> : tensor<1xi64>
  %minus2 = lmopt.constant dense<-2> : tensor<1xi64>
  %0 = lmopt.slice %x, %four, %two : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<0xf32>
  %1 = lmopt.slice %x, %five, %four axes %zero steps %minus2 : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf32>
  return %0, %1 : tensor<0xf32>, tensor<1xf32>
}

// -----

// Steps longer than the axis take one element (i64 max and min steps are
// shortened to the axis length, so the count cannot overflow).
// CHECK-LABEL: func.func @slice_huge_steps
// CHECK-SAME: %[[X:.*]]: tensor<6xf32>
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]][1] [1] [6] : tensor<6xf32> to tensor<1xf32>
// CHECK: %[[B:.*]] = tensor.extract_slice %[[X]][5] [1] [6] : tensor<6xf32> to tensor<1xf32>
// CHECK: return %[[A]], %[[B]]
func.func @slice_huge_steps(%x: tensor<6xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %one = lmopt.constant dense<1> : tensor<1xi64>
  %last = lmopt.constant dense<-1> : tensor<1xi64>
  %max = lmopt.constant dense<9223372036854775807> : tensor<1xi64>
  %min = lmopt.constant dense<-9223372036854775808> : tensor<1xi64>
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %0 = lmopt.slice %x, %one, %max axes %zero steps %max : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf32>
  %1 = lmopt.slice %x, %last, %min axes %zero steps %min : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf32>
  return %0, %1 : tensor<1xf32>, tensor<1xf32>
}

// -----

// Bounds computed at run time are not lowered.
// CHECK-LABEL: func.func @negative_slice_runtime_bounds
// CHECK-NOT: tensor.
// CHECK: lmopt.slice
// CHECK-NOT: tensor.extract_slice
func.func @negative_slice_runtime_bounds(%x: tensor<4x10xf32>, %ends: tensor<1xi64>) -> tensor<4x?xf32> {
  %starts = lmopt.constant dense<0> : tensor<1xi64>
  %axes = lmopt.constant dense<1> : tensor<1xi64>
  %0 = lmopt.slice %x, %starts, %ends axes %axes : (tensor<4x10xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// A dynamic sliced axis needs its size to resolve the bounds: not lowered.
// CHECK-LABEL: func.func @negative_slice_dynamic_axis
// CHECK-NOT: tensor.
// CHECK: lmopt.slice
// CHECK-NOT: tensor.extract_slice
func.func @negative_slice_dynamic_axis(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %starts = lmopt.constant dense<1> : tensor<1xi64>
  %ends = lmopt.constant dense<-1> : tensor<1xi64>
  %axes = lmopt.constant dense<1> : tensor<1xi64>
  %0 = lmopt.slice %x, %starts, %ends axes %axes : (tensor<4x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}
