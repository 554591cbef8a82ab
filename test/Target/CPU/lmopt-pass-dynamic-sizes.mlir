// RUN: lmopt-opt %s --lmopt-pass-dynamic-sizes --split-input-file --verify-diagnostics | FileCheck %s

// Inputs are kernels as the bufferization half of the kernel pipeline leaves
// them (lmopt-kernel-test --print-bufferized-ir), cut down.

// Each buffer with a run-time dim becomes a bare pointer (a rank-0 memref);
// its sizes are index arguments appended after everything else, `part` and
// `parts` included, in argument then dim order; the body reads a dense
// row-major view rebuilt from the pointer.
// CHECK-LABEL: func.func @dynamic_rows_partitioned(
// CHECK-SAME: %[[X:arg0]]: memref<f32> {llvm.align = 64 : i64, llvm.noalias}, %{{.*}}: memref<64xf32> {{.*}}, %[[Y:arg2]]: memref<f32> {llvm.align = 64 : i64, llvm.noalias}
// CHECK-SAME: %[[PART:arg3]]: index, %[[PARTS:arg4]]: index, %[[XROWS:arg5]]: index, %[[YROWS:arg6]]: index) attributes {lmopt.partitioned}
// CHECK: %[[XV:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[XROWS]], 64], strides: [64, 1] : memref<f32> to memref<?x64xf32>
// CHECK: %[[YV:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [%[[YROWS]], 64], strides: [64, 1] : memref<f32> to memref<?x64xf32>
// CHECK: memref.dim %[[XV]], %{{.*}} : memref<?x64xf32>
// CHECK: arith.muli %{{.*}}, %[[PART]] : index
// CHECK: memref.subview %[[XV]][
// CHECK: memref.subview %[[YV]][
func.func @dynamic_rows_partitioned(%arg0: memref<?x64xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg1: memref<64xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg2: memref<?x64xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg3: index, %arg4: index) attributes {lmopt.partitioned} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x64xf32>
  %0 = arith.muli %dim, %arg3 : index
  %1 = arith.divui %0, %arg4 : index
  %2 = arith.addi %arg3, %c1 : index
  %3 = arith.muli %dim, %2 : index
  %4 = arith.divui %3, %arg4 : index
  scf.for %arg5 = %1 to %4 step %c1 {
    %subview = memref.subview %arg0[%arg5, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %subview_0 = memref.subview %arg2[%arg5, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%subview, %arg1 : memref<1x64xf32, strided<[64, 1], offset: ?>>, memref<64xf32>) outs(%subview_0 : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %5 = arith.mulf %in, %in_1 fastmath<contract> : f32
      linalg.yield %5 : f32
    }
  }
  return
}

// -----

// Two dynamic dims (batch and sequence): two sizes per buffer, and the
// outer stride is the product of the inner sizes.
// CHECK-LABEL: func.func @batch_and_sequence(
// CHECK-SAME: %[[X:arg0]]: memref<f32> {{.*}}, %[[Y:arg1]]: memref<f32> {{.*}}, %[[XB:arg2]]: index, %[[XS:arg3]]: index, %[[YB:arg4]]: index, %[[YS:arg5]]: index)
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[XSTRIDE:.*]] = arith.muli %[[C64]], %[[XS]] : index
// CHECK: %[[XV:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[XB]], %[[XS]], 64], strides: [%[[XSTRIDE]], 64, 1] : memref<f32> to memref<?x?x64xf32>
// CHECK: %[[YV:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [%[[YB]], %[[YS]], 64]
// CHECK: memref.copy %[[XV]], %[[YV]]
func.func @batch_and_sequence(%arg0: memref<?x?x64xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg1: memref<?x?x64xf32> {llvm.align = 64 : i64, llvm.noalias}) {
  memref.copy %arg0, %arg1 : memref<?x?x64xf32> to memref<?x?x64xf32>
  return
}

// -----

// Buffers of static shape keep their type and get no size argument.
// CHECK-LABEL: func.func @negative_static(
// CHECK-SAME: %[[X:.*]]: memref<4x64xf32>, %[[Y:.*]]: memref<4x64xf32>) {
// CHECK-NOT: memref.reinterpret_cast
// CHECK: memref.copy %[[X]], %[[Y]]
func.func @negative_static(%arg0: memref<4x64xf32>, %arg1: memref<4x64xf32>) {
  memref.copy %arg0, %arg1 : memref<4x64xf32> to memref<4x64xf32>
  return
}

// -----

// A declaration has no body to rebuild the views in.
// CHECK-LABEL: func.func private @negative_declaration(memref<?x64xf32>)
func.func private @negative_declaration(memref<?x64xf32>)

// -----

// A strided buffer is not described by its sizes alone.
// expected-error @+1 {{kernel 'strided_argument' argument #0 of type 'memref<?x64xf32, strided<[128, 1]>>' has dynamic dims but not the identity layout}}
func.func @strided_argument(%arg0: memref<?x64xf32, strided<[128, 1]>>, %arg1: memref<?x64xf32>) {
  memref.copy %arg0, %arg1 : memref<?x64xf32, strided<[128, 1]>> to memref<?x64xf32>
  return
}

// -----

// A static buffer of zero elements (an empty set, as the node tests'
// reductions over an empty axis take) has no bare-pointer form either: it
// becomes a rank-0 memref rebuilt with constant sizes, and no size argument
// is added. A non-empty static buffer keeps its type.
// CHECK-LABEL: func.func @empty_buffers(
// CHECK-SAME: %[[X:arg0]]: memref<f32> {llvm.align = 64 : i64, llvm.noalias}, %[[Y:arg1]]: memref<f32> {llvm.align = 64 : i64, llvm.noalias}, %{{.*}}: memref<2x1x4xf32> {llvm.align = 64 : i64, llvm.noalias})
// CHECK-NOT: index
// CHECK-DAG: memref.reinterpret_cast %[[X]] to offset: [0], sizes: [2, 0, 4], strides: [0, 4, 1] : memref<f32> to memref<2x0x4xf32>
// CHECK-DAG: memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [2, 0, 4], strides: [0, 4, 1] : memref<f32> to memref<2x0x4xf32>
func.func @empty_buffers(%arg0: memref<2x0x4xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg1: memref<2x0x4xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg2: memref<2x1x4xf32> {llvm.align = 64 : i64, llvm.noalias}) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<2x1x4xf32>)
  memref.copy %arg0, %arg1 : memref<2x0x4xf32> to memref<2x0x4xf32>
  return
}
