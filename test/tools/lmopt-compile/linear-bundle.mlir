// RUN: rm -rf %t && mkdir -p %t
// RUN: lmopt-compile %s -o %t/model.lmopt 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: %lmopt_python %S/Inputs/read_bundle.py %t/model.lmopt | FileCheck %s
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// RUN: lmopt-compile %s -O0 -o %t/o0.lmopt --report=%t/report.json 2>/dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t/report.json

// A model of library steps only: the bundle holds meta, plan and weights and
// no kernels section, and the log gives each phase and the summary.

// LOG: [1/5] import {{\.+}} {{[0-9.]+}} s
// LOG: [2/5] optimize {{\.+}} {{[0-9.]+}} s
// LOG: fusions: none (near misses: 0)
// LOG: [3/5] plan {{\.+}} {{[0-9.]+}} s  (2 steps)
// LOG: [4/5] kernels {{\.+}} {{[0-9.]+}} s  (0 kernels)
// LOG: [5/5] write {{\.+}} {{[0-9.]+}} s
// LOG: steps: 1 gather, 1 linear (2 in all)
// LOG: kernels: 0
// LOG: weights: {{[0-9]+}} bytes
// LOG: arena: {{[0-9]+}} bytes (naive {{[0-9]+}} bytes
// LOG: bundle: {{[0-9]+}} bytes -> {{.*}}model.lmopt

// CHECK: section meta kind 4
// CHECK: section plan kind 1
// CHECK: section weights kind 2 size {{[0-9]+}} align 64
// CHECK-NOT: section kernels
// CHECK: plan magic LMOPTPLN
// CHECK: meta {"fusions": {{.*}}, "inputs": [{"dims": [2, 3], "dtype": "i64", "name": "ids"}], "lmopt_version": "{{.*}}", "model": "linear-bundle", "outputs": [{"dims": [2, 3, 4], "dtype": "f32", "name": "hidden"}], "precision": "fp32", "target": "cpu"}

// REPORT: "fusions": {
// REPORT: "plan": {
// REPORT-DAG: "arena_bytes":
// REPORT-DAG: "bundle_bytes":
// REPORT-DAG: "kernels": 0
// REPORT-DAG: "gather": 1
// REPORT-DAG: "linear": 1

// No temporary file is left next to the bundle.
// FILES: model.lmopt
// FILES-NOT: tmp

func.func @main(%ids: tensor<2x3xi64>) -> tensor<2x3x4xf32>
    attributes {lmopt.input_names = ["ids"], lmopt.output_names = ["hidden"]} {
  %table = lmopt.constant dense<1.5> : tensor<10x8xf32>
  %w = lmopt.constant dense<0.5> : tensor<8x4xf32>
  %e = lmopt.gather %table, %ids : (tensor<10x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32> loc("embed")
  %h = lmopt.linear %e, %w : (tensor<2x3x8xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32> loc("proj")
  return %h : tensor<2x3x4xf32>
}
