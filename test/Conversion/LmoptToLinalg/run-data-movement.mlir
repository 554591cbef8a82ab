// Runs the lowered data-movement ops on constants and checks the values.
// Expected values from numpy 2.4, printed by
//   python3 -c 'import numpy as np; x = np.arange(10, dtype=np.float32).reshape(2, 5);
//     print(x[:, :2]); print(x[:, 2:]); print(x[:, -1::-3]); print(x[1:, ::2]);
//     print(np.concatenate([x, x[:, :2]], 1));
//     t = np.arange(24, dtype=np.float32).reshape(2, 3, 4);
//     print(t.transpose(2, 0, 1).reshape(4, 6));
//     c = np.float32([[10], [20]]); print(np.broadcast_to(c, (2, 3)));
//     r = np.float32([[1, 2, 3]]); print(np.broadcast_to(r, (2, 2, 3)).reshape(4, 3));
//     a = np.int64([7, -8]); b = np.int64([1, 2, 3]); print(np.concatenate([b, a, b[::-2]]));
//     print(np.concatenate([x[:, 2:], x[:, :2]], 1)); print(x[:, 3::-2]);
//     print(np.arange(12, dtype=np.float32).reshape(2, 3, 2)[:, :2].reshape(4, 2))'
// The output of convert-lmopt-to-linalg needs expand-strided-metadata (then
// lower-affine) before convert-to-llvm: views bufferize to memref.subview,
// collapse_shape and expand_shape, which convert-to-llvm does not lower.
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

