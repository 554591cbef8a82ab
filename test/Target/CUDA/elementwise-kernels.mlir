// REQUIRES: cuda-toolkit
// Elementwise and data-movement kernels: one fused loop per kernel (not one
// per op), one element per thread with a grid stride over the result, so
// units are the result's elements and any grid is correct.
// RUN: lmopt-cuda-kernel-test %s --print-launches | FileCheck %s --check-prefix=LAUNCH
// RUN: lmopt-cuda-kernel-test %s --print-gpu-ir | FileCheck %s --check-prefix=GPU

// LAUNCH: kernel bias_gelu: operands 2 results 1 sizes 0 block 256 grid tensor 2 axes 2 units/block 256
// LAUNCH: kernel transpose: operands 1 results 1 sizes 0 block 256 grid tensor 1 axes 4 units/block 256
// LAUNCH: kernel cast_f16: operands 1 results 1 sizes 0 block 256 grid tensor 1 axes 2 units/block 256
// LAUNCH: kernel dynamic_where: operands 3 results 1 sizes 3 block 256 grid tensor 3 axes 2 units/block 256

// GPU-LABEL: gpu.func @bias_gelu
// GPU: %[[TID:.*]] = gpu.thread_id x
// GPU: %[[BID:.*]] = gpu.block_id x
// GPU: %[[GRID:.*]] = gpu.grid_dim x
// GPU: %[[FIRST:.*]] = arith.muli %[[BID]], %c256
// GPU: %[[START:.*]] = arith.addi %[[FIRST]], %[[TID]]
// GPU: %[[STRIDE:.*]] = arith.muli %[[GRID]], %c256
// GPU: scf.for %{{.*}} = %[[START]] to %c384 step %[[STRIDE]]
// GPU: arith.addf
// GPU: math.erf
// GPU: memref.store
// GPU-NOT: scf.for
// GPU-LABEL: gpu.func @transpose
// GPU: scf.for
// GPU-NOT: scf.for
// GPU-LABEL: gpu.func @cast_f16
// GPU: arith.truncf %{{.*}} : f32 to f16
// GPU-LABEL: gpu.func @dynamic_where
// GPU-SAME: %arg3: memref<f32>, %arg4: index, %arg5: index, %arg6: index)

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
