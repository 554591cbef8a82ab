// The adamw step (lmopt.adamw, one fused pass over a parameter and its
// moments) against torch.optim.AdamW's single-tensor update replayed in
// numpy float32 (Inputs/adamw_ref.py), and the reference evaluator against
// the bundle.
// RUN: %lmopt_python %S/Inputs/adamw_ref.py %t.npz %t.expected.npz
// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s --check-prefix=PLAN
// RUN: lmopt-compile %s -o %t.lmopt 2>/dev/null
// RUN: lmopt-run %t.lmopt --inputs %t.npz --compare %t.expected.npz --rtol 1e-6 --atol 1e-7 | FileCheck %s
// RUN: lmopt-interpret %s --function=main --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-run %t.lmopt --inputs %t.npz --compare %t.ref.npz --rtol 0 --atol 0 | FileCheck %s

// PLAN: adamw '{{.*}}' (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) -> (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {beta1 = 0.9, beta2 = 0.999, epsilon = 1e-08, weight_decay = 0.01}
// CHECK: PASS: 3 outputs

func.func @main(%p: tensor<37x29xf32>, %g: tensor<37x29xf32>, %m: tensor<37x29xf32>, %v: tensor<37x29xf32>,
                %lr: tensor<f32>, %step: tensor<f32>, %bc2: tensor<f32>, %scale: tensor<f32>, %coef: tensor<f32>)
    -> (tensor<37x29xf32>, tensor<37x29xf32>, tensor<37x29xf32>)
    attributes {lmopt.input_names = ["p", "g", "m", "v", "lr", "step_size", "bc2", "grad_scale", "clip_coef"],
                lmopt.output_names = ["new_p", "new_m", "new_v"]} {
  %0:3 = lmopt.adamw %p, %g, %m, %v, %lr, %step, %bc2, %scale, %coef {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.01 : f64} : tensor<37x29xf32>, tensor<f32>
  return %0#0, %0#1, %0#2 : tensor<37x29xf32>, tensor<37x29xf32>, tensor<37x29xf32>
}
