// RUN: lmopt-opt %s -lmopt-emit-report -o /dev/null | FileCheck %s --check-prefix=TABLE
// RUN: lmopt-opt %s -lmopt-emit-report=output=%t.json -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: lmopt-opt %s --lmopt-report=%t.txt -o /dev/null
// RUN: FileCheck %s --check-prefix=TABLE < %t.txt
// RUN: not lmopt-opt %s -lmopt-emit-report=output=%t.missing/dir/report.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERROR

// With no fusion pass before it the report is empty but well formed; the
// fusion passes' own lit files check its contents.

// TABLE: fusion {{ *}}fused {{ *}}near misses
// TABLE-NOT: near miss:

// JSON: "fusions": {}

// ERROR: error: cannot write the fusion report to '{{.*}}report.json'

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
