// Ops convert-lmopt-to-linalg leaves are reported, each at its location with
// the kernel and the ONNX node, and all of them before compileKernels fails.
// RUN: not lmopt-kernel-test %s 2>&1 | FileCheck %s

// CHECK-DAG: model.onnx:0:0: error: no CPU lowering for 'lmopt.matmul' in kernel 'k3' (node 'attention/qk')
// CHECK-DAG: no-cpu-lowering.mlir:{{[0-9]+}}:8: error: no CPU lowering for 'lmopt.matmul' in kernel 'k4'{{$}}
func.func @k3(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = lmopt.gelu %a : tensor<4x8xf32>
  %1 = lmopt.matmul %0, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("attention/qk"("model.onnx":0:0))
  return %1 : tensor<4x4xf32>
}

// The second offender is in another kernel and carries no node name.
func.func @k4(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = lmopt.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
