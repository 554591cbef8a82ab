// What convert-lmopt-to-linalg makes of the data-movement and indexing ops
// lowers to the LLVM dialect with upstream passes alone, once
// expand-strided-metadata (and lower-affine after it) has turned the views'
// memref.subview, collapse_shape and expand_shape into pointer arithmetic:
// no lmopt, linalg, tensor, memref or affine op is left.
// RUN: lmopt-opt %s --convert-lmopt-to-linalg \
// RUN: | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN: | FileCheck %s
// RUN: lmopt-opt %s --convert-lmopt-to-linalg \
// RUN: | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN: | FileCheck %s --check-prefix=LEFT

// LEFT-NOT: {{(lmopt|linalg|tensor|memref|math|scf|func|bufferization|affine)\.}}

// Weights stay a resource blob, now behind an LLVM global.
// CHECK: llvm.mlir.global private constant @{{.*}}(dense_resource<position_ids> : tensor<1x16xi64>)

// GPT-2's attention inputs with a KV cache, static as the kernels get them:
// a fused QKV projection split, heads split off and moved, the cache
// concatenated, and the mask reshaped and stretched over the heads.
// CHECK-LABEL: llvm.func @gpt2_step
// CHECK: llvm.return
func.func @gpt2_step(%qkv: tensor<2x192xf32>, %past: tensor<2x4x4x16xf32>, %mask: tensor<2x5xi1>)
    -> (tensor<2x4x1x16xf32>, tensor<2x4x5x16xf32>, tensor<2x4x1x5xi1>, tensor<2x4x16x5xf32>) {
  %s3 = lmopt.constant dense<[2, 1, 192]> : tensor<3xi64>
  %x = lmopt.reshape %qkv, %s3 : (tensor<2x192xf32>, tensor<3xi64>) -> tensor<2x1x192xf32>
  %q, %k, %v = lmopt.split %x {axis = 2 : i64, split_sizes = array<i64: 64, 64, 64>} : (tensor<2x1x192xf32>) -> (tensor<2x1x64xf32>, tensor<2x1x64xf32>, tensor<2x1x64xf32>)
  %s4 = lmopt.constant dense<[2, 1, 4, 16]> : tensor<4xi64>
  %qh = lmopt.reshape %q, %s4 : (tensor<2x1x64xf32>, tensor<4xi64>) -> tensor<2x1x4x16xf32>
  %kh = lmopt.reshape %k, %s4 : (tensor<2x1x64xf32>, tensor<4xi64>) -> tensor<2x1x4x16xf32>
  %qt = lmopt.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x1x4x16xf32> -> tensor<2x4x1x16xf32>
  %kt = lmopt.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x1x4x16xf32> -> tensor<2x4x1x16xf32>
  %keys = lmopt.concat %past, %kt {axis = 2 : i64} : (tensor<2x4x4x16xf32>, tensor<2x4x1x16xf32>) -> tensor<2x4x5x16xf32>
  %keysT = lmopt.transpose %keys {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x5x16xf32> -> tensor<2x4x16x5xf32>
  %m = lmopt.unsqueeze %mask {axes = array<i64: 1, 2>} : tensor<2x5xi1> -> tensor<2x1x1x5xi1>
  %ms = lmopt.constant dense<[2, 4, 1, 5]> : tensor<4xi64>
  %me = lmopt.expand %m, %ms : (tensor<2x1x1x5xi1>, tensor<4xi64>) -> tensor<2x4x1x5xi1>
  return %qt, %keys, %me, %keysT : tensor<2x4x1x16xf32>, tensor<2x4x5x16xf32>, tensor<2x4x1x5xi1>, tensor<2x4x16x5xf32>
}

// BERT's position ids and the rest: a constant table sliced, reversed by a
// negative step, squeezed, reshaped through 1-D, and passed on unchanged.
// CHECK-LABEL: llvm.func @slices_and_reshapes
// CHECK: llvm.return
func.func @slices_and_reshapes(%x: tensor<2x8xf32>, %y: tensor<1x3x1xf32>)
    -> (tensor<1x8xi64>, tensor<2x4xf32>, tensor<3xf32>, tensor<16x1xf32>, tensor<2x8xf32>) {
  %table = lmopt.constant dense_resource<position_ids> : tensor<1x16xi64>
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %eight = lmopt.constant dense<8> : tensor<1xi64>
  %one = lmopt.constant dense<1> : tensor<1xi64>
  %ids = lmopt.slice %table, %zero, %eight axes %one steps %one : (tensor<1x16xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8xi64>
  %minus1 = lmopt.constant dense<-1> : tensor<1xi64>
  %lowest = lmopt.constant dense<-9223372036854775807> : tensor<1xi64>
  %minus2 = lmopt.constant dense<-2> : tensor<1xi64>
  %rev = lmopt.slice %x, %minus1, %lowest axes %one steps %minus2 : (tensor<2x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4xf32>
  %sq = lmopt.squeeze %y : tensor<1x3x1xf32> -> tensor<3xf32>
  %shape = lmopt.constant dense<[16, 1]> : tensor<2xi64>
  %flat = lmopt.reshape %x, %shape : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<16x1xf32>
  %same = lmopt.identity %x : tensor<2x8xf32>
  return %ids, %rev, %sq, %flat, %same : tensor<1x8xi64>, tensor<2x4xf32>, tensor<3xf32>, tensor<16x1xf32>, tensor<2x8xf32>
}

// Dynamic dims read with tensor.dim, and the concat's run-time check.
// CHECK-LABEL: llvm.func @dynamic
// CHECK: llvm.cond_br
// CHECK: llvm.return
func.func @dynamic(%x: tensor<?x6xf32>, %y: tensor<?x2xf32>) -> (tensor<?x8xf32>, tensor<6x?xf32>) {
  %a, %b = lmopt.split %x {axis = 1 : i64, split_sizes = array<i64: 4, 2>} : (tensor<?x6xf32>) -> (tensor<?x4xf32>, tensor<?x2xf32>)
  %c = lmopt.concat %a, %y, %b {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x8xf32>
  %t = lmopt.transpose %x {perm = array<i64: 1, 0>} : tensor<?x6xf32> -> tensor<6x?xf32>
  return %c, %t : tensor<?x8xf32>, tensor<6x?xf32>
}

// RoBERTa's position ids (a cumsum of the mask), a gather of single
// elements, a range from run-time bounds, and mod on f16 and integers.
// CHECK-LABEL: llvm.func @position_ids
// CHECK: llvm.frem
// CHECK: llvm.srem
// CHECK: llvm.return
func.func @position_ids(%mask: tensor<2x8xi32>, %table: tensor<2x130xi64>, %idx: tensor<2x8xi64>,
                        %start: tensor<i64>, %delta: tensor<i64>, %f: tensor<2x8xf16>, %g: tensor<8xf16>)
    -> (tensor<2x8xi32>, tensor<2x8xi64>, tensor<8xi64>, tensor<2x8xf16>, tensor<2x8xi32>) {
  %0 = lmopt.cumsum %mask {axis = 1 : i64} : tensor<2x8xi32>
  %1 = lmopt.gather_elements %table, %idx {axis = 1 : i64} : (tensor<2x130xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
  %limit = lmopt.constant dense<8> : tensor<i64>
  %2 = lmopt.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8xi64>
  %3 = lmopt.mod %f, %g {fmod = true} : (tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
  %4 = lmopt.mod %0, %mask : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
  return %0, %1, %2, %3, %4 : tensor<2x8xi32>, tensor<2x8xi64>, tensor<8xi64>, tensor<2x8xf16>, tensor<2x8xi32>
}

{-#
  dialect_resources: {
    builtin: {
      position_ids: "0x0800000000000000000000000100000000000000020000000000000003000000000000000400000000000000050000000000000006000000000000000700000000000000080000000000000009000000000000000A000000000000000B000000000000000C000000000000000D000000000000000E000000000000000F00000000000000"
    }
  }
#-}
