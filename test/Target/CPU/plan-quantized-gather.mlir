// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz ids=2x3:int64:-4:3
// RUN: lmopt-interpret %s --function=main --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-compile %s -o %t.lmopt 2>/dev/null
// RUN: lmopt-run %t.lmopt --inputs %t.npz --compare %t.ref.npz --rtol 0 --atol 0 | FileCheck %s --check-prefix=MATCH

// A gather from a row-quantized table (docs/dialect.md, "Quantized
// embedding tables"): the i8 constant under the storage cast is the table
// (no f32 copy), its scales an f32 weight, and the gather step dequantizes
// the rows it takes; the bundle matches the reference evaluator exactly.

// CHECK-LABEL: plan:
// CHECK-NOT: f32 [4, 3]
// The storage cast names the constant's bytes (an alias at the same offset).
// CHECK-DAG: tensor %[[BITS:[0-9]+]] = weight @[[AT:[0-9]+]] 'bits' i8 [4, 3]
// CHECK-DAG: tensor %[[TABLE:[0-9]+]] = weight @[[AT]] 'table' i8 [4, 3]
// CHECK-DAG: tensor %[[SCALES:[0-9]+]] = weight @{{[0-9]+}} 'embed.scales' f32 [4]
// CHECK-DAG: tensor %[[IDS:[0-9]+]] = input 0 'ids' i64 [2, 3]
// CHECK: gather 'embed' (%[[TABLE]], %[[IDS]], %[[SCALES]]) -> (%{{[0-9]+}}) {axis = 0, row_scales = 1}
// MATCH: out: max abs error 0, max rel error 0: PASS

func.func @main(%ids: tensor<2x3xi64>) -> tensor<2x3x3xf32>
    attributes {lmopt.input_names = ["ids"], lmopt.output_names = ["out"]} {
  %bits = lmopt.constant dense<[[127, -1, 0], [5, 6, -7], [-127, 0, 1], [0, 0, 0]]> : tensor<4x3xi8> loc("bits")
  %q = quant.scast %bits : tensor<4x3xi8> to tensor<4x3x!quant.uniform<i8:f32:0, {0.0123, 0.5, 3.0e-3, 1.0}>> loc("table")
  %e = lmopt.gather %q, %ids : (tensor<4x3x!quant.uniform<i8:f32:0, {0.0123, 0.5, 3.0e-3, 1.0}>>, tensor<2x3xi64>) -> tensor<2x3x3xf32> loc("embed")
  return %e : tensor<2x3x3xf32>
}
