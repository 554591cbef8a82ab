// BERT's attention-mask computation as one kernel: the integer mask cast to
// float, compared with zero, turned into a -10000 bias with where, added to
// the scores with broadcasting, and softmax. Run against the reference
// evaluator; the boolean comparison is a second result.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=2x4x16x16:float32 input1=2x1x1x16:int64
// RUN: lmopt-interpret %s --function=attention_mask --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-kernel-test %s --kernel=attention_mask --inputs=%t.npz --compare=%t.ref.npz | FileCheck %s
// RUN: lmopt-kernel-test %s --print-bufferized-ir | FileCheck %s --check-prefix=MLIR

// CHECK: output0: shape [2, 4, 16, 16], {{.*}}: PASS
// CHECK-NEXT: output1: shape [2, 1, 1, 16], {{.*}}: PASS

// cast + equal fuse into one generic writing the boolean result; where is
// read through a broadcast by the add, so it is not fused into it (that
// would compute each bias once per score) but computed once into a small
// stack temporary. The softmax makes the kernel one loop over the 2x4x16
// rows: per row, the add into a one-row temporary, max, sum of exp and the
// output into the row of the probabilities. The boolean result is written
// outside that loop, so the kernel is not partitioned.
// MLIR-LABEL: func.func @attention_mask(
// MLIR-SAME: %[[SCORES:arg[0-9]+]]: memref<2x4x16x16xf32> {{.*}}, %[[MASK:arg[0-9]+]]: memref<2x1x1x16xi64> {{.*}}, %[[PROBS:arg[0-9]+]]: memref<2x4x16x16xf32> {{.*}}, %[[MASKED:arg[0-9]+]]: memref<2x1x1x16xi1> {llvm.align = 64 : i64, llvm.noalias}) {
// MLIR-NOT: memref.alloc(
// MLIR: linalg.generic {{.*}} ins(%[[MASK]] : {{.*}} outs(%[[MASKED]] :
// MLIR: %[[BIAS:.*]] = memref.alloca() {{.*}} : memref<2x1x1x16xf32>
// MLIR: linalg.generic {{.*}} ins(%[[MASKED]] : {{.*}} outs(%[[BIAS]] :
// MLIR: %[[ROW:.*]] = memref.alloca() {{.*}} : memref<1x1x1x16xf32>
// MLIR: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// MLIR: %[[SROW:.*]] = memref.subview %[[SCORES]]
// MLIR: linalg.generic {{.*}} ins(%[[SROW]], %{{.*}} : {{.*}} outs(%[[ROW]] :
// MLIR: linalg.generic {{.*}}"reduction"]} ins(%[[ROW]] :
// MLIR: linalg.generic {{.*}}"reduction"]} ins(%[[ROW]],
// MLIR: %[[PROW:.*]] = memref.subview %[[PROBS]]
// MLIR: linalg.generic {{.*}} ins(%[[ROW]], {{.*}} outs(%[[PROW]] :
// MLIR-NOT: memref.alloc(
// MLIR: return
func.func @attention_mask(%scores: tensor<2x4x16x16xf32>, %mask: tensor<2x1x1x16xi64>) -> (tensor<2x4x16x16xf32>, tensor<2x1x1x16xi1>) {
  %zero = lmopt.constant dense<0.0> : tensor<f32>
  %neg = lmopt.constant dense<-10000.0> : tensor<f32>
  %m = lmopt.cast %mask : tensor<2x1x1x16xi64> -> tensor<2x1x1x16xf32>
  %masked = lmopt.equal %m, %zero : (tensor<2x1x1x16xf32>, tensor<f32>) -> tensor<2x1x1x16xi1>
  %bias = lmopt.where %masked, %neg, %zero : (tensor<2x1x1x16xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x1x16xf32>
  %s = lmopt.add %scores, %bias : (tensor<2x4x16x16xf32>, tensor<2x1x1x16xf32>) -> tensor<2x4x16x16xf32>
  %p = lmopt.softmax %s : tensor<2x4x16x16xf32>
  return %p, %masked : tensor<2x4x16x16xf32>, tensor<2x1x1x16xi1>
}
