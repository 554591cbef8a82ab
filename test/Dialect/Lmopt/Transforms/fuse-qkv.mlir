// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-qkv | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-fuse-qkv --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// PyTorch layout ([N, K], transpose_weight): weights stack along dim 0; the
// missing K bias becomes zeros.
// REPORT: fusion {{ *}}fused {{ *}}near misses
// REPORT-NEXT: qkv {{ *}}1 {{ *}}0
// REPORT-NOT: near miss:
// CHECK-LABEL: func @qkv_transposed_weights
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8x4xf32>)
// CHECK-DAG: %[[W:.*]] = lmopt.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00], [3.000000e+00, 3.000000e+00, 3.000000e+00, 3.000000e+00], [4.000000e+00, 4.000000e+00, 4.000000e+00, 4.000000e+00]]> : tensor<5x4xf32>
// CHECK-DAG: %[[B:.*]] = lmopt.constant dense<[1.000000e-01, 2.000000e-01, 0.000000e+00, 3.000000e-01, 3.000000e-01]> : tensor<5xf32>
// CHECK: %[[Y:.*]] = lmopt.linear %[[X]], %[[W]] bias %[[B]] {transpose_weight = true} : (tensor<?x8x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<?x8x5xf32>
// CHECK: %[[S:.*]]:3 = lmopt.split %[[Y]] {axis = 2 : i64, split_sizes = array<i64: 2, 1, 2>}
// CHECK-NOT: lmopt.linear
// CHECK: return %[[S]]#0, %[[S]]#1, %[[S]]#2
func.func @qkv_transposed_weights(%x: tensor<?x8x4xf32>) -> (tensor<?x8x2xf32>, tensor<?x8x1xf32>, tensor<?x8x2xf32>) {
  %wq = lmopt.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %wk = lmopt.constant dense<2.0> : tensor<1x4xf32>
  %wv = lmopt.constant dense<[[3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0]]> : tensor<2x4xf32>
  %bq = lmopt.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %bv = lmopt.constant dense<0.3> : tensor<2xf32>
  %q = lmopt.linear %x, %wq bias %bq {transpose_weight = true} : (tensor<?x8x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<?x8x2xf32> loc("q_proj")
  %k = lmopt.linear %x, %wk {transpose_weight = true} : (tensor<?x8x4xf32>, tensor<1x4xf32>) -> tensor<?x8x1xf32>
  %v = lmopt.linear %x, %wv bias %bv {transpose_weight = true} : (tensor<?x8x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<?x8x2xf32>
  return %q, %k, %v : tensor<?x8x2xf32>, tensor<?x8x1xf32>, tensor<?x8x2xf32>
}

// -----

// ONNX MatMul layout ([K, N]): each row of the merged weight is the rows of
// the three weights side by side; no bias anywhere stays no bias.
// CHECK-LABEL: func @qkv_plain_weights
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>)
// CHECK: %[[W:.*]] = lmopt.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 5.000000e+00, 7.000000e+00], [3.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01]]> : tensor<3x4xf32>
// CHECK-NOT: bias
// CHECK: %[[Y:.*]] = lmopt.linear %[[X]], %[[W]] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[S:.*]]:3 = lmopt.split %[[Y]] {axis = 1 : i64, split_sizes = array<i64: 2, 1, 1>}
// CHECK: return %[[S]]#0, %[[S]]#1, %[[S]]#2
func.func @qkv_plain_weights(%x: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %wq = lmopt.constant dense<[[1.0, 2.0], [3.0, 4.0], [9.0, 10.0]]> : tensor<3x2xf32>
  %wk = lmopt.constant dense<[[5.0], [6.0], [11.0]]> : tensor<3x1xf32>
  %wv = lmopt.constant dense<[[7.0], [8.0], [12.0]]> : tensor<3x1xf32>
  %q = lmopt.linear %x, %wq : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %k = lmopt.linear %x, %wk : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %v = lmopt.linear %x, %wv : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  return %q, %k, %v : tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

// Weights stored as resources (as the importer stores initializers) merge
// into a new resource.
// CHECK-LABEL: func @qkv_resource_weights
// CHECK: %[[W:.*]] = lmopt.constant dense_resource<qkv_weight> : tensor<4x2xf32>
// CHECK: %[[Y:.*]] = lmopt.linear %{{.*}}, %[[W]] {transpose_weight = true}
// CHECK: lmopt.split %[[Y]] {axis = 1 : i64, split_sizes = array<i64: 1, 1, 2>}
// CHECK: qkv_weight: "0x04000000000080400000A0400000C0400000E04000000041000010410000204100003041"
func.func @qkv_resource_weights(%x: tensor<3x2xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>, tensor<3x2xf32>) {
  %wq = lmopt.constant dense_resource<wq> : tensor<1x2xf32>
  %wk = lmopt.constant dense_resource<wk> : tensor<1x2xf32>
  %wv = lmopt.constant dense_resource<wv> : tensor<2x2xf32>
  %q = lmopt.linear %x, %wq {transpose_weight = true} : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x1xf32>
  %k = lmopt.linear %x, %wk {transpose_weight = true} : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x1xf32>
  %v = lmopt.linear %x, %wv {transpose_weight = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %q, %k, %v : tensor<3x1xf32>, tensor<3x1xf32>, tensor<3x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      wq: "0x04000000000080400000A040",
      wk: "0x040000000000C0400000E040",
      wv: "0x0400000000000041000010410000204100003041"
    }
  }
#-}

// -----

// A weight computed at run time cannot be concatenated.
// REPORT: near miss: qkv at 'negative_q': 3 linears share an input but weight is not a constant
// CHECK-LABEL: func @negative_runtime_weight
// CHECK-COUNT-3: lmopt.linear
// CHECK-NOT: lmopt.split
func.func @negative_runtime_weight(%x: tensor<2x4xf32>, %wq: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %wk = lmopt.constant dense<1.0> : tensor<2x4xf32>
  %q = lmopt.linear %x, %wq {transpose_weight = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32> loc("negative_q")
  %k = lmopt.linear %x, %wk {transpose_weight = true, activation = #lmopt.activation<gelu>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  %v = lmopt.linear %x, %wk {transpose_weight = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  return %q, %k, %v : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Weights in different layouts would need a transpose first.
// REPORT: near miss: qkv at 'negative_layout_q': 2 linears share an input but weights have different layouts (transpose_weight differs)
// CHECK-LABEL: func @negative_mixed_layout
// CHECK-COUNT-2: lmopt.linear
// CHECK-NOT: lmopt.split
func.func @negative_mixed_layout(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %wq = lmopt.constant dense<1.0> : tensor<2x4xf32>
  %wk = lmopt.constant dense<1.0> : tensor<4x2xf32>
  %q = lmopt.linear %x, %wq {transpose_weight = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32> loc("negative_layout_q")
  %k = lmopt.linear %x, %wk : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  return %q, %k : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// A single linear is not a candidate: no near miss.
// REPORT-NOT: near miss: qkv at 'single'
// CHECK-LABEL: func @negative_single_linear
// CHECK: lmopt.linear
// CHECK-NOT: lmopt.split
func.func @negative_single_linear(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<1.0> : tensor<2x4xf32>
  %y = lmopt.linear %x, %w {transpose_weight = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32> loc("single")
  return %y : tensor<2x2xf32>
}
