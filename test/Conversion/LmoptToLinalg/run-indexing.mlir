// Runs the lowered mod, range, cumsum and gather_elements on constants.
// Expected values from numpy 2.4, printed by
//   python3 -c 'import numpy as np; a = np.int64([-7, 7, -8, 9]); b = np.int64([3, -3, -3, 3]);
//     print(np.mod(a, b), np.fmod(a, b));
//     print(np.fmod(np.float32([5.5, -5.5, 7.25]), np.float32([2, 2, -2])));
//     print(2 + 3 * np.arange(4), np.float32(.5) - np.float32(.25) * np.arange(3, dtype=np.float32));
//     c = np.int64([1, 2, 3, 4]); print(np.cumsum(c), np.cumsum(c[::-1])[::-1] - c);
//     d = np.int64([[0, 1, 2], [10, 11, 12]]); i = np.int64([[2, -1], [0, 1]]);
//     print(np.take_along_axis(d, i % 3, 1).ravel())'
// REQUIRES: mlir-runner
// RUN: lmopt-opt %s --convert-lmopt-to-linalg \
// RUN: | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils \
// RUN: | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func private @printMemrefI64(memref<*xi64>)

func.func @printInts(%t: tensor<?xi64>) {
  %m = bufferization.to_buffer %t : tensor<?xi64> to memref<?xi64>
  %u = memref.cast %m : memref<?xi64> to memref<*xi64>
  call @printMemrefI64(%u) : (memref<*xi64>) -> ()
  return
}

func.func @printFloats(%t: tensor<?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?xf32> to memref<?xf32>
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %a = arith.constant dense<[-7, 7, -8, 9]> : tensor<4xi64>
  %b = arith.constant dense<[3, -3, -3, 3]> : tensor<4xi64>
  // CHECK: [2,  -2,  -2,  0]
  %floor = lmopt.mod %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %floord = tensor.cast %floor : tensor<4xi64> to tensor<?xi64>
  call @printInts(%floord) : (tensor<?xi64>) -> ()
  // CHECK: [-1,  1,  -2,  0]
  %trunc = lmopt.mod %a, %b {fmod = true} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %truncd = tensor.cast %trunc : tensor<4xi64> to tensor<?xi64>
  call @printInts(%truncd) : (tensor<?xi64>) -> ()
  // CHECK: [1.5,  -1.5,  1.25]
  %f = arith.constant dense<[5.5, -5.5, 7.25]> : tensor<3xf32>
  %g = arith.constant dense<[2.0, 2.0, -2.0]> : tensor<3xf32>
  %fm = lmopt.mod %f, %g {fmod = true} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %fmd = tensor.cast %fm : tensor<3xf32> to tensor<?xf32>
  call @printFloats(%fmd) : (tensor<?xf32>) -> ()

  // CHECK: [2,  5,  8,  11]
  %start = arith.constant dense<2> : tensor<i64>
  %limit = arith.constant dense<12> : tensor<i64>
  %delta = arith.constant dense<3> : tensor<i64>
  %r = lmopt.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %rd = tensor.cast %r : tensor<4xi64> to tensor<?xi64>
  call @printInts(%rd) : (tensor<?xi64>) -> ()
  // CHECK: [0.5,  0.25,  0]
  %fstart = arith.constant dense<0.5> : tensor<f32>
  %flimit = arith.constant dense<-0.1> : tensor<f32>
  %fdelta = arith.constant dense<-0.25> : tensor<f32>
  %fr = lmopt.range %fstart, %flimit, %fdelta : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  %frd = tensor.cast %fr : tensor<3xf32> to tensor<?xf32>
  call @printFloats(%frd) : (tensor<?xf32>) -> ()

  // CHECK: [1,  3,  6,  10]
  // CHECK: [9,  7,  4,  0]
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %cs = lmopt.cumsum %c {axis = 0 : i64} : tensor<4xi64>
  %csd = tensor.cast %cs : tensor<4xi64> to tensor<?xi64>
  call @printInts(%csd) : (tensor<?xi64>) -> ()
  %cr = lmopt.cumsum %c {axis = 0 : i64, exclusive = true, reverse = true} : tensor<4xi64>
  %crd = tensor.cast %cr : tensor<4xi64> to tensor<?xi64>
  call @printInts(%crd) : (tensor<?xi64>) -> ()

  // CHECK: [2,  2,  10,  11]
  %d = arith.constant dense<[[0, 1, 2], [10, 11, 12]]> : tensor<2x3xi64>
  %i = arith.constant dense<[[2, -1], [0, 1]]> : tensor<2x2xi64>
  %ge = lmopt.gather_elements %d, %i {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  %shape = arith.constant dense<[4]> : tensor<1xi64>
  %gef = lmopt.reshape %ge, %shape : (tensor<2x2xi64>, tensor<1xi64>) -> tensor<4xi64>
  %gefd = tensor.cast %gef : tensor<4xi64> to tensor<?xi64>
  call @printInts(%gefd) : (tensor<?xi64>) -> ()
  return
}
