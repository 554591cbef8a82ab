// compileKernels checks its input contract before lowering anything and
// reports every violation.
// RUN: not lmopt-kernel-test %s 2>&1 | FileCheck %s

// CHECK-DAG: error: kernel 'unranked' operand #0 of type 'tensor<*xf32>' is not a ranked tensor (kernels take and return ranked integer or float tensors)
// CHECK-DAG: error: kernel 'unranked' result #0 of type 'tensor<*xf32>' is not a ranked tensor
func.func @unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  return %a : tensor<*xf32>
}

// Dynamic dims are part of the contract (their sizes follow the pointers).
// CHECK-NOT: kernel 'dynamic'
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
