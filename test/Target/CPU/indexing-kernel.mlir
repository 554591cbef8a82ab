// Position ids from an attention mask (cumsum, mul, add), range, mod and
// gather_elements in one kernel, run against the reference evaluator.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=2x8:int64 input1=2x130:float32
// RUN: lmopt-interpret %s --function=position_ids --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-kernel-test %s --kernel=position_ids --inputs=%t.npz --compare=%t.ref.npz | FileCheck %s

// CHECK: output0: shape [2, 8], {{.*}}: PASS
// CHECK-NEXT: output1: shape [2, 8], {{.*}}: PASS
// CHECK-NEXT: output2: shape [8], {{.*}}: PASS
// CHECK-NEXT: output3: shape [2, 8], {{.*}}: PASS
func.func @position_ids(%mask: tensor<2x8xi64>, %table: tensor<2x130xf32>) -> (tensor<2x8xi64>, tensor<2x8xi64>, tensor<8xi64>, tensor<2x8xf32>) {
  %one = lmopt.constant dense<1> : tensor<i64>
  %c = lmopt.cumsum %mask {axis = 1 : i64} : tensor<2x8xi64>
  %p = lmopt.mul %c, %mask : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
  %pos = lmopt.add %p, %one : (tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi64>
  %three = lmopt.constant dense<3> : tensor<1xi64>
  %m = lmopt.mod %pos, %three : (tensor<2x8xi64>, tensor<1xi64>) -> tensor<2x8xi64>
  %start = lmopt.constant dense<2> : tensor<i64>
  %limit = lmopt.constant dense<26> : tensor<i64>
  %delta = lmopt.constant dense<3> : tensor<i64>
  %r = lmopt.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8xi64>
  %g = lmopt.gather_elements %table, %pos {axis = 1 : i64} : (tensor<2x130xf32>, tensor<2x8xi64>) -> tensor<2x8xf32>
  return %pos, %m, %r, %g : tensor<2x8xi64>, tensor<2x8xi64>, tensor<8xi64>, tensor<2x8xf32>
}
