// RUN: lmopt-opt %s --lmopt-fuse-kernel-ops --split-input-file | FileCheck %s

// Inputs are convert-lmopt-to-linalg's output for small kernels.

// A bias add and the exp reading it: one generic, one pass over memory.
// CHECK-LABEL: func.func @bias_exp
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: %[[EXP:.*]] = math.exp %[[SUM]]
// CHECK: linalg.yield %[[EXP]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @bias_exp(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    linalg.yield %4 : f32
  } -> tensor<4x8xf32>
  %2 = tensor.empty() : tensor<4x8xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.exp %in : f32
    linalg.yield %4 : f32
  } -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// An elementwise producer read element for element by a reduction fuses
// into it: the sum of exponentials, as softmax computes it.
// CHECK-LABEL: func.func @exp_into_row_sum
// CHECK-SAME: %[[X:.*]]: tensor<4x64xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x64xf32>)
// CHECK: %[[EXP:.*]] = math.exp
// CHECK: %[[ACC:.*]] = arith.addf %[[EXP]]
// CHECK: linalg.yield %[[ACC]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @exp_into_row_sum(%arg0: tensor<4x64xf32>) -> tensor<4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x64xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = math.exp %in : f32
    linalg.yield %5 : f32
  } -> tensor<4x64xf32>
  %2 = tensor.empty() : tensor<4xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<4xf32>) -> tensor<4xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<4x64xf32>) outs(%3 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.addf %in, %out : f32
    linalg.yield %5 : f32
  } -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// A per-row statistic (a layer norm's reciprocal standard deviation) read
// through a broadcast by the output: fused, it would be computed again for
// every element of the row, so it stays a generic of its own.
// CHECK-LABEL: func.func @negative_per_row_statistic
// CHECK-SAME: %[[X:.*]]: tensor<8x64xf32>, %[[VAR:.*]]: tensor<8xf32>
// CHECK: %[[RSTD:.*]] = linalg.generic {{.*}} ins(%[[VAR]] : tensor<8xf32>)
// CHECK: math.sqrt
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[RSTD]] : tensor<8x64xf32>, tensor<8xf32>)
// CHECK-NOT: math.sqrt
// CHECK: return %[[R]]
func.func @negative_per_row_statistic(%arg0: tensor<8x64xf32>, %arg1: tensor<8xf32>) -> tensor<8x64xf32> {
  %cst = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg1 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.sqrt %in : f32
    %5 = arith.divf %cst, %4 : f32
    linalg.yield %5 : f32
  } -> tensor<8xf32>
  %2 = tensor.empty() : tensor<8x64xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %1 : tensor<8x64xf32>, tensor<8xf32>) outs(%2 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.mulf %in, %in_0 : f32
    linalg.yield %4 : f32
  } -> tensor<8x64xf32>
  return %3 : tensor<8x64xf32>
}

// -----

// A producer that is also returned has another use: fusing it would compute
// it twice, once for the result and once inside its consumer.
// CHECK-LABEL: func.func @negative_other_use
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: %[[NEG:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<4x8xf32>)
// CHECK-NOT: math.exp
// CHECK: return %[[EXP]], %[[NEG]]
func.func @negative_other_use(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.exp %in : f32
    linalg.yield %4 : f32
  } -> tensor<4x8xf32>
  %2 = tensor.empty() : tensor<4x8xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.negf %in : f32
    linalg.yield %4 : f32
  } -> tensor<4x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}
