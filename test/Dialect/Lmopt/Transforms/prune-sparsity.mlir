// RUN: lmopt-opt %s -split-input-file -lmopt-prune="sparsity=2:4" | FileCheck %s --check-prefix=MAG
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="sparsity=2:4 criterion=wanda" | FileCheck %s --check-prefix=WANDA
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="sparsity=2:4 transpose-sparse=false" | FileCheck %s --check-prefix=KEEP
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="sparsity=2:4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: lmopt-opt %s -split-input-file -lmopt-prune="sparsity=2:4" --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// sparsity=2:4 keeps, in each group of 4 inputs of each output, the 2
// weights of highest importance, and stores the weight as [N, K].
// Column 0 of the [8, 2] weight is [1, -5, 2, 0.5 | 3, 0, -0.1, 4]:
// magnitude keeps -5 and 2, then 3 and 4. Column 1 is [0.1, 0.2, 0.3, 0.4 |
// 8, 7, 6, 5]: 0.3 and 0.4, then 8 and 7. Wanda weighs input 0 by its norm
// 10: |1| * 10 and |0.1| * 10 now rank first in their groups, so column 0
// keeps 1 and -5, column 1 keeps 0.1 and 0.4.
// MAG-LABEL: func @linear
// MAG: %[[W:.*]] = lmopt.constant {lmopt.sparsity = "2:4"} dense<{{\[}}[0.000000e+00, -5.000000e+00, 2.000000e+00, 0.000000e+00, 3.000000e+00, 0.000000e+00, 0.000000e+00, 4.000000e+00], [0.000000e+00, 0.000000e+00, 3.000000e-01, 4.000000e-01, 8.000000e+00, 7.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<2x8xf32>
// MAG: lmopt.linear %{{.*}}, %[[W]] {transpose_weight = true}
// MAG-NOT: activation_stats
// With transpose-sparse=false (training) the weight keeps its [K, N] layout.
// KEEP-LABEL: func @linear
// KEEP: lmopt.constant {lmopt.sparsity = "2:4"} dense<{{\[}}[0.000000e+00, 0.000000e+00], [-5.000000e+00, 0.000000e+00], [2.000000e+00, 3.000000e-01], [0.000000e+00, 4.000000e-01], [3.000000e+00, 8.000000e+00], [0.000000e+00, 7.000000e+00], [0.000000e+00, 0.000000e+00], [4.000000e+00, 0.000000e+00]]> : tensor<8x2xf32>
// KEEP-NOT: transpose_weight
// KEEP: return
// WANDA-LABEL: func @linear
// WANDA: lmopt.constant {lmopt.sparsity = "2:4"} dense<{{\[}}[1.000000e+00, -5.000000e+00, 0.000000e+00, 0.000000e+00, 3.000000e+00, 0.000000e+00, 0.000000e+00, 4.000000e+00], [1.000000e-01, 0.000000e+00, 0.000000e+00, 4.000000e-01, 8.000000e+00, 7.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<2x8xf32>
// Input 5 of output 0 was 0 already: 7 weights become 0.
// REMARK: remark: loc("lin"): 2:4 sparsity on linear 'lin': 7 of 16 weights zeroed
// REPORT: sparse_linears {{ *}}1 {{ *}}0
func.func @linear(%x: tensor<3x8xf32>) -> tensor<3x2xf32> {
  %w = lmopt.constant dense<[[1.0, 0.1], [-5.0, 0.2], [2.0, 0.3], [0.5, 0.4], [3.0, 8.0], [0.0, 7.0], [-0.1, 6.0], [4.0, 5.0]]> : tensor<8x2xf32>
  %y = lmopt.linear %x, %w {lmopt.activation_stats = {l2 = array<f32: 10.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>}} : (tensor<3x8xf32>, tensor<8x2xf32>) -> tensor<3x2xf32> loc("lin")
  return %y : tensor<3x2xf32>
}

// -----

// Near misses: 6 inputs are not whole groups of 4; a weight two linears
// read (a tied matrix) stays dense for both.
// MAG-LABEL: func @dense
// MAG: lmopt.constant dense<1.000000e+00> : tensor<6x2xf32>
// MAG: lmopt.constant dense<2.000000e+00> : tensor<8x2xf32>
// MAG-NOT: transpose_weight
// MAG: return
// REPORT: sparse_linears {{ *}}0 {{ *}}3
// REPORT: near miss: sparse_linears {{.*}}: its 6 input features are not whole groups of 4
// REPORT-COUNT-2: near miss: sparse_linears {{.*}}: the weight has other readers (a tied embedding)
func.func @dense(%x: tensor<3x6xf32>, %z: tensor<3x8xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = lmopt.constant dense<1.0> : tensor<6x2xf32>
  %y = lmopt.linear %x, %w {lmopt.activation_stats = {l2 = array<f32: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>}} : (tensor<3x6xf32>, tensor<6x2xf32>) -> tensor<3x2xf32>
  %t = lmopt.constant dense<2.0> : tensor<8x2xf32>
  %a = lmopt.linear %z, %t {lmopt.activation_stats = {l2 = array<f32: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>}} : (tensor<3x8xf32>, tensor<8x2xf32>) -> tensor<3x2xf32>
  %b = lmopt.linear %z, %t {lmopt.activation_stats = {l2 = array<f32: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>}} : (tensor<3x8xf32>, tensor<8x2xf32>) -> tensor<3x2xf32>
  return %y, %a, %b : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}
