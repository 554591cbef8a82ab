// compileKernels checks its input contract before lowering anything and
// reports every violation.
// RUN: not lmopt-kernel-test %s 2>&1 | FileCheck %s

// CHECK-DAG: error: kernel 'dynamic' operand #0 of type 'tensor<?x8xf32>' has a dynamic shape (kernels take and return static-shaped tensors)
// CHECK-DAG: error: kernel 'dynamic' result #0 of type 'tensor<?x8xf32>' has a dynamic shape
func.func @dynamic(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = lmopt.gelu %a : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// CHECK-DAG: error: kernel 'declared' must be public with a body
func.func private @declared(%a: tensor<8xf32>) -> tensor<8xf32>

// CHECK-DAG: error: kernel name 'k.3' is not a C identifier (or starts with '__lmopt')
func.func @"k.3"(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}

// CHECK-NOT: kernel 'fine'
func.func @fine(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = lmopt.gelu %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
