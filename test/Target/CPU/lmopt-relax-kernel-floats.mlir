// RUN: lmopt-opt %s --lmopt-relax-kernel-floats --split-input-file | FileCheck %s

// Inputs are fused linalg on tensors, as lmopt-fuse-kernel-ops leaves them.

// Elementwise float arithmetic (math included) may contract: a multiply
// and an add become an FMA.
// CHECK-LABEL: func.func @elementwise_contract
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[M:.*]] = arith.mulf %[[IN]], %[[IN]] fastmath<contract> : f32
// CHECK: %[[A:.*]] = arith.addf %[[M]], %[[B]] fastmath<contract> : f32
// CHECK: %[[E:.*]] = math.exp %[[A]] fastmath<contract> : f32
// CHECK: linalg.yield %[[E]]
func.func @elementwise_contract(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in : f32
    %3 = arith.addf %2, %in_0 : f32
    %4 = math.exp %3 : f32
    linalg.yield %4 : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// In a reduction, the combiner (the op whose value is yielded) may also be
// reassociated, which is what vectorizes the sum; the ops feeding it only
// contract.
// CHECK-LABEL: func.func @reduction_reassociates_combiner
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[MAX:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[D:.*]] = arith.subf %[[IN]], %[[MAX]] fastmath<contract> : f32
// CHECK: %[[E:.*]] = math.exp %[[D]] fastmath<contract> : f32
// CHECK: %[[S:.*]] = arith.addf %[[E]], %[[ACC]] fastmath<reassoc,contract> : f32
// CHECK: linalg.yield %[[S]]
func.func @reduction_reassociates_combiner(%arg0: tensor<2x4x64xf32>, %arg1: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<2x4x64xf32>, tensor<2x4xf32>) outs(%1 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.subf %in, %in_0 : f32
    %4 = math.exp %3 : f32
    %5 = arith.addf %4, %out : f32
    linalg.yield %5 : f32
  } -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// Flags already present are kept.
// CHECK-LABEL: func.func @existing_flags_kept
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc,nnan,contract> : f32
func.func @existing_flags_kept(%arg0: tensor<4x64xf32>) -> tensor<4xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x64xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %3 = arith.maximumf %in, %out fastmath<nnan> : f32
    linalg.yield %3 : f32
  } -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Conversions get no flags: contract on an extf/truncf pair would let arith
// fold away the rounding to f16 that the result needs.
// CHECK-LABEL: func.func @negative_conversions
// CHECK: ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[W:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK: %[[E:.*]] = math.exp %[[W]] fastmath<contract> : f32
// CHECK: %[[N:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK: linalg.yield %[[N]]
func.func @negative_conversions(%arg0: tensor<4x40xf16>) -> tensor<4x40xf16> {
  %0 = tensor.empty() : tensor<4x40xf16>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x40xf16>) outs(%0 : tensor<4x40xf16>) {
  ^bb0(%in: f16, %out: f16):
    %2 = arith.extf %in : f16 to f32
    %3 = math.exp %2 : f32
    %4 = arith.truncf %3 : f32 to f16
    linalg.yield %4 : f16
  } -> tensor<4x40xf16>
  return %1 : tensor<4x40xf16>
}

// -----

// Only generic bodies are relaxed.
// CHECK-LABEL: func.func @negative_outside_generic
// CHECK-SAME: %[[A:.*]]: f32, %[[B:.*]]: f32
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK: return %[[S]]
func.func @negative_outside_generic(%arg0: f32, %arg1: f32) -> f32 {
  %0 = arith.addf %arg0, %arg1 : f32
  return %0 : f32
}
