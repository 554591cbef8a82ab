// REQUIRES: cuda-toolkit
// What the CUDA codegen cannot lower is reported at the op, with the kernel
// and the ONNX node, every offender before failing.
// RUN: not lmopt-cuda-kernel-test %s 2>&1 | FileCheck %s

// CHECK-DAG: model.onnx:0:0: error: no CUDA lowering for 'lmopt.matmul' in kernel 'k3' (node 'attention/qk')
// CHECK-DAG: no-cuda-lowering.mlir:{{[0-9]+}}:8: error: no CUDA lowering for 'lmopt.matmul' in kernel 'k4'{{$}}
func.func @k3(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = lmopt.gelu %a : tensor<4x8xf32>
  %1 = lmopt.matmul %0, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("attention/qk"("model.onnx":0:0))
  return %1 : tensor<4x4xf32>
}

func.func @k4(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = lmopt.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
