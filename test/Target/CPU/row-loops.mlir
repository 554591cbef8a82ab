// Reducing kernels become one loop over rows (KernelRowLoops.cpp): the
// producers fused into it, one row of temporaries on the stack, and, when
// the loop is the whole kernel, a partitioned entry point that runs a share
// of the rows. Each kernel also runs against the reference evaluator, whole
// and as 3 shares (last first).
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=4x8x64:float32 input1=4x8x64:float32 input2=64:float32 input3=64:float32
// RUN: lmopt-kernel-test %s --print-bufferized-ir | FileCheck %s
// RUN: lmopt-kernel-test %s --cpu=skylake-avx512 --print-llvm-ir | FileCheck %s --check-prefix=IR
// RUN: lmopt-interpret %s --function=residual_layer_norm --inputs=%t.npz --output=%t.ln.npz
// RUN: lmopt-kernel-test %s --kernel=residual_layer_norm --inputs=%t.npz --compare=%t.ln.npz | FileCheck %s --check-prefix=OK
// RUN: lmopt-kernel-test %s --kernel=residual_layer_norm --parts=3 --inputs=%t.npz --compare=%t.ln.npz | FileCheck %s --check-prefix=OK
// RUN: lmopt-interpret %s --function=row_sum_broadcast --inputs=%t.npz --output=%t.sb.npz
// RUN: lmopt-kernel-test %s --kernel=row_sum_broadcast --parts=3 --inputs=%t.npz --compare=%t.sb.npz | FileCheck %s --check-prefix=OK
// RUN: lmopt-interpret %s --function=row_sum --inputs=%t.npz --output=%t.sum.npz
// RUN: lmopt-kernel-test %s --kernel=row_sum --inputs=%t.npz --compare=%t.sum.npz | FileCheck %s --check-prefix=OK
// RUN: lmopt-kernel-test %s --kernel=row_sum --parts=3 --inputs=%t.npz --compare=%t.sum.npz | FileCheck %s --check-prefix=OK
// RUN: lmopt-interpret %s --function=negative_column_mean --inputs=%t.npz --output=%t.col.npz
// RUN: lmopt-kernel-test %s --kernel=negative_column_mean --inputs=%t.npz --compare=%t.col.npz | FileCheck %s --check-prefix=OK
// RUN: not lmopt-kernel-test %s --kernel=negative_column_mean --parts=3 --inputs=%t.npz 2>&1 | FileCheck %s --check-prefix=NOPART

// OK: output0: {{.*}}: PASS
// NOPART: error: the shared object does not export '__lmopt_part_negative_column_mean' (the kernel is not partitioned)

