// The attention backward step (lmopt.attention_grad) against PyTorch's
// autograd (float64, rounded to f32) on the inputs
// scripts/make_attention_grad_fixtures.py wrote: a bool mask with a fully
// hidden row, causal masking, zero_masked_rows and a scale of its own. The
// reference evaluator gives the same gradients.
// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s --check-prefix=PLAN
// RUN: lmopt-compile %s -o %t.lmopt 2>/dev/null
// RUN: lmopt-run %t.lmopt --inputs %S/Inputs/attention_grad.npz --compare %S/Inputs/attention_grad.expected.npz --rtol 1e-4 --atol 1e-5 | FileCheck %s
// RUN: lmopt-interpret %s --function=main --inputs=%S/Inputs/attention_grad.npz --output=%t.ref.npz
// RUN: lmopt-run %t.lmopt --inputs %S/Inputs/attention_grad.npz --compare %t.ref.npz --rtol 1e-5 --atol 1e-6 | FileCheck %s
// The GPU has no attention backward yet: the CUDA target names the op.
// RUN: not lmopt-compile %s --target=cuda --dump-plan 2>&1 | FileCheck %s --check-prefix=CUDA

// PLAN: attention_grad '{{.*}}' (%[[Q:[0-9]+]], %[[K:[0-9]+]], %[[V:[0-9]+]], %[[DY:[0-9]+]], %[[M:[0-9]+]]) -> (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {num_heads = 2, scale = 0.25, causal = 1, zero_masked_rows = 1}
// CHECK: PASS: 3 outputs
// CUDA: error: no CUDA lowering for 'lmopt.attention_grad' (node '{{.*}}'): the fused attention backward runs on the CPU only so far

func.func @main(%q: tensor<2x5x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>,
                %dy: tensor<2x5x8xf32>, %mask: tensor<2x1x5x5xi1>)
    -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>)
    attributes {lmopt.input_names = ["q", "k", "v", "dy", "mask"],
                lmopt.output_names = ["dq", "dk", "dv"]} {
  %0:3 = lmopt.attention_grad %q, %k, %v, %dy mask %mask {num_heads = 2 : i64, scale = 0.25 : f32, causal = true, zero_masked_rows = true} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x1x5x5xi1>) -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>
}
