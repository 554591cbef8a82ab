// RUN: lmopt-opt %s --lmopt-lower-strided-copies --split-input-file | FileCheck %s

// Inputs are kernels on buffers after the bufferization half of the kernel
// pipeline (the copies of a concatenation and a strided slice, as in
// data-movement-kernel.mlir).

// A concatenation writes each part into a slice of the result: copies into
// strided views become linalg.copy (loops later) instead of calls into
// MLIR's runtime library.
// CHECK-LABEL: func.func @concat_parts
// CHECK-SAME: %[[A:.*]]: memref<2x4x3x16xf32>, %[[B:.*]]: memref<2x4x8x16xf32>, %[[OUT:.*]]: memref<2x4x11x16xf32>
// CHECK: %[[FIRST:.*]] = memref.subview %[[OUT]][0, 0, 0, 0] [2, 4, 3, 16]
// CHECK: linalg.copy ins(%[[A]] : memref<2x4x3x16xf32>) outs(%[[FIRST]] : memref<2x4x3x16xf32, strided<[704, 176, 16, 1]>>)
// CHECK: %[[SECOND:.*]] = memref.subview %[[OUT]][0, 0, 3, 0] [2, 4, 8, 16]
// CHECK: linalg.copy ins(%[[B]] : memref<2x4x8x16xf32>) outs(%[[SECOND]] : memref<2x4x8x16xf32, strided<[704, 176, 16, 1], offset: 48>>)
// CHECK-NOT: memref.copy
func.func @concat_parts(%arg0: memref<2x4x3x16xf32>, %arg1: memref<2x4x8x16xf32>, %arg2: memref<2x4x11x16xf32>) {
  %subview = memref.subview %arg2[0, 0, 0, 0] [2, 4, 3, 16] [1, 1, 1, 1] : memref<2x4x11x16xf32> to memref<2x4x3x16xf32, strided<[704, 176, 16, 1]>>
  memref.copy %arg0, %subview : memref<2x4x3x16xf32> to memref<2x4x3x16xf32, strided<[704, 176, 16, 1]>>
  %subview_0 = memref.subview %arg2[0, 0, 3, 0] [2, 4, 8, 16] [1, 1, 1, 1] : memref<2x4x11x16xf32> to memref<2x4x8x16xf32, strided<[704, 176, 16, 1], offset: 48>>
  memref.copy %arg1, %subview_0 : memref<2x4x8x16xf32> to memref<2x4x8x16xf32, strided<[704, 176, 16, 1], offset: 48>>
  return
}

// -----

// A strided slice read into a dense result: the source is the strided side.
// CHECK-LABEL: func.func @strided_slice
// CHECK-SAME: %[[X:.*]]: memref<2x8x64xf32>, %[[OUT:.*]]: memref<2x2x64xf32>
// CHECK: %[[S:.*]] = memref.subview %[[X]][0, 1, 0] [2, 2, 64] [1, 3, 1]
// CHECK: linalg.copy ins(%[[S]] : memref<2x2x64xf32, strided<[512, 192, 1], offset: 64>>) outs(%[[OUT]] : memref<2x2x64xf32>)
// CHECK-NOT: memref.copy
func.func @strided_slice(%arg0: memref<2x8x64xf32>, %arg1: memref<2x2x64xf32>) {
  %subview = memref.subview %arg0[0, 1, 0] [2, 2, 64] [1, 3, 1] : memref<2x8x64xf32> to memref<2x2x64xf32, strided<[512, 192, 1], offset: 64>>
  memref.copy %subview, %arg1 : memref<2x2x64xf32, strided<[512, 192, 1], offset: 64>> to memref<2x2x64xf32>
  return
}

// -----

// A copy between dense buffers stays: it lowers to llvm.memcpy.
// CHECK-LABEL: func.func @negative_contiguous
// CHECK-SAME: %[[X:.*]]: memref<4x64xf32>, %[[Y:.*]]: memref<4x64xf32>
// CHECK: memref.copy %[[X]], %[[Y]] : memref<4x64xf32> to memref<4x64xf32>
// CHECK-NOT: linalg.copy
func.func @negative_contiguous(%arg0: memref<4x64xf32>, %arg1: memref<4x64xf32>) {
  memref.copy %arg0, %arg1 : memref<4x64xf32> to memref<4x64xf32>
  return
}

// -----

// linalg.copy takes ranked buffers only: an unranked copy stays.
// CHECK-LABEL: func.func @negative_unranked
// CHECK-SAME: %[[X:.*]]: memref<*xf32>, %[[Y:.*]]: memref<4xf32, strided<[2]>>
// CHECK: memref.copy %[[X]], %[[Y]] : memref<*xf32> to memref<4xf32, strided<[2]>>
// CHECK-NOT: linalg.copy
func.func @negative_unranked(%arg0: memref<*xf32>, %arg1: memref<4xf32, strided<[2]>>) {
  memref.copy %arg0, %arg1 : memref<*xf32> to memref<4xf32, strided<[2]>>
  return
}
