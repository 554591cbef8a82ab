// RUN: lmopt-opt %s --lmopt-tile-kernel-rows --split-input-file | FileCheck %s

// Inputs are linalg on tensors after lmopt-fuse-kernel-ops, canonicalization,
// CSE and lmopt-relax-kernel-floats, as the kernel pipeline runs them.

// Softmax over the last dim: one iteration per row of the output generic,
// the max and the sum of that row computed inside it. (The max is fused once
// per use; CSE merges the copies later.)
// CHECK-LABEL: func.func @softmax_rows
// CHECK-SAME: %[[X:.*]]: tensor<2x4x64xf32>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4x64xf32>
// CHECK: %[[LOOP:.*]] = scf.forall (%[[I:.*]], %[[J:.*]]) in (2, 4) shared_outs(%[[OUT:.*]] = %[[INIT]]) -> (tensor<2x4x64xf32>)
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[X]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}"reduction"]} ins(%{{.*}} : tensor<1x1x64xf32>) outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}"reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x64xf32>, tensor<1x1xf32>) outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: math.exp
// CHECK: %[[OUTROW:.*]] = tensor.extract_slice %[[OUT]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[ROW]], %[[MAX]], %[[SUM]] : {{.*}}) outs(%[[OUTROW]] : tensor<1x1x64xf32>)
// CHECK: tensor.parallel_insert_slice %[[Y]] into %[[OUT]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK: return %[[LOOP]]
func.func @softmax_rows(%arg0: tensor<2x4x64xf32>) -> tensor<2x4x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<2x4xf32>
  %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x4x64xf32>) outs(%1 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.maximumf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %7 : f32
  } -> tensor<2x4xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %2 : tensor<2x4x64xf32>, tensor<2x4xf32>) outs(%3 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %7 = arith.subf %in, %in_1 fastmath<contract> : f32
    %8 = math.exp %7 fastmath<contract> : f32
    %9 = arith.addf %8, %out fastmath<reassoc,contract> : f32
    linalg.yield %9 : f32
  } -> tensor<2x4xf32>
  %5 = tensor.empty() : tensor<2x4x64xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %2, %4 : tensor<2x4x64xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%5 : tensor<2x4x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
    %7 = arith.subf %in, %in_1 fastmath<contract> : f32
    %8 = math.exp %7 fastmath<contract> : f32
    %9 = arith.divf %8, %in_2 fastmath<contract> : f32
    linalg.yield %9 : f32
  } -> tensor<2x4x64xf32>
  return %6 : tensor<2x4x64xf32>
}

// -----

// A rank-1 root (a mean without keepdims) is tiled in blocks of 8 rows.
// CHECK-LABEL: func.func @row_mean_blocks_of_rows
// CHECK-SAME: %[[X:.*]]: tensor<16x64xf32>
// CHECK: %[[LOOP:.*]] = scf.forall (%[[I:.*]]) = (0) to (16) step (8) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<16xf32>)
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [8, 64] [1, 1]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}"reduction"]} ins(%[[ROWS]] : tensor<8x64xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: tensor.parallel_insert_slice %[[MEAN]] into %[[OUT]][%[[I]]] [8] [1]
// CHECK: return %[[LOOP]]
func.func @row_mean_blocks_of_rows(%arg0: tensor<16x64xf32>) -> tensor<16xf32> {
  %cst = arith.constant 6.400000e+01 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16xf32>
  %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<16xf32>) -> tensor<16xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<16x64xf32>) outs(%1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %4 : f32
  } -> tensor<16xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%2 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.divf %in, %cst fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<16xf32>
  return %3 : tensor<16xf32>
}

// -----

// A fused producer that is also a kernel result leaves the loop as a second
// result of the loop, written row by row.
// CHECK-LABEL: func.func @sum_also_returned
// CHECK: %[[LOOP:.*]]:2 = scf.forall (%[[I:.*]]) in (4) shared_outs(%[[OUT:.*]] = %{{.*}}, %[[SUMOUT:.*]] = %{{.*}}) -> (tensor<4x64xf32>, tensor<4x1xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<1x64xf32>, tensor<1x1xf32>)
// CHECK: tensor.parallel_insert_slice %[[Y]] into %[[OUT]][%[[I]], 0] [1, 64] [1, 1]
// CHECK: tensor.parallel_insert_slice %[[S]] into %[[SUMOUT]][%[[I]], 0] [1, 1] [1, 1]
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1
func.func @sum_also_returned(%arg0: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x1xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x64xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %7 : f32
  } -> tensor<4xf32>
  %3 = tensor.empty() : tensor<4x1xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<4xf32>) outs(%3 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x1xf32>
  %5 = tensor.empty() : tensor<4x64xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %4 : tensor<4x64xf32>, tensor<4x1xf32>) outs(%5 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %7 = arith.subf %in, %in_0 fastmath<contract> : f32
    linalg.yield %7 : f32
  } -> tensor<4x64xf32>
  return %6, %4 : tensor<4x64xf32>, tensor<4x1xf32>
}

// -----

// A mean over the first dim is read by every row: its slice does not follow
// the row index, so it is computed once, before the loop, not once per row.
// CHECK-LABEL: func.func @negative_column_statistic
// CHECK-SAME: %[[X:.*]]: tensor<4x64xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}["reduction", "parallel"]} ins(%[[X]] : tensor<4x64xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<64xf32>)
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MEAN]] : tensor<1x64xf32>, tensor<1x64xf32>)
// CHECK-NOT: "reduction"
// CHECK: return
func.func @negative_column_statistic(%arg0: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %cst = arith.constant 4.000000e+00 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64xf32>
  %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<64xf32>) -> tensor<64xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<4x64xf32>) outs(%1 : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %7 : f32
  } -> tensor<64xf32>
  %3 = tensor.empty() : tensor<1x64xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<64xf32>) outs(%3 : tensor<1x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.divf %in, %cst fastmath<contract> : f32
    linalg.yield %7 : f32
  } -> tensor<1x64xf32>
  %5 = tensor.empty() : tensor<4x64xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %4 : tensor<4x64xf32>, tensor<1x64xf32>) outs(%5 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %7 = arith.subf %in, %in_1 fastmath<contract> : f32
    linalg.yield %7 : f32
  } -> tensor<4x64xf32>
  return %6 : tensor<4x64xf32>
}

// -----

// No reduction: the kernel is one elementwise loop nest already.
// CHECK-LABEL: func.func @negative_elementwise
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-NOT: scf.forall
// CHECK: return %[[R]]
func.func @negative_elementwise(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.addf %in, %in_0 fastmath<contract> : f32
    %3 = math.exp %2 fastmath<contract> : f32
    linalg.yield %3 : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
