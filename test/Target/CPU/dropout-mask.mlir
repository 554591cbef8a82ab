// A training-mode dropout's keep-mask (lmopt.dropout_mask): the reference
// evaluator and the generated kernel both give the mask of an independent
// numpy Philox4x32-10 (checked against Random123's known answers), bit for
// bit, with a seed whose high word is set.
// RUN: %lmopt_python %S/Inputs/dropout_mask_ref.py %t.npz %t.expected.npz 0x0123456789ABCDEF 4x16x37 0.1 3 | FileCheck %s --check-prefix=REF
// RUN: lmopt-interpret %s --function=main --inputs=%t.npz --output=%t.interp.npz
// RUN: lmopt-compile %s -o %t.lmopt 2>/dev/null
// RUN: lmopt-run %t.lmopt --inputs %t.npz --compare %t.expected.npz --rtol 0 --atol 0 | FileCheck %s --check-prefix=MATCH
// RUN: %lmopt_python %S/Inputs/compare_npz.py %t.interp.npz %t.expected.npz | FileCheck %s --check-prefix=INTERP
// A different seed gives a different mask.
// RUN: %lmopt_python %S/Inputs/dropout_mask_ref.py %t.other.npz %t.other.expected.npz 7 4x16x37 0.1 3
// RUN: not lmopt-run %t.lmopt --inputs %t.other.npz --compare %t.expected.npz --rtol 0 --atol 0 | FileCheck %s --check-prefix=DIFFER

// REF: reference: 2368 elements, kept fraction 0.8{{[0-9]+}}
// MATCH: kept: max abs error 0, max rel error 0: PASS
// MATCH: out: max abs error 0, max rel error 0: PASS
// INTERP: kept: equal
// INTERP: out: equal
// DIFFER: kept: {{.*}}FAIL

func.func @main(%x: tensor<4x16x37xf32>, %seed: tensor<i64>) -> (tensor<4x16x37xf32>, tensor<4x16x37xf32>) attributes {lmopt.input_names = ["x", "seed"], lmopt.output_names = ["kept", "out"]} {
  %mask = lmopt.dropout_mask %x, %seed {ratio = 1.000000e-01 : f32, stream = 3 : i64} : (tensor<4x16x37xf32>, tensor<i64>) -> tensor<4x16x37xi1>
  %kept = lmopt.cast %mask : tensor<4x16x37xi1> -> tensor<4x16x37xf32>
  %scale = lmopt.constant dense<1.11111116> : tensor<f32>
  %0 = lmopt.mul %x, %kept : (tensor<4x16x37xf32>, tensor<4x16x37xf32>) -> tensor<4x16x37xf32>
  %1 = lmopt.mul %0, %scale : (tensor<4x16x37xf32>, tensor<f32>) -> tensor<4x16x37xf32>
  return %kept, %1 : tensor<4x16x37xf32>, tensor<4x16x37xf32>
}
