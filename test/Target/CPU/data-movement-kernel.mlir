// Data movement inside a kernel: attention's QKV split, head reshape and
// transpose, a KV-cache concat, the way back to [batch, sequence, hidden]
// with an add, and a strided slice. Run against the reference evaluator.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=2x8x192:float32 input1=2x4x3x16:float32
// RUN: lmopt-interpret %s --function=heads --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-kernel-test %s --kernel=heads --inputs=%t.npz --compare=%t.ref.npz | FileCheck %s

// CHECK: output0: shape [2, 4, 8, 16], {{.*}}: PASS
// CHECK-NEXT: output1: shape [2, 4, 11, 16], {{.*}}: PASS
// CHECK-NEXT: output2: shape [2, 8, 64], {{.*}}: PASS
// CHECK-NEXT: output3: shape [2, 2, 64], {{.*}}: PASS
func.func @heads(%qkv: tensor<2x8x192xf32>, %past: tensor<2x4x3x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x11x16xf32>, tensor<2x8x64xf32>, tensor<2x2x64xf32>) {
  %heads = lmopt.constant dense<[2, 8, 4, 16]> : tensor<4xi64>
  %hidden = lmopt.constant dense<[2, 8, 64]> : tensor<3xi64>
  %q, %k, %v = lmopt.split %qkv {axis = 2 : i64, split_sizes = array<i64: 64, 64, 64>} : (tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  %qh = lmopt.reshape %q, %heads : (tensor<2x8x64xf32>, tensor<4xi64>) -> tensor<2x8x4x16xf32>
  %qt = lmopt.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %kh = lmopt.reshape %k, %heads : (tensor<2x8x64xf32>, tensor<4xi64>) -> tensor<2x8x4x16xf32>
  %kt = lmopt.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %kc = lmopt.concat %past, %kt {axis = 2 : i64} : (tensor<2x4x3x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x11x16xf32>
  %qb = lmopt.transpose %qt {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %qr = lmopt.reshape %qb, %hidden : (tensor<2x8x4x16xf32>, tensor<3xi64>) -> tensor<2x8x64xf32>
  %sum = lmopt.add %qr, %v : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %starts = lmopt.constant dense<[1]> : tensor<1xi64>
  %ends = lmopt.constant dense<[7]> : tensor<1xi64>
  %axes = lmopt.constant dense<[1]> : tensor<1xi64>
  %steps = lmopt.constant dense<[3]> : tensor<1xi64>
  %rows = lmopt.slice %v, %starts, %ends axes %axes steps %steps : (tensor<2x8x64xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x64xf32>
  return %qt, %kc, %sum, %rows : tensor<2x4x8x16xf32>, tensor<2x4x11x16xf32>, tensor<2x8x64xf32>, tensor<2x2x64xf32>
}
