// GatherND in kernels: the dynamo exports' attention mask (i1 data, index
// tuples computed at run time), batch dims with and without trailing data
// dims, negative indices and a rank-0 result, run against the reference
// evaluator. Indices out of range, which the evaluator rejects, are clamped
// into their dim: checked against numpy.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=2x12:bool input1=2x1x1x12x2:int64 input2=2x5x3:float32 input3=2x3x4x5:float32
// RUN: lmopt-interpret %s --function=gather_nd --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-kernel-test %s --kernel=gather_nd --inputs=%t.npz --compare=%t.ref.npz | FileCheck %s
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.c.npz input0=2x5:float32
// RUN: %lmopt_python -c "import numpy as np; d = np.load('%t.c.npz')['input0']; i = np.array([[-3, 0], [7, 9], [1, -6], [0, 5], [-1, -5]]); i = np.clip(np.where(i < 0, i + d.shape, i), 0, np.array(d.shape) - 1); np.savez('%t.c.ref.npz', output0=d[i[:, 0], i[:, 1]])"
// RUN: lmopt-kernel-test %s --kernel=clamped --inputs=%t.c.npz --compare=%t.c.ref.npz | FileCheck %s --check-prefix=CLAMP

// CHECK: output0: shape [2, 1, 1, 12], {{.*}}: PASS
// CHECK-NEXT: output1: shape [2, 4, 3], {{.*}}: PASS
// CHECK-NEXT: output2: shape [2, 3, 5], {{.*}}: PASS
// CHECK-NEXT: output3: shape [], {{.*}}: PASS
func.func @gather_nd(%mask: tensor<2x12xi1>, %tuples: tensor<2x1x1x12x2xi64>, %rows: tensor<2x5x3xf32>, %blocks: tensor<2x3x4x5xf32>) -> (tensor<2x1x1x12xi1>, tensor<2x4x3xf32>, tensor<2x3x5xf32>, tensor<f32>) {
  %m = lmopt.gather_nd %mask, %tuples : (tensor<2x12xi1>, tensor<2x1x1x12x2xi64>) -> tensor<2x1x1x12xi1>
  %i1 = lmopt.constant dense<[[[4], [-1], [0], [-5]], [[2], [1], [-3], [3]]]> : tensor<2x4x1xi64>
  %r = lmopt.gather_nd %rows, %i1 {batch_dims = 1 : i64} : (tensor<2x5x3xf32>, tensor<2x4x1xi64>) -> tensor<2x4x3xf32>
  %i2 = lmopt.constant dense<[[[2, 3], [-1, 0], [0, -2]], [[1, 1], [-3, -4], [2, 0]]]> : tensor<2x3x2xi64>
  %b = lmopt.gather_nd %blocks, %i2 {batch_dims = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x3x2xi64>) -> tensor<2x3x5xf32>
  %i3 = lmopt.constant dense<[-1, 2, -3]> : tensor<3xi64>
  %s = lmopt.gather_nd %rows, %i3 : (tensor<2x5x3xf32>, tensor<3xi64>) -> tensor<f32>
  return %m, %r, %b, %s : tensor<2x1x1x12xi1>, tensor<2x4x3xf32>, tensor<2x3x5xf32>, tensor<f32>
}

// CLAMP: output0: shape [5], {{.*}}: PASS
func.func @clamped(%data: tensor<2x5xf32>) -> tensor<5xf32> {
  %i = lmopt.constant dense<[[-3, 0], [7, 9], [1, -6], [0, 5], [-1, -5]]> : tensor<5x2xi64>
  %g = lmopt.gather_nd %data, %i : (tensor<2x5xf32>, tensor<5x2xi64>) -> tensor<5xf32>
  return %g : tensor<5xf32>
}
