// RUN: lmopt-opt %s -split-input-file -lmopt-expose-intermediates="values=h,out" | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-expose-intermediates | FileCheck %s --check-prefix=NONE
// RUN: not lmopt-opt %s -split-input-file -lmopt-expose-intermediates="values=missing" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not lmopt-opt %s -split-input-file -lmopt-expose-intermediates="values=h,h" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not lmopt-opt %s -split-input-file -lmopt-expose-intermediates="hidden-states" 2>&1 | FileCheck %s --check-prefix=HIDDEN

// The ops named h and out (their location names, as the ONNX importer
// records node names) become extra results, after @main's own, named in
// lmopt.output_names; a result can be returned twice.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<3x2xf32>, tensor<3x4xf32>, tensor<3x2xf32>)
// CHECK-SAME: lmopt.output_names = ["y", "h", "out"]
// CHECK: %[[H:.*]] = lmopt.linear
// CHECK: %[[Y:.*]] = lmopt.linear
// CHECK: return %[[Y]], %[[H]], %[[Y]]
// Negative: without options nothing changes.
// NONE-LABEL: func.func @main
// NONE-SAME: -> tensor<3x2xf32>
// NONE: return %{{.*}} : tensor<3x2xf32>
// MISSING: error: lmopt-expose-intermediates: no op of @main is named 'missing' (after the graph pipeline, a fused node's name may be gone)
// TWICE: error: lmopt-expose-intermediates: 'h' names a result already
// HIDDEN: error: lmopt-expose-intermediates: hidden-states needs encoder layers; @main has no attention
func.func @main(%x: tensor<3x2xf32>) -> tensor<3x2xf32> attributes {lmopt.output_names = ["y"]} {
  %w1 = lmopt.constant dense<1.0> : tensor<2x4xf32>
  %w2 = lmopt.constant dense<1.0> : tensor<4x2xf32>
  %h = lmopt.linear %x, %w1 : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32> loc("h")
  %y = lmopt.linear %h, %w2 : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32> loc("out")
  return %y : tensor<3x2xf32>
}

