// Multi-op kernels run against the reference evaluator, and what fusion and
// bufferization make of them.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=16x512:float32 input1=512:float32 input2=16x512:float32 input3=512:float32 input4=512:float32
// RUN: lmopt-interpret %s --function=ffn_epilogue --inputs=%t.npz --output=%t.ffn.npz
// RUN: lmopt-kernel-test %s --kernel=ffn_epilogue --inputs=%t.npz --compare=%t.ffn.npz | FileCheck %s --check-prefix=FFN
// RUN: lmopt-interpret %s --function=shared_temporary --inputs=%t.npz --output=%t.tmp.npz
// RUN: lmopt-kernel-test %s --kernel=shared_temporary --inputs=%t.npz --compare=%t.tmp.npz | FileCheck %s --check-prefix=TMP
// RUN: lmopt-kernel-test %s --cpu=skylake-avx512 --print-llvm-ir | FileCheck %s --check-prefix=IR
// RUN: lmopt-kernel-test %s --print-bufferized-ir | FileCheck %s --check-prefix=MLIR

// A transformer FFN epilogue: bias add, gelu, residual add and layer_norm.
// The layer_norm's generics make the kernel one loop over rows: each row's
// elementwise chain (one fused generic) is computed into a one-row
// temporary on the stack, which the statistics and the normalized output
// read while it is in L1. The loop is the whole kernel, so it is
// partitioned: rows [16 * part / parts, 16 * (part + 1) / parts).
// FFN: output0: shape [16, 512], {{.*}}: PASS
// MLIR-LABEL: func.func @ffn_epilogue(
// MLIR-SAME: %[[X:arg[0-9]+]]: memref<16x512xf32> {{.*}}, %[[OUT:arg[0-9]+]]: memref<16x512xf32> {llvm.align = 64 : i64, llvm.noalias}, %[[PART:arg[0-9]+]]: index, %[[PARTS:arg[0-9]+]]: index) attributes {lmopt.partitioned} {
// MLIR-NOT: memref.alloc(
// MLIR: %[[B0:.*]] = arith.muli %[[PART]], %[[ROWS:.*]] : index
// MLIR: %[[BEGIN:.*]] = arith.divui %[[B0]], %[[PARTS]] : index
// MLIR: %[[ROW:.*]] = memref.alloca() {{.*}} : memref<1x512xf32>
// MLIR: scf.for %[[I:.*]] = %[[BEGIN]] to %{{.*}} step
// MLIR: %[[XR:.*]] = memref.subview %[[X]][%[[I]], 0] [1, 512]
// MLIR: linalg.generic {{.*}}["parallel", "parallel"]} ins(%[[XR]], {{.*}} outs(%[[ROW]] :
// MLIR: math.erf
// MLIR: linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[ROW]] :
// MLIR: linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[ROW]],
// MLIR: math.sqrt
// MLIR: %[[OR:.*]] = memref.subview %[[OUT]][%[[I]], 0] [1, 512]
// MLIR: linalg.generic {{.*}}["parallel", "parallel"]} ins(%[[ROW]], {{.*}} outs(%[[OR]] :
// MLIR-NOT: math.sqrt
// MLIR-NOT: memref.alloc(
// MLIR: return
// IR-LABEL: define internal {{.*}}@__lmopt_kernel_impl.ffn_epilogue(
// IR-NOT: @malloc(
// IR: ret void
// The whole kernel is part 0 of 1; the partitioned entry passes its share.
// IR-LABEL: define void @ffn_epilogue(ptr
// IR: call fastcc void @__lmopt_kernel_impl.ffn_epilogue({{.*}}, i64 0, i64 1)
// IR-LABEL: define void @__lmopt_part_ffn_epilogue(
// IR-SAME: i64 %[[P:.*]], i64 %[[NP:.*]])
// IR: call fastcc void @__lmopt_kernel_impl.ffn_epilogue({{.*}}, i64 %[[P]], i64 %[[NP]])
func.func @ffn_epilogue(%x: tensor<16x512xf32>, %bias: tensor<512xf32>, %residual: tensor<16x512xf32>, %gamma: tensor<512xf32>, %beta: tensor<512xf32>) -> tensor<16x512xf32> {
  %h = lmopt.add %x, %bias : (tensor<16x512xf32>, tensor<512xf32>) -> tensor<16x512xf32>
  %g = lmopt.gelu %h : tensor<16x512xf32>
  %r = lmopt.add %g, %residual : (tensor<16x512xf32>, tensor<16x512xf32>) -> tensor<16x512xf32>
  %y = lmopt.layer_norm %r, %gamma, %beta {epsilon = 1.0e-12 : f32} : (tensor<16x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<16x512xf32>
  return %y : tensor<16x512xf32>
}

// exp(x) feeds two reductions and is no result's shape: a 32 KiB temporary,
// too big for the stack, so it is allocated and freed within the call.
// The row max becomes a loop over rows, but exp, which the column sum also
// reads, is not fused into it (it would be computed twice), and the column
// sum is written outside the loop: not partitioned.
// TMP: output0: shape [512], {{.*}}: PASS
// TMP-NEXT: output1: shape [16, 1], {{.*}}: PASS
// MLIR-LABEL: func.func @shared_temporary(
// MLIR-SAME: %{{.*}}: memref<16x1xf32> {llvm.align = 64 : i64, llvm.noalias}) {
// MLIR: %[[ALLOC:.*]] = memref.alloc() {{.*}} : memref<16x512xf32>
// MLIR: math.exp
// MLIR: scf.for %[[I:.*]] =
// MLIR-NOT: math.exp
// MLIR: memref.subview %[[ALLOC]][%[[I]], 0] [1, 512]
// MLIR-NOT: math.exp
// MLIR: memref.dealloc %[[ALLOC]]
// MLIR-NEXT: return
// IR-LABEL: define void @shared_temporary(
// IR: call {{.*}}@malloc(
// IR: call void @free(
// IR: ret void
// IR-NOT: @__lmopt_part_shared_temporary
func.func @shared_temporary(%x: tensor<16x512xf32>, %unused: tensor<512xf32>, %unused2: tensor<16x512xf32>, %unused3: tensor<512xf32>, %unused4: tensor<512xf32>) -> (tensor<512xf32>, tensor<16x1xf32>) {
  %e = lmopt.exp %x : tensor<16x512xf32>
  %0 = lmopt.reduce_sum %e {axes = array<i64: 0>, keepdims = false} : tensor<16x512xf32> -> tensor<512xf32>
  %1 = lmopt.reduce_max %e {axes = array<i64: 1>} : tensor<16x512xf32> -> tensor<16x1xf32>
  return %0, %1 : tensor<512xf32>, tensor<16x1xf32>
}
