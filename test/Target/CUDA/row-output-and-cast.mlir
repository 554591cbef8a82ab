// REQUIRES: cuda-toolkit
// A skip layer norm whose output is a kernel result in f32 and, cast, in f16
// too (the kernel between two half-precision islands, --precision=fp16): the
// output's generic is kept shared rather than cloned per use, so row tiling
// computes both results in one loop over the rows, a row per block ("axes
// 2 units/block 1"), not as two loops that would need the whole kernel in
// one block ("axes 0"). A reader that is not a returned elementwise
// generic (here the residual sum feeding the statistics) is still cloned.
// (With run-time dims the same kernel is still refused: its statistics
// become temporaries of run-time size; docs/cuda-backend.md.)
// RUN: lmopt-cuda-kernel-test %s --print-launches | FileCheck %s --check-prefix=LAUNCH
// RUN: lmopt-cuda-kernel-test %s --print-gpu-ir | FileCheck %s --check-prefix=GPU

// LAUNCH: kernel norm_and_cast: operands 4 results 2 sizes 0 block 256 grid tensor 0 axes 2 units/block 1

// One row loop (blocks striding over the rows) writes the f32 row, and after
// a barrier the same block reads it back and writes it in f16.
// GPU-LABEL: gpu.func @norm_and_cast
// GPU: %[[BID:.*]] = gpu.block_id x
// GPU: %[[GRID:.*]] = gpu.grid_dim x
// GPU: scf.for %{{.*}} = %[[BID]] to %{{.*}} step %[[GRID]] {
// GPU: vector.store {{.*}} vector<4xf32>
// GPU-NEXT: }
// GPU-NEXT: gpu.barrier
// GPU: arith.truncf {{.*}} : f32 to f16
// GPU: memref.store {{.*}} memref<1x1x64xf16
// GPU-NOT: scf.for %{{.*}} = %[[BID]]
// GPU: gpu.return

func.func @norm_and_cast(%x: tensor<2x8x64xf16>, %skip: tensor<2x8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf16>) {
  %0 = lmopt.cast %x : tensor<2x8x64xf16> -> tensor<2x8x64xf32>
  %out, %sum = lmopt.skip_layer_norm %0, %skip, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>)
  %1 = lmopt.cast %out : tensor<2x8x64xf32> -> tensor<2x8x64xf16>
  return %out, %1 : tensor<2x8x64xf32>, tensor<2x8x64xf16>
}

