// RUN: lmopt-opt %s -lmopt-narrow-precision="dtype=bf16 wide-results=true" -cse -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-narrow-precision="dtype=bf16 wide-results=true" -lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// Mixed precision the CPU way (lmopt-compile --train --precision=bf16): a
// linear reads bf16 copies of its input and weight and writes f32; the bias
// and residual stay f32, and no cast follows the result.
// CHECK-LABEL: func @wide_linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<2xf32>, %[[R:.*]]: tensor<4x2xf32>)
// CHECK-DAG: %[[WH:.*]] = lmopt.cast %[[W]] : tensor<3x2xf32> -> tensor<3x2xbf16>
// CHECK-DAG: %[[XH:.*]] = lmopt.cast %[[X]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK: %[[Y:.*]] = lmopt.linear %[[XH]], %[[WH]] bias %[[B]] residual %[[R]] : (tensor<4x3xbf16>, tensor<3x2xbf16>, tensor<2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @wide_linear(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>, %r: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %y = lmopt.linear %x, %w bias %b residual %r : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A weight gradient `x^T dy` (a matmul with a rank-2 right operand) becomes
// a bf16 linear into f32; the narrowing moves above the transpose, so the
// forward linear and the gradient share one cast of `x`.
// CHECK-LABEL: func @weight_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[DY:.*]]: tensor<4x2xf32>)
// CHECK-DAG: %[[XH:.*]] = lmopt.cast %[[X]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK-DAG: %[[DYH:.*]] = lmopt.cast %[[DY]] : tensor<4x2xf32> -> tensor<4x2xbf16>
// CHECK-DAG: %[[Y:.*]] = lmopt.linear %[[XH]], %{{.*}} : (tensor<4x3xbf16>, tensor<3x2xbf16>) -> tensor<4x2xf32>
// CHECK-DAG: %[[XT:.*]] = lmopt.transpose %[[XH]] {{.*}} : tensor<4x3xbf16> -> tensor<3x4xbf16>
// CHECK-DAG: %[[G:.*]] = lmopt.linear %[[XT]], %[[DYH]] : (tensor<3x4xbf16>, tensor<4x2xbf16>) -> tensor<3x2xf32>
// CHECK-NOT: lmopt.matmul
// CHECK-NOT: lmopt.cast %[[X]]
func.func @weight_gradient(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %dy: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<3x2xf32>) {
  %y = lmopt.linear %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %xt = lmopt.transpose %x {perm = array<i64: 1, 0>} : tensor<4x3xf32> -> tensor<3x4xf32>
  %g = lmopt.matmul %xt, %dy : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  return %y, %g : tensor<4x2xf32>, tensor<3x2xf32>
}

// -----

