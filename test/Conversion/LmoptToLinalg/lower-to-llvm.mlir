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
// CHECK-DAG: llvm.func @powf(f32, f32) -> f32

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

// Every op of the elementwise tables, on each element type it lowers for.
// CHECK-LABEL: llvm.func @every_elementwise_op
// CHECK: llvm.call @powf
// CHECK: llvm.return
func.func @every_elementwise_op(%f: tensor<4xf32>, %h: tensor<4xbf16>, %i: tensor<4xi32>, %b: tensor<4xi1>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>,
        tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>,
        tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xbf16>, tensor<4xf32>) {
  %0 = lmopt.neg %f : tensor<4xf32>
  %1 = lmopt.abs %f : tensor<4xf32>
  %2 = lmopt.relu %f : tensor<4xf32>
  %3 = lmopt.exp %f : tensor<4xf32>
  %4 = lmopt.log %f : tensor<4xf32>
  %5 = lmopt.sqrt %f : tensor<4xf32>
  %6 = lmopt.reciprocal %f : tensor<4xf32>
  %7 = lmopt.tanh %f : tensor<4xf32>
  %8 = lmopt.erf %f : tensor<4xf32>
  %9 = lmopt.sigmoid %f : tensor<4xf32>
  %10 = lmopt.gelu %h {approximate = #lmopt.gelu_approximation<tanh>} : tensor<4xbf16>
  %11 = lmopt.neg %i : tensor<4xi32>
  %12 = lmopt.abs %i : tensor<4xi32>
  %13 = lmopt.relu %i : tensor<4xi32>
  %14 = lmopt.not %b : tensor<4xi1>
  %15 = lmopt.add %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %16 = lmopt.sub %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %17 = lmopt.mul %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %18 = lmopt.div %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %19 = lmopt.pow %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %20 = lmopt.max %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %21 = lmopt.equal %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %22 = lmopt.less %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %23 = lmopt.greater %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %24 = lmopt.add %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %25 = lmopt.sub %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %26 = lmopt.mul %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %27 = lmopt.div %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %28 = lmopt.max %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %29 = lmopt.min %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %30 = lmopt.equal %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %31 = lmopt.less %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %32 = lmopt.greater %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %33 = lmopt.and %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %34 = lmopt.or %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %35 = lmopt.equal %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %36 = lmopt.cast %f : tensor<4xf32> -> tensor<4xi32>
  %37 = lmopt.cast %i : tensor<4xi32> -> tensor<4xi1>
  %38 = lmopt.cast %i : tensor<4xi32> -> tensor<4xf32>
  %39 = lmopt.cast %b : tensor<4xi1> -> tensor<4xi32>
  %40 = lmopt.cast %f : tensor<4xf32> -> tensor<4xbf16>
  %41 = lmopt.where %b, %f, %f : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20,
         %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>,
        tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>,
        tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xbf16>, tensor<4xf32>
}

// CHECK-LABEL: llvm.func @every_reduction
// CHECK: llvm.return
func.func @every_reduction(%f: tensor<2x?xf32>, %i: tensor<2x3xi32>, %h: tensor<2x8xf16>)
    -> (tensor<2x1xf32>, tensor<f32>, tensor<2xi32>, tensor<1x3xi32>, tensor<2x8xf16>, tensor<2x?xf32>) {
  %0 = lmopt.reduce_sum %f {axes = array<i64: 1>} : tensor<2x?xf32> -> tensor<2x1xf32>
  %1 = lmopt.reduce_max %f {keepdims = false} : tensor<2x?xf32> -> tensor<f32>
  %2 = lmopt.reduce_mean %i {axes = array<i64: 1>, keepdims = false} : tensor<2x3xi32> -> tensor<2xi32>
  %3 = lmopt.reduce_min %i {axes = array<i64: 0>} : tensor<2x3xi32> -> tensor<1x3xi32>
  %4 = lmopt.log_softmax %h : tensor<2x8xf16>
  %5 = lmopt.softmax %f {axis = 0 : i64} : tensor<2x?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x1xf32>, tensor<f32>, tensor<2xi32>, tensor<1x3xi32>, tensor<2x8xf16>, tensor<2x?xf32>
}
