// Runs lowered kernels on constants and checks the numbers. Expected values
// from numpy 2.4 (float32 inputs; erf from math.erf), printed by
//   python3 -c 'import math, numpy as np; x = np.array([[1, -2, .5, 3],
//     [.25, .75, -1.5, 2]], np.float32); s = np.float32([1, .5, 2, -1]);
//     b = np.float32([.1, .2, -.3, 0]); m = x.mean(-1, keepdims=True);
//     v = ((x - m)**2).mean(-1, keepdims=True);
//     print((x - m) / np.sqrt(v + 1e-5) * s + b);
//     print(.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))));
//     print(.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + .044715 * x**3))));
//     e = np.exp(x - x.max(-1, keepdims=True)); print(e / e.sum(-1, keepdims=True));
//     r = np.float32([[.5, -1, 2, .25]]); y = x + r; print(y);
//     print(y / np.sqrt((y**2).mean(-1, keepdims=True) + 1e-5) * s);
//     m = y.mean(-1, keepdims=True); v = ((y - m)**2).mean(-1, keepdims=True);
//     print((y - m) / np.sqrt(v + 1e-5) * s);
//     e = x - x.max(0, keepdims=True); print(e - np.log(np.exp(e).sum(0, keepdims=True)));
//     print(x.mean(-1, keepdims=True)); print(np.where(x > .6, x, r));
//     f = np.float32([-1.5, 2.7, -.2, 3.9]); a = np.int64([-7, 7, -8, 9]);
//     print(f.astype(np.int64), np.trunc(a / 2).astype(np.int64), a.max(),
//           (a > 0).astype(np.int64), (a <= 0).astype(np.int64), np.abs(a))'
// and matched to four significant digits (the printer shows six).
// REQUIRES: mlir-runner
// RUN: lmopt-opt %s --convert-lmopt-to-linalg \
// RUN: | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops,lower-affine),convert-scf-to-cf,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' \
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

