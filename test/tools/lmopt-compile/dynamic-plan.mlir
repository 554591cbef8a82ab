// RUN: lmopt-compile %s --max-shape ids:4x16 --dump-plan 2>&1 | FileCheck %s
// RUN: not lmopt-compile %s --max-shape ids:4 --dump-plan 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not lmopt-compile %s --max-shape ids:4x0 --dump-plan 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not lmopt-compile %s --max-shape ids:4x16 --max-shape mask:2x2 --dump-plan 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not lmopt-compile %S/Inputs/dynamic-range.mlir --max-shape x:8 --dump-plan 2>&1 | FileCheck %s --check-prefix=DATA
// RUN: not lmopt-compile %S/Inputs/static-dim.mlir --max-shape x:3x8 --dump-plan 2>&1 | FileCheck %s --check-prefix=FIXED
// RUN: lmopt-compile %S/Inputs/static-dim.mlir --max-shape x:2x8 --dump-plan 2>&1 | FileCheck %s --check-prefix=KEPT

// Symbolic dims in the plan: the ids' dims are symbols with their bounds,
// the gathered and projected activations carry them, and the reshape to
// [-1, 4] is their product. Each symbolic dim prints as its expression and
// its value at the bounds, which sizes the arena.

// CHECK: symbols: ids.0 <= 4, ids.1 <= 16
// CHECK-NEXT: assumptions: none (checked on every run)
// CHECK: symbol ids.0 <= 4
// CHECK-NEXT: symbol ids.1 <= 16
// CHECK: tensor %0 = input 0 'ids' i64 [ids.0 <= 4, ids.1 <= 16]
// CHECK: 'embed' f32 [ids.0 <= 4, ids.1 <= 16, 8]
// CHECK: 'proj' f32 [ids.0 <= 4, ids.1 <= 16, 4]
// CHECK: 'flat' f32 [ids.0 * ids.1 <= 64, 4] alias of
// CHECK: step 0: gather 'embed'
// CHECK: step 1: linear 'proj'

// RANK: error: --max-shape for input 'ids' has 1 dims; the input has rank 2
// ZERO: error: --max-shape for input 'ids' gives dim 1 the bound 0; bounds are >= 1
// UNKNOWN: error: --max-shape names 'mask', which is not a model input (inputs: 'ids')
// FIXED: error: --max-shape for input 'x' gives dim 0 as 3, but the model fixes it at 2
// KEPT: symbols: x.1 <= 8
// KEPT: tensor %0 = input 0 'x' f32 [2, x.1 <= 8]
// DATA: error: dim 0 of 'steps' (?0) does not follow from the input dims and their bounds; pin it with --input-shape or narrow --max-shape

func.func @main(%ids: tensor<?x?xi64>) -> tensor<?x4xf32>
    attributes {lmopt.input_names = ["ids"], lmopt.output_names = ["hidden"]} {
  %table = lmopt.constant dense<1.5> : tensor<10x8xf32>
  %w = lmopt.constant dense<0.5> : tensor<8x4xf32>
  %shape = lmopt.constant dense<[-1, 4]> : tensor<2xi64>
  %e = lmopt.gather %table, %ids : (tensor<10x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32> loc("embed")
  %h = lmopt.linear %e, %w : (tensor<?x?x8xf32>, tensor<8x4xf32>) -> tensor<?x?x4xf32> loc("proj")
  %f = lmopt.reshape %h, %shape : (tensor<?x?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32> loc("flat")
  return %f : tensor<?x4xf32>
}
