// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// Mod with Python's sign (fmod = false): the truncating remainder, plus the
// divisor where the signs differ. Divisors 0 and -1 divide by 1 instead
// (0 % -1 is 0; remsi by 0 or of the minimum by -1 would trap).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0) -> (0)>
// CHECK-LABEL: func.func @mod_floor
// CHECK-SAME: %[[X:[^:]*]]: tensor<4xi64>, %[[Y:[^:]*]]: tensor<1xi64>
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M1:.*]] = arith.constant -1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[B]], #[[ID]]], iterator_types = ["parallel"]} ins(%[[X]], %[[Y]] : tensor<4xi64>, tensor<1xi64>)
// CHECK: ^bb0(%[[A:.*]]: i64, %[[D:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[Z:.*]] = arith.cmpi eq, %[[D]], %[[ZERO]]
// CHECK: %[[N:.*]] = arith.cmpi eq, %[[D]], %[[M1]]
// CHECK: %[[U:.*]] = arith.ori %[[Z]], %[[N]]
// CHECK: %[[SAFE:.*]] = arith.select %[[U]], %[[ONE]], %[[D]]
// CHECK: %[[R:.*]] = arith.remsi %[[A]], %[[SAFE]]
// CHECK: %[[NZ:.*]] = arith.cmpi ne, %[[R]], %[[ZERO]]
// CHECK: %[[RN:.*]] = arith.cmpi slt, %[[R]], %[[ZERO]]
// CHECK: %[[DN:.*]] = arith.cmpi slt, %[[D]], %[[ZERO]]
// CHECK: %[[DIFF:.*]] = arith.xori %[[RN]], %[[DN]]
// CHECK: %[[FIX:.*]] = arith.andi %[[NZ]], %[[DIFF]]
// CHECK: %[[SUM:.*]] = arith.addi %[[R]], %[[D]]
// CHECK: %[[V:.*]] = arith.select %[[FIX]], %[[SUM]], %[[R]]
// CHECK: linalg.yield %[[V]]
func.func @mod_floor(%x: tensor<4xi64>, %y: tensor<1xi64>) -> tensor<4xi64> {
  %0 = lmopt.mod %x, %y : (tensor<4xi64>, tensor<1xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// fmod = true: the truncating remainder alone; floats take remf, f16 in f32.
// CHECK-LABEL: func.func @mod_fmod
// CHECK: ^bb0(%[[A:.*]]: i32, %[[D:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[R:.*]] = arith.remsi %[[A]], %{{.*}} : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[F:.*]]: f16, %[[G:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[FW:.*]] = arith.extf %[[F]] : f16 to f32
// CHECK: %[[GW:.*]] = arith.extf %[[G]] : f16 to f32
// CHECK: %[[FR:.*]] = arith.remf %[[FW]], %[[GW]] : f32
// CHECK: %[[FT:.*]] = arith.truncf %[[FR]] : f32 to f16
// CHECK: linalg.yield %[[FT]]
func.func @mod_fmod(%x: tensor<4xi32>, %y: tensor<4xi32>, %f: tensor<2x3xf16>, %g: tensor<3xf16>) -> (tensor<4xi32>, tensor<2x3xf16>) {
  %0 = lmopt.mod %x, %y {fmod = true} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = lmopt.mod %f, %g {fmod = true} : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  return %0, %1 : tensor<4xi32>, tensor<2x3xf16>
}

// -----

// A dynamic dim facing a static size above 1 may broadcast: not lowered.
// CHECK-LABEL: func.func @negative_mod_dynamic_broadcast
// CHECK-NOT: linalg.generic
// CHECK: lmopt.mod
func.func @negative_mod_dynamic_broadcast(%x: tensor<?xi64>, %y: tensor<4xi64>) -> tensor<4xi64> {
  %0 = lmopt.mod %x, %y : (tensor<?xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Range: start + i * delta over the result's static length; the bounds may
// be run-time scalars.
// CHECK-DAG: #[[S:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @range
// CHECK-SAME: %[[START:[^:]*]]: tensor<i64>, %[[DELTA:[^:]*]]: tensor<i64>, %[[FS:[^:]*]]: tensor<f32>, %[[FD:[^:]*]]: tensor<f32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xi64>
// CHECK: linalg.generic {indexing_maps = [#[[S]], #[[S]], #[[ID]]], iterator_types = ["parallel"]} ins(%[[START]], %[[DELTA]] : tensor<i64>, tensor<i64>) outs(%[[E]] : tensor<8xi64>)
// CHECK: ^bb0(%[[A:.*]]: i64, %[[D:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[II:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[M:.*]] = arith.muli %[[II]], %[[D]] : i64
// CHECK: %[[V:.*]] = arith.addi %[[A]], %[[M]] : i64
// CHECK: linalg.yield %[[V]]
// CHECK: ^bb0(%[[FA:.*]]: f32, %[[FDD:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[FI:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: %[[FM:.*]] = arith.mulf %[[FI]], %[[FDD]] : f32
// CHECK: %[[FV:.*]] = arith.addf %[[FA]], %[[FM]] : f32
// CHECK: linalg.yield %[[FV]]
func.func @range(%start: tensor<i64>, %delta: tensor<i64>, %fs: tensor<f32>, %fd: tensor<f32>) -> (tensor<8xi64>, tensor<3xf32>) {
  %limit = lmopt.constant dense<8> : tensor<i64>
  %0 = lmopt.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8xi64>
  %flimit = lmopt.constant dense<1.0> : tensor<f32>
  %1 = lmopt.range %fs, %flimit, %fd : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<8xi64>, tensor<3xf32>
}

// -----

// A length known only at run time is not lowered.
// CHECK-LABEL: func.func @negative_range_dynamic
// CHECK-NOT: linalg.generic
// CHECK: lmopt.range
func.func @negative_range_dynamic(%start: tensor<i64>, %limit: tensor<i64>, %delta: tensor<i64>) -> tensor<?xi64> {
  %0 = lmopt.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// CumSum as a reduction over an extra dim k along the axis, adding the
// input at k when k <= i (inclusive), k > i (exclusive and reverse).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: %[[X:.*]]: tensor<2x8xi32>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x8xi32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs(%[[E]] : tensor<2x8xi32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x8xi32>) outs(%[[F]] : tensor<2x8xi32>)
// CHECK: ^bb0(%[[A:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[K:.*]] = linalg.index 2 : index
// CHECK: %[[T:.*]] = arith.cmpi ule, %[[K]], %[[I]] : index
// CHECK: %[[S:.*]] = arith.select %[[T]], %[[A]], %[[ZERO]] : i32
// CHECK: %[[V:.*]] = arith.addi %[[ACC]], %[[S]] : i32
// CHECK: linalg.yield %[[V]]
// CHECK: linalg.generic
// CHECK: arith.cmpi ugt
// CHECK: arith.addf
func.func @cumsum(%x: tensor<2x8xi32>, %y: tensor<?x4xf32>) -> (tensor<2x8xi32>, tensor<?x4xf32>) {
  %0 = lmopt.cumsum %x {axis = 1 : i64} : tensor<2x8xi32>
  %1 = lmopt.cumsum %y {axis = -1 : i64, exclusive = true, reverse = true} : tensor<?x4xf32>
  return %0, %1 : tensor<2x8xi32>, tensor<?x4xf32>
}

// -----

// Booleans have no sum: not lowered.
// CHECK-LABEL: func.func @negative_cumsum_bool
// CHECK-NOT: linalg.generic
// CHECK: lmopt.cumsum
func.func @negative_cumsum_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = lmopt.cumsum %x {axis = 0 : i64} : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// GatherElements reads data at the output position with the axis replaced
// by the index: negative indices count from the end, and out-of-range ones
// are clamped into the axis (a kernel must not read out of bounds).
// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: %[[DATA:[^:]*]]: tensor<2x130xi64>, %[[IDX:[^:]*]]: tensor<2x8xi64>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[SIZE:.*]] = arith.constant 130 : i64
// CHECK-DAG: %[[LAST:.*]] = arith.constant 129 : i64
// CHECK: linalg.generic {{.*}} ins(%[[IDX]] : tensor<2x8xi64>)
// CHECK: ^bb0(%[[I:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]]
// CHECK: %[[WRAP:.*]] = arith.addi %[[I]], %[[SIZE]]
// CHECK: %[[J:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[I]]
// CHECK: %[[LO:.*]] = arith.maxsi %[[J]], %[[ZERO]]
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %[[LAST]]
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: %[[COL:.*]] = arith.index_cast %[[HI]] : i64 to index
// CHECK: %[[V:.*]] = tensor.extract %[[DATA]][%[[ROW]], %[[COL]]] : tensor<2x130xi64>
// CHECK: linalg.yield %[[V]]
func.func @gather_elements(%data: tensor<2x130xi64>, %idx: tensor<2x8xi64>) -> tensor<2x8xi64> {
  %0 = lmopt.gather_elements %data, %idx {axis = 1 : i64} : (tensor<2x130xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
  return %0 : tensor<2x8xi64>
}

// -----

// Dynamic shapes are not lowered.
// CHECK-LABEL: func.func @negative_gather_elements_dynamic
// CHECK-NOT: linalg.generic
// CHECK: lmopt.gather_elements
func.func @negative_gather_elements_dynamic(%data: tensor<2x?xi64>, %idx: tensor<2x8xi64>) -> tensor<2x8xi64> {
  %0 = lmopt.gather_elements %data, %idx {axis = 1 : i64} : (tensor<2x?xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
  return %0 : tensor<2x8xi64>
}
