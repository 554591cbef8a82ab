// RUN: lmopt-opt %s --lmopt-annotate-kernel-args --split-input-file | FileCheck %s

// Inputs are kernels after buffer-results-to-out-params: operands, then the
// results as out-params.

// Every buffer argument, operand or result, static or dynamic, is noalias
// and 64-byte aligned (the kernel ABI); attributes already there stay.
// CHECK-LABEL: func.func @buffers
// CHECK-SAME: %{{.*}}: memref<16x64xf32> {bufferization.writable = false, llvm.align = 64 : i64, llvm.noalias}
// CHECK-SAME: %{{.*}}: memref<?x64xf32> {llvm.align = 64 : i64, llvm.noalias}
// CHECK-SAME: %{{.*}}: memref<16xf32> {llvm.align = 64 : i64, llvm.noalias})
func.func @buffers(%arg0: memref<16x64xf32> {bufferization.writable = false}, %arg1: memref<?x64xf32>, %arg2: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %0 = memref.load %arg0[%c0, %c0] : memref<16x64xf32>
  memref.store %0, %arg2[%c0] : memref<16xf32>
  return
}

// -----

// Arguments that are not buffers get nothing.
// CHECK-LABEL: func.func @negative_scalar_argument
// CHECK-SAME: %{{.*}}: memref<4xf32> {llvm.align = 64 : i64, llvm.noalias}, %{{.*}}: f32)
func.func @negative_scalar_argument(%arg0: memref<4xf32>, %arg1: f32) {
  %c0 = arith.constant 0 : index
  memref.store %arg1, %arg0[%c0] : memref<4xf32>
  return
}

// -----

// A declaration is not a kernel: its callers' buffers may alias.
// CHECK-LABEL: func.func private @negative_declaration(memref<4xf32>, memref<4xf32>)
func.func private @negative_declaration(memref<4xf32>, memref<4xf32>)

// -----

// A step that writes result 0 in place of operand 0 (a gradient accumulated
// into its state): the plan builder lists both arguments in
// lmopt.in_place_args, and they get the alignment but not noalias; the
// other operand stays noalias.
// CHECK-LABEL: func.func @in_place_pair
// CHECK-SAME: %{{.*}}: memref<16xf32> {llvm.align = 64 : i64}, %{{.*}}: memref<16xf32> {llvm.align = 64 : i64, llvm.noalias}, %{{.*}}: memref<16xf32> {llvm.align = 64 : i64})
func.func @in_place_pair(%arg0: memref<16xf32>, %arg1: memref<16xf32>, %arg2: memref<16xf32>) attributes {lmopt.in_place_args = array<i64: 0, 2>} {
  %c0 = arith.constant 0 : index
  %0 = memref.load %arg0[%c0] : memref<16xf32>
  %1 = memref.load %arg1[%c0] : memref<16xf32>
  %2 = arith.addf %0, %1 : f32
  memref.store %2, %arg2[%c0] : memref<16xf32>
  return
}
