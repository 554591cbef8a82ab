// REQUIRES: cuda-toolkit
// Elementwise and data-movement kernels: one fused loop per kernel (not one
// per op), one element per thread with a grid stride over the result, so
// units are the result's elements and any grid is correct. Where the
// innermost dim is static, a multiple of 4 and contiguous in a 64-byte
// aligned buffer, a thread takes 4 elements: its f32 operands are one
// vector<4xf32> load or store (ld/st.global.v4), and a block 1024 units.
// RUN: lmopt-cuda-kernel-test %s --print-launches | FileCheck %s --check-prefix=LAUNCH
// RUN: lmopt-cuda-kernel-test %s --print-gpu-ir | FileCheck %s --check-prefix=GPU
// RUN: lmopt-cuda-kernel-test %s --print-ptx | FileCheck %s --check-prefix=PTX

// LAUNCH: kernel bias_gelu: operands 2 results 1 sizes 0 block 256 grid tensor 2 axes 2 units/block 1024
// LAUNCH: kernel transpose: operands 1 results 1 sizes 0 block 256 grid tensor 1 axes 4 units/block 1024
// LAUNCH: kernel cast_f16: operands 1 results 1 sizes 0 block 256 grid tensor 1 axes 2 units/block 1024
// LAUNCH: kernel dynamic_where: operands 3 results 1 sizes 3 block 256 grid tensor 3 axes 2 units/block 1024
// Scalar: a row of 7. A transpose of the innermost dim: scalar loads (the
// innermost loop walks a strided dim of the input), vector stores.
// LAUNCH: kernel negative_odd_rows: operands 2 results 1 sizes 0 block 256 grid tensor 2 axes 2 units/block 256
// LAUNCH: kernel transpose_inner: operands 1 results 1 sizes 0 block 256 grid tensor 1 axes 2 units/block 1024

// GPU-LABEL: gpu.func @bias_gelu
// GPU: %[[TID:.*]] = gpu.thread_id x
// GPU: %[[BID:.*]] = gpu.block_id x
// GPU: %[[GRID:.*]] = gpu.grid_dim x
// GPU: %[[FIRST:.*]] = arith.muli %[[BID]], %c256
// GPU: %[[START:.*]] = arith.addi %[[FIRST]], %[[TID]]
// GPU: %[[STRIDE:.*]] = arith.muli %[[GRID]], %c256
// GPU: scf.for %[[IV:.*]] = %[[START]] to %c96 step %[[STRIDE]]
// GPU: %[[FIRST:.*]] = arith.muli %[[IV]], %c4
// GPU: %[[COL:.*]] = arith.remui %[[FIRST]], %c96
// GPU: %[[ROW:.*]] = arith.divui %[[FIRST]], %c96
// GPU: vector.load %arg0[%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<4x96xf32>, vector<4xf32>
// GPU: vector.load %arg1[%[[COL]]] {alignment = 16 : i64} : memref<96xf32>, vector<4xf32>
// GPU-COUNT-4: math.erf
// GPU: %[[OUT:.*]] = vector.from_elements
// GPU: vector.store %[[OUT]], %arg2[%[[ROW]], %[[COL]]] {alignment = 16 : i64}
// GPU-NOT: scf.for
// GPU-LABEL: gpu.func @transpose
// GPU: scf.for
// GPU-NOT: scf.for
// GPU-LABEL: gpu.func @cast_f16
// GPU: vector.load
// GPU: arith.truncf %{{.*}} : f32 to f16
// GPU-NOT: vector.store
// GPU: memref.store %{{.*}} : memref<3x40xf16>
// GPU-LABEL: gpu.func @dynamic_where
// GPU-SAME: %arg3: memref<f32>, %arg4: index, %arg5: index, %arg6: index)
// GPU: memref.load %{{.*}} : memref<?x16xi1
// GPU: vector.load %{{.*}} : memref<?x16xf32
// GPU: vector.store
// GPU-LABEL: gpu.func @negative_odd_rows
// GPU-NOT: vector.
// GPU-LABEL: gpu.func @transpose_inner
// GPU-NOT: vector.load
// GPU-COUNT-4: memref.load %arg0
// GPU-NOT: vector.load
// GPU: vector.store

// PTX-LABEL: .entry bias_gelu(
// PTX: ld.global.v4.{{[bf]}}32
// PTX: st.global.v4.{{[bf]}}32
// PTX-LABEL: .entry negative_odd_rows(
// PTX-NOT: .v4.
// PTX-LABEL: .entry transpose_inner(
// PTX-NOT: ld.global.v4
// PTX: st.global.v4.{{[bf]}}32

func.func @bias_gelu(%x: tensor<4x96xf32>, %b: tensor<96xf32>) -> tensor<4x96xf32> {
  %0 = lmopt.add %x, %b : (tensor<4x96xf32>, tensor<96xf32>) -> tensor<4x96xf32>
  %1 = lmopt.gelu %0 : tensor<4x96xf32>
  return %1 : tensor<4x96xf32>
}

func.func @transpose(%x: tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32> {
  %0 = lmopt.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

func.func @cast_f16(%x: tensor<3x40xf32>) -> tensor<3x40xf16> {
  %0 = lmopt.cast %x : tensor<3x40xf32> -> tensor<3x40xf16>
  return %0 : tensor<3x40xf16>
}

func.func @dynamic_where(%c: tensor<?x16xi1>, %a: tensor<?x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %0 = lmopt.where %c, %a, %b : (tensor<?x16xi1>, tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

func.func @negative_odd_rows(%x: tensor<5x7xf32>, %y: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %0 = lmopt.add %x, %y : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}

func.func @transpose_inner(%x: tensor<16x8xf32>) -> tensor<8x16xf32> {
  %0 = lmopt.transpose %x {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
