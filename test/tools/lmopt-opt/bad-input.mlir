// lmopt-opt on bad input: a located diagnostic and a nonzero exit, no crash.

// RUN: split-file %s %t
// RUN: not lmopt-opt %t/syntax.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not lmopt-opt %t/verify.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: not lmopt-opt %t/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not lmopt-opt %t/bad-attr.mlir 2>&1 | FileCheck %s --check-prefix=ATTR
// RUN: not lmopt-opt %t/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not lmopt-opt %t/verify.mlir --lmopt-optimize-pipeline 2>&1 | FileCheck %s --check-prefix=VERIFY

// SYNTAX: syntax.mlir:2:{{[0-9]+}}: error: expected ':'
// SYNTAX-NOT: Stack dump
// VERIFY: verify.mlir:2:8: error: 'lmopt.matmul' op cannot multiply shapes 2x3 and 5x4
// VERIFY-NOT: Stack dump
// UNKNOWN: unknown-op.mlir:2:8: error: custom op 'lmopt.frobnicate' is unknown
// ATTR: bad-attr.mlir:2:{{[0-9]+}}: error: expected ::mlir::lmopt::Activation to be one of: none, relu, gelu, gelu_tanh
// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory

//--- syntax.mlir
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = lmopt.neg %a tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
//--- verify.mlir
func.func @f(%a: tensor<2x3xf32>, %b: tensor<5x4xf32>) -> tensor<2x4xf32> {
  %0 = lmopt.matmul %a, %b : (tensor<2x3xf32>, tensor<5x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
//--- unknown-op.mlir
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = lmopt.frobnicate %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
//--- bad-attr.mlir
func.func @f(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %0 = lmopt.linear %x, %w {activation = #lmopt.activation<swish>} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
