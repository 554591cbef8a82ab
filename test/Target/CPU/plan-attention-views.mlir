// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s
// RUN: lmopt-compile %s --dump-plan 2>/dev/null | %lmopt_python %S/Inputs/check_plan.py | FileCheck %s --check-prefix=VALID
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz x=2x6x48:float32 mask=2x1x1x6:bool
// RUN: lmopt-interpret %s --function=main --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-compile %s -o %t.lmopt 2>/dev/null
// RUN: lmopt-run %t.lmopt --inputs %t.npz --compare %t.ref.npz | FileCheck %s --check-prefix=MATCH
// RUN: lmopt-compile %S/Inputs/attention-views-partial.mlir --dump-plan 2>/dev/null | FileCheck %s --check-prefix=PARTIAL
// RUN: lmopt-compile %S/Inputs/attention-views-negative.mlir --dump-plan 2>/dev/null | FileCheck %s --check-prefix=NEGATIVE
// RUN: lmopt-compile %S/Inputs/attention-views-dynamic.mlir --max-shape x:2x8x48 --dump-plan 2>/dev/null | FileCheck %s --check-prefix=DYNAMIC
// RUN: lmopt-compile %S/Inputs/attention-views-shape.mlir --max-shape x:2x6x48 --max-shape y:2x6x48 --dump-plan 2>/dev/null | FileCheck %s --check-prefix=SHAPE
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.shape.npz x=1x5x48:float32 y=2x3x48:float32
// RUN: lmopt-interpret %S/Inputs/attention-views-shape.mlir --function=main --inputs=%t.shape.npz --output=%t.shape.ref.npz
// RUN: lmopt-compile %S/Inputs/attention-views-shape.mlir --max-shape x:2x6x48 --max-shape y:2x6x48 -o %t.shape.lmopt 2>/dev/null
// RUN: lmopt-run %t.shape.lmopt --inputs %t.shape.npz --compare %t.shape.ref.npz | FileCheck %s --check-prefix=SHAPE-MATCH
// RUN: lmopt-compile %S/Inputs/attention-views-dynamic-width.mlir --max-shape x:2x8x48 --dump-plan 2>/dev/null | FileCheck %s --check-prefix=DYNAMIC-WIDTH

// Query, key and value cut from one [B, S, 3*H*D] tensor along its last
// axis are read in place: the attention step takes the tensor itself, with
// each role's element offset and row stride. `attn` reads the split of the
// input `x`, so no step precedes it; `attn2` reads slices (out of order,
// one with negative bounds) of the kernel result `t`, which the kernel
// writes whole. Both run against the reference evaluator.

// CHECK-LABEL: plan:
// CHECK-DAG: tensor %[[X:[0-9]+]] = input 0 'x' f32 [2, 6, 48]
// CHECK-DAG: tensor %[[M:[0-9]+]] = input 1 'mask' bool [2, 1, 1, 6]
// CHECK-DAG: tensor %[[T:[0-9]+]] = arena @{{[0-9]+}} 't' f32 [2, 6, 48]
// CHECK: step 0: attention 'attn' (%[[X]], %[[X]], %[[X]], %[[M]]) -> (%{{[0-9]+}}) {num_heads = 2, scale = 0.353553391, causal = 0, kv_heads_split = 0, zero_masked_rows = 0, query_offset = 0, query_row_stride = 48, key_offset = 16, key_row_stride = 48, value_offset = 32, value_row_stride = 48}
// CHECK-NEXT: step 1: kernel 't' (%[[X]]) -> (%[[T]])
// CHECK-NEXT: step 2: attention 'attn2' (%[[T]], %[[T]], %[[T]], %[[M]]) -> (%{{[0-9]+}}) {num_heads = 4, scale = 0.5, causal = 1, kv_heads_split = 0, zero_masked_rows = 0, query_offset = 32, query_row_stride = 48, key_offset = 0, key_row_stride = 48, value_offset = 16, value_row_stride = 48}
// CHECK-NOT: step 3

// VALID: plan ok
// MATCH: PASS: 2 outputs

