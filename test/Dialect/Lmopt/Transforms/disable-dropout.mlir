// RUN: lmopt-opt %s -lmopt-disable-dropout -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-disable-dropout=keep=attn_dropout -split-input-file | FileCheck %s --check-prefix=KEEP
// RUN: not lmopt-opt %s -lmopt-disable-dropout=keep=attn_dropout,no_such_dropout -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERROR

// CHECK-LABEL: func @training_graph
// CHECK: lmopt.dropout %{{.*}} {ratio = 0.000000e+00 : f32, training = true}
// CHECK: lmopt.dropout %{{.*}} {ratio = 0.000000e+00 : f32, training = true}
// KEEP-LABEL: func @training_graph
// KEEP: lmopt.dropout %{{.*}} {ratio = 1.000000e-01 : f32, training = true}
// KEEP: lmopt.dropout %{{.*}} {ratio = 0.000000e+00 : f32, training = true}
// ERROR: error: keep names 'no_such_dropout', which is not the node name of any dropout
func.func @training_graph(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0, %m0 = lmopt.dropout %x {ratio = 0.1 : f32, training = true} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi1>) loc("attn_dropout")
  %1, %m1 = lmopt.dropout %0 {ratio = 0.2 : f32, training = true} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi1>) loc("output_dropout")
  return %1 : tensor<2x8xf32>
}
