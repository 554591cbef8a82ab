// RUN: lmopt-opt %s -split-input-file -verify-diagnostics -lmopt-narrow-precision=dtype=f16 | FileCheck %s
// RUN: lmopt-opt %s -split-input-file -lmopt-narrow-precision=dtype=bf16 | FileCheck %s --check-prefix=BF16
// RUN: not lmopt-opt %s -lmopt-narrow-precision=dtype=f64 -o /dev/null 2>&1 | FileCheck %s --check-prefix=DTYPE

// A constant beyond f16's range (65504; 65520 and above round to infinity)
// would change the model: the op stays f32 with a warning naming the
// element, and the other islands are built. bf16 has f32's range.
// CHECK-LABEL: func @out_of_range
// CHECK: lmopt.linear %{{.*}}, %{{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK: lmopt.matmul %{{.*}}, %{{.*}} : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
// BF16-LABEL: func @out_of_range
// BF16: lmopt.linear %{{.*}}, %{{.*}} : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
func.func @out_of_range(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = lmopt.constant dense<[[1.0, 65520.0], [-7.0e4, 0.5]]> : tensor<2x2xf32>
  // expected-warning-re @below {{'lmopt.linear' (node '{{.*}}narrow-precision-diagnostics.mlir:{{[0-9]+}}:{{[0-9]+}}') stays f32: operand 1 element 1 = 6.552000e+04 is beyond 'f16''s range}}
  %y = lmopt.linear %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %z = lmopt.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y, %z : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Infinity and NaN convert to themselves: only finite values that overflow
// are refused.
// CHECK-LABEL: func @negative_inf_in_range
// CHECK: lmopt.linear %{{.*}}, %{{.*}} : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
func.func @negative_inf_in_range(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<[[0xFF800000, 65519.0], [0x7FC00000, 0.5]]> : tensor<2x2xf32>
  %y = lmopt.linear %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// DTYPE: error: lmopt-narrow-precision: unknown dtype 'f64'; expected f16 or bf16