func.func @main(%x: tensor<2x6x48xf32>, %mask: tensor<2x1x1x6xi1>)
    -> (tensor<2x6x16xf32>, tensor<2x6x16xf32>)
    attributes {lmopt.input_names = ["x", "mask"],
                lmopt.output_names = ["a", "b"]} {
  %q, %k, %v = lmopt.split %x {axis = 2 : i64, split_sizes = array<i64: 16, 16, 16>}
      : (tensor<2x6x48xf32>) -> (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>) loc("split")
  %a = lmopt.attention %q, %k, %v mask %mask {num_heads = 2 : i64}
      : (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x1x1x6xi1>)
      -> tensor<2x6x16xf32> loc("attn")
  %t = lmopt.tanh %x : tensor<2x6x48xf32> loc("t")
  %c0 = lmopt.constant dense<0> : tensor<1xi64>
  %c16 = lmopt.constant dense<16> : tensor<1xi64>
  %c32 = lmopt.constant dense<32> : tensor<1xi64>
  %cmax = lmopt.constant dense<9223372036854775807> : tensor<1xi64>
  %cm32 = lmopt.constant dense<-32> : tensor<1xi64>
  %cm16 = lmopt.constant dense<-16> : tensor<1xi64>
  %last = lmopt.constant dense<-1> : tensor<1xi64>
  %one = lmopt.constant dense<1> : tensor<1xi64>
  %q2 = lmopt.slice %t, %c32, %cmax axes %last : (tensor<2x6x48xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x6x16xf32>
  %k2 = lmopt.slice %t, %c0, %c16 axes %last steps %one : (tensor<2x6x48xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x6x16xf32>
  %v2 = lmopt.slice %t, %cm32, %cm16 axes %last : (tensor<2x6x48xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x6x16xf32>
  %b = lmopt.attention %q2, %k2, %v2 mask %mask {num_heads = 4 : i64, causal = true}
      : (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<2x1x1x6xi1>)
      -> tensor<2x6x16xf32> loc("attn2")
  return %a, %b : tensor<2x6x16xf32>, tensor<2x6x16xf32>
}

// A split with another user keeps a kernel for that part only.
// PARTIAL-LABEL: plan:
// PARTIAL-DAG: tensor %[[X:[0-9]+]] = input 0 'x' f32 [2, 6, 48]
// PARTIAL-DAG: tensor %[[V:[0-9]+]] = arena @{{[0-9]+}} 'split:2' f32 [2, 6, 16]
// PARTIAL: step 0: kernel 'split' (%[[X]]) -> (%[[V]])
// PARTIAL-NEXT: step 1: attention 'attn' (%[[X]], %[[X]], %[[V]]) -> (%{{[0-9]+}}) {{{.*}}, query_offset = 0, query_row_stride = 48, key_offset = 16, key_row_stride = 48}
// PARTIAL-NOT: step 2

// negative_: a split of the sequence axis and a slice with step 2 keep their
// kernels and dense operands; a split part used as the mask is written by a
// kernel, while its other part is still a view.
// NEGATIVE-LABEL: plan:
// NEGATIVE: step 0: kernel 'seq_split' (%0) -> (%[[S0:[0-9]+]], %[[S1:[0-9]+]])
// NEGATIVE-NEXT: step 1: attention 'attn_seq' (%[[S0]], %[[S1]], %[[S1]]) -> (%{{[0-9]+}}) {{{[^}]*}}zero_masked_rows = 0}
// NEGATIVE-NEXT: step 2: kernel 'strided' (%1) -> (%[[E:[0-9]+]])
// NEGATIVE-NEXT: step 3: attention 'attn_strided' (%[[E]], %[[E]], %[[E]]) -> (%{{[0-9]+}}) {{{[^}]*}}zero_masked_rows = 0}
// NEGATIVE-NEXT: step 4: kernel 'mask_split' (%2) -> (%[[M:[0-9]+]])
// NEGATIVE-NEXT: step 5: attention 'attn_mask' (%2, %2, %2, %[[M]]) -> (%{{[0-9]+}}) {{{.*}}, query_offset = 6, query_row_stride = 12, key_offset = 6, key_row_stride = 12, value_offset = 6, value_row_stride = 12}

// Symbolic batch and sequence: the views hold (the width is static).
// DYNAMIC: tensor %0 = input 0 'x' f32 [x.0 <= 2, x.1 <= 8, 48]
// DYNAMIC: step 0: attention 'attn' (%0, %0, %0) -> (%1) {{{.*}}, query_offset = 0, query_row_stride = 48, key_offset = 16, key_row_stride = 48, value_offset = 32, value_row_stride = 48}
// DYNAMIC-NOT: step 1

// A view whose dims a shape op reads: in the split's own kernel, nothing of
// the split is written; in a later kernel, the query part is written for it.
// SHAPE: tensor %[[X:[0-9]+]] = input 0 'x'
// SHAPE: tensor %[[Y:[0-9]+]] = input 1 'y'
// SHAPE: step 0: kernel 'xsplit' (%[[X]]) -> (%[[XS:[0-9]+]])
// SHAPE-NEXT: step 1: attention 'attn_x' (%[[X]], %[[X]], %[[X]]) -> (%{{[0-9]+}}) {{{.*}}, value_row_stride = 48}
// SHAPE-NEXT: step 2: kernel 'ysplit' (%[[Y]]) -> (%[[YQ:[0-9]+]])
// SHAPE-NEXT: step 3: attention 'attn_y' (%[[Y]], %[[Y]], %[[Y]]) -> (%{{[0-9]+}}) {{{.*}}, value_row_stride = 48}
// SHAPE-NEXT: step 4: kernel 'yshape' (%[[YQ]])
// SHAPE-MATCH: PASS: 4 outputs

// negative_: a symbolic width keeps the split kernel.
// DYNAMIC-WIDTH: step 0: kernel 'split' (%0) -> (%[[Q:[0-9]+]], %[[K:[0-9]+]], %[[V:[0-9]+]])
// DYNAMIC-WIDTH-NEXT: step 1: attention 'attn' (%[[Q]], %[[K]], %[[V]]) -> (%{{[0-9]+}}) {{{[^}]*}}zero_masked_rows = 0}
