// What convert-lmopt-to-linalg produces lowers to the LLVM dialect with
// upstream passes alone: no linalg, tensor, memref, math or lmopt op is left.
// RUN: lmopt-opt %s --convert-lmopt-to-linalg \
// RUN: | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops,lower-affine),convert-scf-to-cf,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN: | FileCheck %s
// RUN: lmopt-opt %s --convert-lmopt-to-linalg \
// RUN: | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops,lower-affine),convert-scf-to-cf,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN: | FileCheck %s --check-prefix=LEFT

// LEFT-NOT: {{(lmopt|linalg|tensor|memref|math|scf|func|bufferization)\.}}

// CHECK-DAG: llvm.func @erff(f32) -> f32
// CHECK-DAG: llvm.func @tanhf(f32) -> f32
// CHECK-DAG: llvm.func @expf(f32) -> f32
// CHECK-DAG: llvm.func @sqrtf(f32) -> f32

// CHECK-LABEL: llvm.func @encoder_epilogue
// CHECK: llvm.call @sqrtf
// CHECK: llvm.call @erff
// CHECK: llvm.return
func.func @encoder_epilogue(%x: tensor<?x?x8xf32>, %skip: tensor<1x?x8xf32>,
                            %s: tensor<8xf32>, %b: tensor<8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %0, %1 = lmopt.skip_layer_norm %x, %skip, %s, %b : (tensor<?x?x8xf32>, tensor<1x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  %2 = lmopt.gelu %0 : tensor<?x?x8xf32>
  return %2, %1 : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// Dynamic dims meeting in a broadcast are checked at run time.
// CHECK-LABEL: llvm.func @scores
// CHECK: llvm.cond_br
// CHECK: llvm.call @expf
// CHECK: llvm.return
func.func @scores(%x: tensor<?x?xf32>, %mask: tensor<?x?xi1>, %fill: tensor<f32>) -> tensor<?x?xf32> {
  %0 = lmopt.where %mask, %x, %fill : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %1 = lmopt.softmax %0 : tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// CHECK-LABEL: llvm.func @norms_and_reductions
// CHECK: llvm.fpext
// CHECK: llvm.fptrunc
// CHECK: llvm.call @tanhf
// CHECK: llvm.return
func.func @norms_and_reductions(%x: tensor<2x?xf16>, %y: tensor<?x16xf32>, %s: tensor<16xf32>, %i: tensor<4x?xi64>)
    -> (tensor<2x1xf16>, tensor<?x16xf32>, tensor<4xf32>, tensor<?x16xf32>) {
  %0 = lmopt.reduce_mean %x {axes = array<i64: 1>} : tensor<2x?xf16> -> tensor<2x1xf16>
  %1 = lmopt.rms_norm %y, %s : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = lmopt.reduce_max %i {axes = array<i64: 1>, keepdims = false} : tensor<4x?xi64> -> tensor<4xi64>
  %3 = lmopt.cast %2 : tensor<4xi64> -> tensor<4xf32>
  %4 = lmopt.gelu %1 {approximate = #lmopt.gelu_approximation<tanh>} : tensor<?x16xf32>
  return %0, %1, %3, %4 : tensor<2x1xf16>, tensor<?x16xf32>, tensor<4xf32>, tensor<?x16xf32>
}