func.func @main() {
  %x = arith.constant dense<[[1.0, -2.0, 0.5, 3.0], [0.25, 0.75, -1.5, 2.0]]> : tensor<2x4xf32>
  %s = arith.constant dense<[1.0, 0.5, 2.0, -1.0]> : tensor<4xf32>
  %b = arith.constant dense<[0.1, 0.2, -0.3, 0.0]> : tensor<4xf32>
  %r = arith.constant dense<[[0.5, -1.0, 2.0, 0.25]]> : tensor<1x4xf32>
  %threshold = arith.constant dense<0.6> : tensor<f32>

  // CHECK: [0.3105{{[0-9]*}}, -0.5369{{[0-9]*}}, -0.4403{{[0-9]*}}, -1.333{{[0-9]*}}]
  // CHECK-NEXT: [0.0004966{{[0-9]*}}, 0.3492{{[0-9]*}}, -3.285{{[0-9]*}}, -1.293{{[0-9]*}}]
  %ln = lmopt.layer_norm %x, %s, %b {epsilon = 1.0e-5 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %lnd = tensor.cast %ln : tensor<2x4xf32> to tensor<?x?xf32>
  call @print(%lnd) : (tensor<?x?xf32>) -> ()

  // CHECK: [0.8413{{[0-9]*}}, -0.04550{{[0-9]*}}, 0.3457{{[0-9]*}}, 2.995{{[0-9]*}}]
  // CHECK-NEXT: [0.1496{{[0-9]*}}, 0.5800{{[0-9]*}}, -0.1002{{[0-9]*}}, 1.954{{[0-9]*}}]
  %ge = lmopt.gelu %x : tensor<2x4xf32>
  %ged = tensor.cast %ge : tensor<2x4xf32> to tensor<?x?xf32>
  call @print(%ged) : (tensor<?x?xf32>) -> ()

  // CHECK: [0.8411{{[0-9]*}}, -0.04540{{[0-9]*}}, 0.3457{{[0-9]*}}, 2.996{{[0-9]*}}]
  // CHECK-NEXT: [0.1496{{[0-9]*}}, 0.5799{{[0-9]*}}, -0.1004{{[0-9]*}}, 1.954{{[0-9]*}}]
  %gt = lmopt.gelu %x {approximate = #lmopt.gelu_approximation<tanh>} : tensor<2x4xf32>
  %gtd = tensor.cast %gt : tensor<2x4xf32> to tensor<?x?xf32>
  call @print(%gtd) : (tensor<?x?xf32>) -> ()

  // CHECK: [0.1105{{[0-9]*}}, 0.005504{{[0-9]*}}, 0.06705{{[0-9]*}}, 0.8168{{[0-9]*}}]
  // CHECK-NEXT: [0.1165{{[0-9]*}}, 0.1922{{[0-9]*}}, 0.02026{{[0-9]*}}, 0.6709{{[0-9]*}}]
  %sm = lmopt.softmax %x : tensor<2x4xf32>
  %smd = tensor.cast %sm : tensor<2x4xf32> to tensor<?x?xf32>
  call @print(%smd) : (tensor<?x?xf32>) -> ()

  // The same numbers through dynamic shapes: sizes come from tensor.dim.
  %xd = tensor.cast %x : tensor<2x4xf32> to tensor<?x?xf32>
  %rd = tensor.cast %r : tensor<1x4xf32> to tensor<1x?xf32>
  %sd = tensor.cast %s : tensor<4xf32> to tensor<?xf32>
  %sum, %rms, %skip, %lsm = call @dynamic_kernel(%xd, %rd, %sd) : (tensor<?x?xf32>, tensor<1x?xf32>, tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
  // CHECK: [1.5, -3, 2.5, 3.25]
  // CHECK-NEXT: [0.75, -0.25, 0.5, 2.25]
  call @print(%sum) : (tensor<?x?xf32>) -> ()
  // CHECK: [0.5663{{[0-9]*}}, -0.5663{{[0-9]*}}, 1.887{{[0-9]*}}, -1.227{{[0-9]*}}]
  // CHECK-NEXT: [0.6155{{[0-9]*}}, -0.1025{{[0-9]*}}, 0.8207{{[0-9]*}}, -1.846{{[0-9]*}}]
  call @print(%rms) : (tensor<?x?xf32>) -> ()
  // CHECK: [0.1803{{[0-9]*}}, -0.8371{{[0-9]*}}, 1.184{{[0-9]*}}, -0.9015{{[0-9]*}}]
  // CHECK-NEXT: [-0.06884{{[0-9]*}}, -0.5851{{[0-9]*}}, -0.6884{{[0-9]*}}, -1.583{{[0-9]*}}]
  call @print(%skip) : (tensor<?x?xf32>) -> ()
  // CHECK: [-0.3868{{[0-9]*}}, -2.811{{[0-9]*}}, -0.1269{{[0-9]*}}, -0.3132{{[0-9]*}}]
  // CHECK-NEXT: [-1.136{{[0-9]*}}, -0.06196{{[0-9]*}}, -2.126{{[0-9]*}}, -1.313{{[0-9]*}}]
  call @print(%lsm) : (tensor<?x?xf32>) -> ()

  // CHECK: [0.625]
  // CHECK-NEXT: [0.375]
  %mean = lmopt.reduce_mean %x {axes = array<i64: 1>} : tensor<2x4xf32> -> tensor<2x1xf32>
  %meand = tensor.cast %mean : tensor<2x1xf32> to tensor<?x?xf32>
  call @print(%meand) : (tensor<?x?xf32>) -> ()

  // CHECK: [1, -1, 2, 3]
  // CHECK-NEXT: [0.5, 0.75, 2, 2]
  %big = lmopt.greater %x, %threshold : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xi1>
  %pick = lmopt.where %big, %x, %r : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %pickd = tensor.cast %pick : tensor<2x4xf32> to tensor<?x?xf32>
  call @print(%pickd) : (tensor<?x?xf32>) -> ()

  // Integers and booleans: casts truncate toward zero, division truncates,
  // and true casts to 1.
  %f = arith.constant dense<[-1.5, 2.7, -0.2, 3.9]> : tensor<4xf32>
  %a = arith.constant dense<[-7, 7, -8, 9]> : tensor<4xi64>
  %two = arith.constant dense<[2]> : tensor<1xi64>
  %zero = arith.constant dense<0> : tensor<i64>
  // CHECK: [-1,  2,  0,  3]
  %fi = lmopt.cast %f : tensor<4xf32> -> tensor<4xi64>
  %fid = tensor.cast %fi : tensor<4xi64> to tensor<?xi64>
  call @printInts(%fid) : (tensor<?xi64>) -> ()
  // CHECK: [-3,  3,  -4,  4]
  %q = lmopt.div %a, %two : (tensor<4xi64>, tensor<1xi64>) -> tensor<4xi64>
  %qd = tensor.cast %q : tensor<4xi64> to tensor<?xi64>
  call @printInts(%qd) : (tensor<?xi64>) -> ()
  // CHECK: [9]
  %mx = lmopt.reduce_max %a : tensor<4xi64> -> tensor<1xi64>
  %mxd = tensor.cast %mx : tensor<1xi64> to tensor<?xi64>
  call @printInts(%mxd) : (tensor<?xi64>) -> ()
  // CHECK: [0,  1,  0,  1]
  // CHECK: [1,  0,  1,  0]
  %pos = lmopt.greater %a, %zero : (tensor<4xi64>, tensor<i64>) -> tensor<4xi1>
  %posi = lmopt.cast %pos : tensor<4xi1> -> tensor<4xi64>
  %posd = tensor.cast %posi : tensor<4xi64> to tensor<?xi64>
  call @printInts(%posd) : (tensor<?xi64>) -> ()
  %neg = lmopt.not %pos : tensor<4xi1>
  %negi = lmopt.cast %neg : tensor<4xi1> -> tensor<4xi64>
  %negd = tensor.cast %negi : tensor<4xi64> to tensor<?xi64>
  call @printInts(%negd) : (tensor<?xi64>) -> ()
  // CHECK: [7,  7,  8,  9]
  %abs = lmopt.abs %a : tensor<4xi64>
  %absd = tensor.cast %abs : tensor<4xi64> to tensor<?xi64>
  call @printInts(%absd) : (tensor<?xi64>) -> ()
  return
}

func.func @dynamic_kernel(%x: tensor<?x?xf32>, %r: tensor<1x?xf32>, %s: tensor<?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %sum = lmopt.add %x, %r : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %rms = lmopt.rms_norm %sum, %s {epsilon = 1.0e-5 : f32} : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %skip, %sum2 = lmopt.skip_layer_norm %x, %r, %s {epsilon = 1.0e-5 : f32} : (tensor<?x?xf32>, tensor<1x?xf32>, tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>)
  %lsm = lmopt.log_softmax %x {axis = 0 : i64} : tensor<?x?xf32>
  return %sum2, %rms, %skip, %lsm : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