func.func @print(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// The same ops on a dynamic batch dim: sizes come from tensor.dim.
func.func @dynamic_kernel(%x: tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x2xf32>) {
  %a, %b = lmopt.split %x {axis = 1 : i64, split_sizes = array<i64: 2, 3>} : (tensor<?x5xf32>) -> (tensor<?x2xf32>, tensor<?x3xf32>)
  %swapped = lmopt.concat %b, %a {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x2xf32>) -> tensor<?x5xf32>
  %start = lmopt.constant dense<3> : tensor<1xi64>
  %end = lmopt.constant dense<-100> : tensor<1xi64>
  %axis = lmopt.constant dense<1> : tensor<1xi64>
  %step = lmopt.constant dense<-2> : tensor<1xi64>
  %back = lmopt.slice %x, %start, %end axes %axis steps %step : (tensor<?x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2xf32>
  return %swapped, %back : tensor<?x5xf32>, tensor<?x2xf32>
}

func.func @main() {
  %x = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0]]> : tensor<2x5xf32>

  // CHECK: [0, 1]
  // CHECK-NEXT: [5, 6]
  // CHECK: [2, 3, 4]
  // CHECK-NEXT: [7, 8, 9]
  %a, %b = lmopt.split %x {axis = 1 : i64, split_sizes = array<i64: 2, 3>} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  %ad = tensor.cast %a : tensor<2x2xf32> to tensor<?x?xf32>
  call @print(%ad) : (tensor<?x?xf32>) -> ()
  %bd = tensor.cast %b : tensor<2x3xf32> to tensor<?x?xf32>
  call @print(%bd) : (tensor<?x?xf32>) -> ()

  // A negative step from the last column (-1) down past the start.
  // CHECK: [4, 1]
  // CHECK-NEXT: [9, 6]
  %minus1 = arith.constant dense<-1> : tensor<1xi64>
  %lowest = arith.constant dense<-9223372036854775807> : tensor<1xi64>
  %one = arith.constant dense<1> : tensor<1xi64>
  %minus3 = arith.constant dense<-3> : tensor<1xi64>
  %rev = lmopt.slice %x, %minus1, %lowest axes %one steps %minus3 : (tensor<2x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  %revd = tensor.cast %rev : tensor<2x2xf32> to tensor<?x?xf32>
  call @print(%revd) : (tensor<?x?xf32>) -> ()

  // Both axes, without axes: rows from 1, columns by 2 up to a clamped end.
  // CHECK: [5, 7, 9]
  %starts = arith.constant dense<[1, 0]> : tensor<2xi64>
  %ends = arith.constant dense<[2, 100]> : tensor<2xi64>
  %axes = arith.constant dense<[0, 1]> : tensor<2xi64>
  %steps = arith.constant dense<[1, 2]> : tensor<2xi64>
  %str = lmopt.slice %x, %starts, %ends axes %axes steps %steps : (tensor<2x5xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x3xf32>
  %strd = tensor.cast %str : tensor<1x3xf32> to tensor<?x?xf32>
  call @print(%strd) : (tensor<?x?xf32>) -> ()

  // CHECK: [0, 1, 2, 3, 4, 0, 1]
  // CHECK-NEXT: [5, 6, 7, 8, 9, 5, 6]
  %cat = lmopt.concat %x, %a {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x2xf32>) -> tensor<2x7xf32>
  %catd = tensor.cast %cat : tensor<2x7xf32> to tensor<?x?xf32>
  call @print(%catd) : (tensor<?x?xf32>) -> ()

  // Transpose, then a reshape that collapses the last two dims.
  // CHECK: [0, 4, 8, 12, 16, 20]
  // CHECK-NEXT: [1, 5, 9, 13, 17, 21]
  // CHECK-NEXT: [2, 6, 10, 14, 18, 22]
  // CHECK-NEXT: [3, 7, 11, 15, 19, 23]
  %t = arith.constant dense<[[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]],
                             [[12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0]]]> : tensor<2x3x4xf32>
  %tt = lmopt.transpose %t {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %shape46 = arith.constant dense<[4, 6]> : tensor<2xi64>
  %tr = lmopt.reshape %tt, %shape46 : (tensor<4x2x3xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %trd = tensor.cast %tr : tensor<4x6xf32> to tensor<?x?xf32>
  call @print(%trd) : (tensor<?x?xf32>) -> ()

  // CHECK: [10, 10, 10]
  // CHECK-NEXT: [20, 20, 20]
  %c = arith.constant dense<[[10.0], [20.0]]> : tensor<2x1xf32>
  %shape23 = arith.constant dense<[2, 3]> : tensor<2xi64>
  %ce = lmopt.expand %c, %shape23 : (tensor<2x1xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %ced = tensor.cast %ce : tensor<2x3xf32> to tensor<?x?xf32>
  call @print(%ced) : (tensor<?x?xf32>) -> ()

  // A new leading dim and a stretched one, flattened back to 2-D.
  // CHECK: [1, 2, 3]
  // CHECK-NEXT: [1, 2, 3]
  // CHECK-NEXT: [1, 2, 3]
  // CHECK-NEXT: [1, 2, 3]
  %r = arith.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %shape223 = arith.constant dense<[2, 2, 3]> : tensor<3xi64>
  %re = lmopt.expand %r, %shape223 : (tensor<1x3xf32>, tensor<3xi64>) -> tensor<2x2x3xf32>
  %shape43 = arith.constant dense<[4, 3]> : tensor<2xi64>
  %rr = lmopt.reshape %re, %shape43 : (tensor<2x2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %rrd = tensor.cast %rr : tensor<4x3xf32> to tensor<?x?xf32>
  call @print(%rrd) : (tensor<?x?xf32>) -> ()

  // Integers: three inputs, the last a reversed strided slice.
  // CHECK: [1,  2,  3,  7,  -8,  3,  1]
  %i = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
  %j = arith.constant dense<[7, -8]> : tensor<2xi64>
  %minus2 = arith.constant dense<-2> : tensor<1xi64>
  %zero = arith.constant dense<0> : tensor<1xi64>
  %ir = lmopt.slice %i, %minus1, %lowest axes %zero steps %minus2 : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %icat = lmopt.concat %i, %j, %ir {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<7xi64>
  %icatd = tensor.cast %icat : tensor<7xi64> to tensor<?xi64>
  call @printInts(%icatd) : (tensor<?xi64>) -> ()

  // A view that is not contiguous (the first two of three rows per batch)
  // collapsed: bufferization copies it first.
  // CHECK: [0, 1]
  // CHECK-NEXT: [2, 3]
  // CHECK-NEXT: [6, 7]
  // CHECK-NEXT: [8, 9]
  %y = arith.constant dense<[[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]]> : tensor<2x3x2xf32>
  %y0, %y1 = lmopt.split %y {axis = 1 : i64, split_sizes = array<i64: 2, 1>} : (tensor<2x3x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x1x2xf32>)
  %shape42 = arith.constant dense<[4, 2]> : tensor<2xi64>
  %yr = lmopt.reshape %y0, %shape42 : (tensor<2x2x2xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  %yrd = tensor.cast %yr : tensor<4x2xf32> to tensor<?x?xf32>
  call @print(%yrd) : (tensor<?x?xf32>) -> ()

  // CHECK: [2, 3, 4, 0, 1]
  // CHECK-NEXT: [7, 8, 9, 5, 6]
  // CHECK: [3, 1]
  // CHECK-NEXT: [8, 6]
  %xd = tensor.cast %x : tensor<2x5xf32> to tensor<?x5xf32>
  %swapped, %back = call @dynamic_kernel(%xd) : (tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x2xf32>)
  %swd = tensor.cast %swapped : tensor<?x5xf32> to tensor<?x?xf32>
  call @print(%swd) : (tensor<?x?xf32>) -> ()
  %bkd = tensor.cast %back : tensor<?x2xf32> to tensor<?x?xf32>
  call @print(%bkd) : (tensor<?x?xf32>) -> ()
  return
}