// The residual add and every statistic per row (4x8 rows): the sum is a
// one-row temporary, the statistics one value each; the row of the output
// is written in place; the division and square root happen per row, not in
// the output's generic.
// CHECK-LABEL: func.func @residual_layer_norm(
// CHECK-SAME: %[[X:arg[0-9]+]]: memref<4x8x64xf32> {{.*}}, %[[R:arg[0-9]+]]: memref<4x8x64xf32> {{.*}}, %[[OUT:arg[0-9]+]]: memref<4x8x64xf32> {{.*}}, %[[PART:arg[0-9]+]]: index, %[[PARTS:arg[0-9]+]]: index) attributes {lmopt.partitioned} {
// CHECK-NOT: memref.alloc(
// CHECK: %[[B0:.*]] = arith.muli %[[PART]], %[[N:c32]] : index
// CHECK: %[[BEGIN:.*]] = arith.divui %[[B0]], %[[PARTS]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[PART]], %{{.*}} : index
// CHECK: %[[E0:.*]] = arith.muli %[[NEXT]], %[[N]] : index
// CHECK: %[[END:.*]] = arith.divui %[[E0]], %[[PARTS]] : index
// CHECK: %[[SUM:.*]] = memref.alloca() {{.*}} : memref<1x1x64xf32>
// CHECK: scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]] step
// CHECK: %[[COL:.*]] = arith.remui %[[I]], %c8 : index
// CHECK: %[[ROW:.*]] = arith.divui %[[I]], %c8 : index
// CHECK: %[[XR:.*]] = memref.subview %[[X]][%[[ROW]], %[[COL]], 0] [1, 1, 64]
// CHECK: %[[RR:.*]] = memref.subview %[[R]][%[[ROW]], %[[COL]], 0] [1, 1, 64]
// CHECK: linalg.generic {{.*}} ins(%[[XR]], %[[RR]] : {{.*}} outs(%[[SUM]] :
// CHECK: linalg.generic {{.*}}"reduction"]} ins(%[[SUM]] :
// CHECK: linalg.generic {{.*}}"reduction"]} ins(%[[SUM]],
// CHECK: math.sqrt
// CHECK: %[[OR:.*]] = memref.subview %[[OUT]][%[[ROW]], %[[COL]], 0] [1, 1, 64]
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], {{.*}} outs(%[[OR]] :
// CHECK-NOT: math.sqrt
// CHECK-NOT: arith.divf
// CHECK: return
// IR-LABEL: define void @residual_layer_norm(ptr
// IR: call fastcc void @__lmopt_kernel_impl.residual_layer_norm({{.*}}, i64 0, i64 1)
// IR-LABEL: define void @__lmopt_part_residual_layer_norm(ptr
// IR-SAME: i64 %[[P:.*]], i64 %[[NP:.*]])
// IR: call fastcc void @__lmopt_kernel_impl.residual_layer_norm({{.*}}, i64 %[[P]], i64 %[[NP]])
func.func @residual_layer_norm(%x: tensor<4x8x64xf32>, %r: tensor<4x8x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<4x8x64xf32> {
  %output, %sum = lmopt.skip_layer_norm %x, %r, %s, %b {epsilon = 1.0e-5 : f32} : (tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<4x8x64xf32>, tensor<4x8x64xf32>)
  return %output : tensor<4x8x64xf32>
}

// A row sum with keepdims added back to every element: per row, the sum
// into one stack value and the add reading it.
// CHECK-LABEL: func.func @row_sum_broadcast(
// CHECK-SAME: attributes {lmopt.partitioned}
// CHECK: %[[ACC:.*]] = memref.alloca() {{.*}} : memref<1x1xf32>
// CHECK: scf.for
// CHECK: linalg.generic {{.*}}"reduction"]} {{.*}} outs(%[[ACC]] :
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] :
// CHECK: arith.addf
// CHECK: return
func.func @row_sum_broadcast(%x: tensor<4x8x64xf32>, %r: tensor<4x8x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<4x8x64xf32> {
  %0 = lmopt.reduce_sum %x {axes = array<i64: 2>} : tensor<4x8x64xf32> -> tensor<4x8x1xf32>
  %1 = lmopt.add %r, %0 : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  return %1 : tensor<4x8x64xf32>
}

// The reduction itself is the root (a sum needs no final generic): each
// iteration zeroes one element of the result and sums its row into it.
// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME: %[[X:arg0]]: memref<4x8x64xf32>
// CHECK-SAME: %[[OUT:arg4]]: memref<4x8xf32> {{.*}}, %{{.*}}: index, %{{.*}}: index) attributes {lmopt.partitioned}
// CHECK-NOT: linalg.fill
// CHECK: scf.for
// CHECK: %[[ROW:.*]] = memref.subview %[[X]]
// CHECK: %[[EL:.*]] = memref.subview %[[OUT]]
// CHECK: linalg.fill {{.*}} outs(%[[EL]] :
// CHECK: linalg.generic {{.*}}"reduction"]} ins(%[[ROW]] : {{.*}} outs(%[[EL]] :
func.func @row_sum(%x: tensor<4x8x64xf32>, %r: tensor<4x8x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<4x8xf32> {
  %0 = lmopt.reduce_sum %x {axes = array<i64: 2>, keepdims = false} : tensor<4x8x64xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// The mean over the leading axis is the same for every row of the output:
// fused into the row loop it would be recomputed per row, so it stays
// outside, computed once into a temporary, and the kernel is not one loop
// (no partitioned entry).
// CHECK-LABEL: func.func @negative_column_mean(
// CHECK-SAME: %{{.*}}: memref<4x8x64xf32> {llvm.align = 64 : i64, llvm.noalias}) {
// CHECK: %[[MEAN:.*]] = memref.alloca() {{.*}} : memref<8x64xf32>
// CHECK: linalg.generic {{.*}}["reduction", "parallel", "parallel"]}
// CHECK: scf.for
// CHECK-NOT: "reduction"
// CHECK: return
// IR-NOT: @__lmopt_part_negative_column_mean
func.func @negative_column_mean(%x: tensor<4x8x64xf32>, %r: tensor<4x8x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<4x8x64xf32> {
  %0 = lmopt.reduce_mean %x {axes = array<i64: 0>} : tensor<4x8x64xf32> -> tensor<1x8x64xf32>
  %1 = lmopt.sub %x, %0 : (tensor<4x8x64xf32>, tensor<1x8x64xf32>) -> tensor<4x8x64xf32>
  return %1 : tensor<4x8x64xf32>
}

// Rows only known at run time (bounded dynamic shapes): the loop's trip
// count is the row count (read from the sizes the kernel is given, which
// become arguments after `part` and `parts` when lowered to LLVM); the row
// temporaries keep the static width, and the result is written in place in
// the caller's buffer.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME: %[[X:arg0]]: memref<?x64xf32>
// CHECK-SAME: %[[OUT:arg4]]: memref<?x64xf32> {{.*}}, %[[PART:arg5]]: index, %[[PARTS:arg6]]: index) attributes {lmopt.partitioned} {
// CHECK-NOT: memref.alloc(
// CHECK: %[[ROWS:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x64xf32>
// CHECK: %[[B0:.*]] = arith.muli %[[ROWS]], %[[PART]] : index
// CHECK: %[[BEGIN:.*]] = arith.divui %[[B0]], %[[PARTS]] : index
// CHECK: memref.alloca() {{.*}} : memref<1x64xf32>
// CHECK: scf.for %[[I:.*]] = %[[BEGIN]] to
// CHECK: math.sqrt
// CHECK: memref.subview %[[OUT]][%[[I]], 0] [1, 64]
// CHECK-NOT: memref.copy
// CHECK: return
// IR-LABEL: define void @__lmopt_part_dynamic_rows(
func.func @dynamic_rows(%x: tensor<?x64xf32>, %r: tensor<?x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %output, %sum = lmopt.skip_layer_norm %x, %r, %s, %b {epsilon = 1.0e-5 : f32} : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>)
  return %output : tensor<?x64xf32>
}