// A training step's products of rank-3 activations: the forward linear
// reads x as it is, the input gradient dy as it is, the weight gradient both
// flattened to rank 2 (and x transposed). The narrowing moves above the
// reshapes and the transpose, so x and dy are each cast once (before this,
// a second cast of each was a kernel of its own and x stayed alive in f32).
// CHECK-LABEL: func @flattened_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<2x2x3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[DY:.*]]: tensor<2x2x2xf32>)
// CHECK-DAG: %[[XH:.*]] = lmopt.cast %[[X]] : tensor<2x2x3xf32> -> tensor<2x2x3xbf16>
// CHECK-DAG: %[[DYH:.*]] = lmopt.cast %[[DY]] : tensor<2x2x2xf32> -> tensor<2x2x2xbf16>
// CHECK-DAG: lmopt.linear %[[XH]], %{{.*}} : (tensor<2x2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2x2xf32>
// CHECK-DAG: lmopt.linear %[[DYH]], %{{.*}} {transpose_weight = true} : (tensor<2x2x2xbf16>, tensor<3x2xbf16>) -> tensor<2x2x3xf32>
// CHECK-DAG: %[[XF:.*]] = lmopt.reshape %[[XH]], %{{.*}} : (tensor<2x2x3xbf16>, tensor<2xi64>) -> tensor<4x3xbf16>
// CHECK-DAG: %[[XT:.*]] = lmopt.transpose %[[XF]] {{.*}} : tensor<4x3xbf16> -> tensor<3x4xbf16>
// CHECK-DAG: %[[DYF:.*]] = lmopt.reshape %[[DYH]], %{{.*}} : (tensor<2x2x2xbf16>, tensor<2xi64>) -> tensor<4x2xbf16>
// CHECK-DAG: lmopt.linear %[[XT]], %[[DYF]] : (tensor<3x4xbf16>, tensor<4x2xbf16>) -> tensor<3x2xf32>
// CHECK-NOT: lmopt.cast
// CHECK: return
func.func @flattened_gradient(%x: tensor<2x2x3xf32>, %w: tensor<3x2xf32>, %dy: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2x3xf32>, tensor<3x2xf32>) {
  %y = lmopt.linear %x, %w : (tensor<2x2x3xf32>, tensor<3x2xf32>) -> tensor<2x2x2xf32>
  %dx = lmopt.linear %dy, %w {transpose_weight = true} : (tensor<2x2x2xf32>, tensor<3x2xf32>) -> tensor<2x2x3xf32>
  %s43 = lmopt.constant dense<[4, 3]> : tensor<2xi64>
  %s42 = lmopt.constant dense<[4, 2]> : tensor<2xi64>
  %xf = lmopt.reshape %x, %s43 : (tensor<2x2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %xt = lmopt.transpose %xf {perm = array<i64: 1, 0>} : tensor<4x3xf32> -> tensor<3x4xf32>
  %dyf = lmopt.reshape %dy, %s42 : (tensor<2x2x2xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  %g = lmopt.matmul %xt, %dyf : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  return %y, %dx, %g : tensor<2x2x2xf32>, tensor<2x2x3xf32>, tensor<3x2xf32>
}

// -----

// Negative: a slice reads part of its input, so the narrowing stays after
// it (casting the whole input would convert elements nobody reads).
// CHECK-LABEL: func @sliced_operand
// CHECK: %[[S:.*]] = lmopt.slice %{{.*}} : (tensor<6x3xf32>, {{.*}}) -> tensor<4x3xf32>
// CHECK: %[[SH:.*]] = lmopt.cast %[[S]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK: lmopt.linear %[[SH]]
func.func @sliced_operand(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %b = lmopt.constant dense<[0]> : tensor<1xi64>
  %e = lmopt.constant dense<[4]> : tensor<1xi64>
  %a = lmopt.constant dense<[0]> : tensor<1xi64>
  %s = lmopt.slice %x, %b, %e axes %a : (tensor<6x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x3xf32>
  %y = lmopt.linear %s, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Negative: batched matmuls and attention stay f32 (the CPU's attention and
// batched products read f32), as does a linear of a model already in half precision.
// CHECK-LABEL: func @stays_f32
// CHECK-NOT: bf16
// CHECK: lmopt.matmul %{{.*}}, %{{.*}} : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
// CHECK: lmopt.attention
// CHECK: lmopt.linear %{{.*}}, %{{.*}} : (tensor<4x3xf16>, tensor<3x2xf16>) -> tensor<4x2xf16>
func.func @stays_f32(%a: tensor<2x4x3xf32>, %b: tensor<2x3x5xf32>, %q: tensor<1x4x8xf32>, %x: tensor<4x3xf16>, %wh: tensor<3x2xf16>) -> (tensor<2x4x5xf32>, tensor<1x4x8xf32>, tensor<4x2xf16>) {
  %0 = lmopt.matmul %a, %b : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  %1 = lmopt.attention %q, %q, %q {num_heads = 2 : i64} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %2 = lmopt.linear %x, %wh : (tensor<4x3xf16>, tensor<3x2xf16>) -> tensor<4x2xf16>
  return %0, %1, %2 : tensor<2x4x5xf32>, tensor<1x4x8xf32>, tensor<4x2xf16>
}

// REPORT: half_precision 7 0
