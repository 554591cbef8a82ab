// REQUIRES: cuda-toolkit
// Reducing kernels: one row per block (grid = the rows, read from the
// leading dims of an operand), the row split over the block's 256 threads,
// each row statistic combined with warp shuffles (shfl.sync.bfly) and one
// shared-memory step, statistics in shared memory, no global allocation.
// Rows of a static length that is a multiple of 4 are read and written 4
// f32 at a time (ld/st.global.v4); other rows element by element.
// RUN: lmopt-cuda-kernel-test %s --print-launches | FileCheck %s --check-prefix=LAUNCH
// RUN: lmopt-cuda-kernel-test %s --print-gpu-ir | FileCheck %s --check-prefix=GPU
// RUN: lmopt-cuda-kernel-test %s --print-ptx | FileCheck %s --check-prefix=PTX

// LAUNCH: kernel layer_norm: operands 3 results 1 sizes 0 block 256 grid tensor 0 axes 1 units/block 1
// LAUNCH: kernel softmax: operands 1 results 1 sizes 0 block 256 grid tensor 0 axes 3 units/block 1
// LAUNCH: kernel skip_layer_norm: operands 4 results 2 sizes 0 block 256 grid tensor 0 axes 2 units/block 1
// LAUNCH: kernel rms_norm_dynamic: operands 2 results 1 sizes 2 block 256 grid tensor 0 axes 1 units/block 1

// GPU-LABEL: gpu.func @layer_norm
// GPU-SAME: workgroup(
// GPU-SAME: #gpu.address_space<workgroup>
// GPU-SAME: kernel
// GPU-NOT: memref.alloc
// GPU: %[[TID:.*]] = gpu.thread_id x
// GPU: %[[BID:.*]] = gpu.block_id x
// GPU: %[[GRID:.*]] = gpu.grid_dim x
// GPU: scf.for %[[ROW:.*]] = %[[BID]] to %{{.*}} step %[[GRID]]
// GPU: memref.subview %arg0[%[[ROW]], 0] [1, 96]
// GPU: scf.for %[[IV:.*]] = %[[TID]] to %c24 step %c256 iter_args
// GPU: %[[FIRST:.*]] = arith.muli %[[IV]], %c4
// GPU: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x96xf32, strided<[96, 1], offset: ?>>, vector<4xf32>
// GPU: gpu.shuffle xor
// GPU: gpu.barrier
// GPU-LABEL: gpu.func @softmax
// GPU: arith.maximumf
// GPU: gpu.shuffle xor
// GPU: math.exp
// GPU-LABEL: gpu.func @skip_layer_norm
// GPU-LABEL: gpu.func @rms_norm_dynamic
// GPU-SAME: (%arg0: memref<f32>, %arg1: memref<128xf32>, %arg2: memref<f32>, %arg3: index, %arg4: index)

// PTX: .target sm_90
// PTX-LABEL: .entry layer_norm(
// PTX: .shared
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
// PTX-LABEL: .entry softmax(
// PTX: shfl.sync.bfly.b32
// PTX-NOT: ld.global.v4
// PTX-LABEL: .entry skip_layer_norm(
// PTX: ld.global.v4.{{[bf]}}32

func.func @layer_norm(%x: tensor<6x96xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>) -> tensor<6x96xf32> {
  %0 = lmopt.layer_norm %x, %s, %b {epsilon = 1.0e-5 : f32} : (tensor<6x96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<6x96xf32>
  return %0 : tensor<6x96xf32>
}

func.func @softmax(%x: tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32> {
  %0 = lmopt.softmax %x : tensor<2x4x7x7xf32>
  return %0 : tensor<2x4x7x7xf32>
}

// Both results: the sum is a separate grid-stride loop in the same kernel.
func.func @skip_layer_norm(%x: tensor<2x3x64xf32>, %skip: tensor<2x3x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<2x3x64xf32>, tensor<2x3x64xf32>) {
  %0, %1 = lmopt.skip_layer_norm %x, %skip, %s, %b : (tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x3x64xf32>, tensor<2x3x64xf32>)
  return %0, %1 : tensor<2x3x64xf32>, tensor<2x3x64xf32>
}

// Run-time rows: dynamic buffers are bare pointers, their sizes index (i64)
// parameters after all the pointers, operands then results.
func.func @rms_norm_dynamic(%x: tensor<?x128xf32>, %s: tensor<128xf32>) -> tensor<?x128xf32> {
  %0 = lmopt.rms_norm %x, %s : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  return %0 : tensor<?x128xf32>
}

// f16 and bf16 rows (kernels of --quantize=fp16/bf16 models): the statistics
// are accumulated and shuffled in f32.
// LAUNCH: kernel layer_norm_f16: operands 3 results 1 sizes 0 block 256 grid tensor 0 axes 1 units/block 1
// LAUNCH: kernel softmax_bf16: operands 1 results 1 sizes 0 block 256 grid tensor 0 axes 1 units/block 1
// GPU-LABEL: gpu.func @layer_norm_f16
// GPU: arith.extf %{{.*}} : f16 to f32
// GPU: gpu.shuffle xor %{{.*}} : i32
// GPU: arith.truncf %{{.*}} : f32 to f16
// GPU-LABEL: gpu.func @softmax_bf16
// GPU: arith.extf %{{.*}} : bf16 to f32
func.func @layer_norm_f16(%x: tensor<6x96xf16>, %s: tensor<96xf16>, %b: tensor<96xf16>) -> tensor<6x96xf16> {
  %0 = lmopt.layer_norm %x, %s, %b {epsilon = 1.0e-5 : f32} : (tensor<6x96xf16>, tensor<96xf16>, tensor<96xf16>) -> tensor<6x96xf16>
  return %0 : tensor<6x96xf16>
}

func.func @softmax_bf16(%x: tensor<4x33xbf16>) -> tensor<4x33xbf16> {
  %0 = lmopt.softmax %x : tensor<4x33xbf16>
  return %0 : tensor<4x33xbf16>
}

// BERT-base rows, their number known at run time.
// PTX-LABEL: .entry layer_norm_768(
// PTX: ld.global.v4.{{[bf]}}32
// PTX: shfl.sync.bfly.b32
// PTX: ld.global.v4.{{[bf]}}32
// PTX: st.global.v4.{{[bf]}}32
// PTX-LABEL: .entry softmax_rows_16(
// PTX: ld.global.v4.{{[bf]}}32
// PTX: st.global.v4.{{[bf]}}32
// LAUNCH: kernel layer_norm_768: operands 3 results 1 sizes 2 block 256 grid tensor 0 axes 1 units/block 1
// GPU-LABEL: gpu.func @layer_norm_768
// GPU: vector.load %{{.*}} : memref<1x768xf32, strided<[768, 1], offset: ?>>, vector<4xf32>
// GPU: vector.load %{{.*}} : memref<768xf32>, vector<4xf32>
// GPU: vector.store %{{.*}} : memref<1x768xf32, strided<[768, 1], offset: ?>>, vector<4xf32>
func.func @layer_norm_768(%x: tensor<?x768xf32>, %s: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<?x768xf32> {
  %0 = lmopt.layer_norm %x, %s, %b {epsilon = 1.0e-12 : f32} : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  return %0 : tensor<?x768xf32>
}

// LAUNCH: kernel softmax_rows_16: operands 1 results 1 sizes 0 block 256 grid tensor 0 axes 3 units/block 1
func.func @softmax_rows_16(%x: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = lmopt.softmax %x : tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}
