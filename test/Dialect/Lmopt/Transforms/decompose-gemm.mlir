// RUN: lmopt-opt %s --lmopt-decompose-gemm --split-input-file | FileCheck %s

// alpha and beta other than 1, B transposed: a transpose, a matmul, the
// product scaled, C scaled and added.
// CHECK-LABEL: func.func @scaled(
// CHECK-DAG: %[[TWO:.*]] = lmopt.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG: %[[HALF:.*]] = lmopt.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[BT:.*]] = lmopt.transpose %arg1 {perm = array<i64: 1, 0>} : tensor<5x4xf32> -> tensor<4x5xf32>
// CHECK: %[[P:.*]] = lmopt.matmul %arg0, %[[BT]] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[S:.*]] = lmopt.mul %[[P]], %[[HALF]]
// CHECK: %[[C:.*]] = lmopt.mul %arg2, %[[TWO]] : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
// CHECK: lmopt.add %[[S]], %[[C]] : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
// CHECK-NOT: lmopt.gemm
func.func @scaled(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>, %c: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = lmopt.gemm %a, %b, %c {alpha = 0.5 : f32, beta = 2.0 : f32, trans_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Defaults and no C: A transposed, one matmul, nothing else.
// CHECK-LABEL: func.func @plain(
// CHECK: %[[AT:.*]] = lmopt.transpose %arg0 {perm = array<i64: 1, 0>} : tensor<4x3xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[P:.*]] = lmopt.matmul %[[AT]], %arg1
// CHECK-NEXT: return %[[P]]
func.func @plain(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = lmopt.gemm %a, %b {trans_a = true} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// beta = 0 drops C.
// CHECK-LABEL: func.func @zero_beta(
// CHECK: %[[P:.*]] = lmopt.matmul %arg0, %arg1
// CHECK-NOT: lmopt.add
// CHECK: return %[[P]]
func.func @zero_beta(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = lmopt.gemm %a, %b, %c {beta = 0.0 : f32} : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Without a Gemm nothing changes.
// CHECK-LABEL: func.func @no_gemm(
// CHECK-NEXT: lmopt.matmul %arg0, %arg1
func.func @no_gemm(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = lmopt.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
