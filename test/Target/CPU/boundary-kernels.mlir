// Results that are not fresh computations: an operand returned as is, a
// constant, one value returned twice (each result has its own buffer), and
// rank-0 tensors. Run against the reference evaluator.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.a.npz input0=4x8:float32
// RUN: lmopt-interpret %s --function=passthrough --inputs=%t.a.npz --output=%t.a.ref.npz
// RUN: lmopt-kernel-test %s --kernel=passthrough --inputs=%t.a.npz --compare=%t.a.ref.npz | FileCheck %s --check-prefix=PASSTHROUGH
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.b.npz input0=:float32 input1=3:float32
// RUN: lmopt-interpret %s --function=scalar --inputs=%t.b.npz --output=%t.b.ref.npz
// RUN: lmopt-kernel-test %s --kernel=scalar --inputs=%t.b.npz --compare=%t.b.ref.npz | FileCheck %s --check-prefix=SCALAR

// PASSTHROUGH: output0: shape [4, 8], {{.*}}: PASS
// PASSTHROUGH-NEXT: output1: shape [4, 8], {{.*}}: PASS
// PASSTHROUGH-NEXT: output2: shape [2], {{.*}}: PASS
// PASSTHROUGH-NEXT: output3: shape [4, 8], {{.*}}: PASS
func.func @passthrough(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2xi64>, tensor<4x8xf32>) {
  %c = lmopt.constant dense<[3, 4]> : tensor<2xi64>
  %g = lmopt.gelu %x : tensor<4x8xf32>
  return %x, %g, %c, %g : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2xi64>, tensor<4x8xf32>
}

// SCALAR: output0: shape [], {{.*}}: PASS
// SCALAR-NEXT: output1: shape [3], {{.*}}: PASS
func.func @scalar(%x: tensor<f32>, %y: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %0 = lmopt.exp %x : tensor<f32>
  %1 = lmopt.mul %x, %y : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<f32>, tensor<3xf32>
}
