// Runs lowered kernels on constants and checks the numbers. Expected values
// from numpy 2.4 (float32 inputs; erf from math.erf), printed by
//   python3 -c 'import math, numpy as np; x = np.array([[1, -2, .5, 3],
//     [.25, .75, -1.5, 2]], np.float32); s = np.float32([1, .5, 2, -1]);
//     b = np.float32([.1, .2, -.3, 0]); m = x.mean(-1, keepdims=True);
//     v = ((x - m)**2).mean(-1, keepdims=True);
//     print((x - m) / np.sqrt(v + 1e-5) * s + b);
//     print(.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))));
//     print(.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + .044715 * x**3))));
//     e = np.exp(x - x.max(-1, keepdims=True)); print(e / e.sum(-1, keepdims=True))'
// and matched to four significant digits (the printer shows six).
// REQUIRES: mlir-runner
// RUN: lmopt-opt %s --convert-lmopt-to-linalg \
// RUN: | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops,lower-affine),convert-scf-to-cf,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils \
// RUN: | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%t: tensor<2x4xf32>) {
  %m = bufferization.to_buffer %t : tensor<2x4xf32> to memref<2x4xf32>
  %u = memref.cast %m : memref<2x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %x = arith.constant dense<[[1.0, -2.0, 0.5, 3.0], [0.25, 0.75, -1.5, 2.0]]> : tensor<2x4xf32>
  %s = arith.constant dense<[1.0, 0.5, 2.0, -1.0]> : tensor<4xf32>
  %b = arith.constant dense<[0.1, 0.2, -0.3, 0.0]> : tensor<4xf32>

  // CHECK: [0.3105{{[0-9]*}}, -0.5369{{[0-9]*}}, -0.4403{{[0-9]*}}, -1.333{{[0-9]*}}]
  // CHECK-NEXT: [0.0004966{{[0-9]*}}, 0.3492{{[0-9]*}}, -3.285{{[0-9]*}}, -1.293{{[0-9]*}}]
  %ln = lmopt.layer_norm %x, %s, %b {epsilon = 1.0e-5 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  call @print(%ln) : (tensor<2x4xf32>) -> ()

  // CHECK: [0.8413{{[0-9]*}}, -0.04550{{[0-9]*}}, 0.3457{{[0-9]*}}, 2.995{{[0-9]*}}]
  // CHECK-NEXT: [0.1496{{[0-9]*}}, 0.5800{{[0-9]*}}, -0.1002{{[0-9]*}}, 1.954{{[0-9]*}}]
  %ge = lmopt.gelu %x : tensor<2x4xf32>
  call @print(%ge) : (tensor<2x4xf32>) -> ()

  // CHECK: [0.8411{{[0-9]*}}, -0.04540{{[0-9]*}}, 0.3457{{[0-9]*}}, 2.996{{[0-9]*}}]
  // CHECK-NEXT: [0.1496{{[0-9]*}}, 0.5799{{[0-9]*}}, -0.1004{{[0-9]*}}, 1.954{{[0-9]*}}]
  %gt = lmopt.gelu %x {approximate = #lmopt.gelu_approximation<tanh>} : tensor<2x4xf32>
  call @print(%gt) : (tensor<2x4xf32>) -> ()

  // CHECK: [0.1105{{[0-9]*}}, 0.005504{{[0-9]*}}, 0.06705{{[0-9]*}}, 0.8168{{[0-9]*}}]
  // CHECK-NEXT: [0.1165{{[0-9]*}}, 0.1922{{[0-9]*}}, 0.02026{{[0-9]*}}, 0.6709{{[0-9]*}}]
  %sm = lmopt.softmax %x : tensor<2x4xf32>
  call @print(%sm) : (tensor<2x4xf32>) -> ()
  return
}
