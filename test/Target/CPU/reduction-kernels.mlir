// reduce_mean (last axis with keepdims, two axes without), reduce_max and an
// integer reduce_sum compiled with compileKernels and run against the
// reference evaluator.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=3x10x48:float32 input1=3x10:int32
// RUN: lmopt-interpret %s --function=reductions --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-kernel-test %s --kernel=reductions --inputs=%t.npz --compare=%t.ref.npz | FileCheck %s

// CHECK: output0: shape [3, 10, 1], {{.*}}: PASS
// CHECK-NEXT: output1: shape [10], {{.*}}: PASS
// CHECK-NEXT: output2: shape [3, 48], {{.*}}: PASS
// CHECK-NEXT: output3: shape [3], {{.*}}: PASS
func.func @reductions(%x: tensor<3x10x48xf32>, %i: tensor<3x10xi32>) -> (tensor<3x10x1xf32>, tensor<10xf32>, tensor<3x48xf32>, tensor<3xi32>) {
  %0 = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<3x10x48xf32> -> tensor<3x10x1xf32>
  %1 = lmopt.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<3x10x48xf32> -> tensor<10xf32>
  %2 = lmopt.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<3x10x48xf32> -> tensor<3x48xf32>
  %3 = lmopt.reduce_sum %i {axes = array<i64: 1>, keepdims = false} : tensor<3x10xi32> -> tensor<3xi32>
  return %0, %1, %2, %3 : tensor<3x10x1xf32>, tensor<10xf32>, tensor<3x48xf32>, tensor<3xi32>
}
