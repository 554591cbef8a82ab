// REQUIRES: cuda-toolkit
// Kernels whose big loop reads a temporary an earlier loop wrote. When the
// earlier loops only make small static buffers (at most 1024 elements, at
// most 4096 iterations) every block recomputes them into its own shared
// memory, a barrier follows, and the big loop spreads over the grid; results
// those loops write go out from block 0 only. Otherwise the kernel falls back
// to one block ("axes 0").
// RUN: lmopt-cuda-kernel-test %s --print-launches | FileCheck %s --check-prefix=LAUNCH
// RUN: lmopt-cuda-kernel-test %s --print-gpu-ir | FileCheck %s --check-prefix=GPU

// Spread over the grid after a prologue:
// LAUNCH: kernel mask_expand: operands 6 results 2 sizes 8 block 256 grid tensor 7 axes 4 units/block 256
// LAUNCH: kernel center_cols: operands 1 results 1 sizes 0 block 256 grid tensor 0 axes 1 units/block 1
// One block: the column means take 16384 iterations, 2048 elements.
// LAUNCH: kernel center_cols_large: operands 1 results 1 sizes 0 block 256 grid tensor 0 axes 0 units/block 1
// LAUNCH: kernel center_cols_wide: operands 1 results 1 sizes 0 block 256 grid tensor 0 axes 0 units/block 1
// One block, all a small kernel needs: nothing but small loops.
// LAUNCH: kernel dims_of: operands 1 results 1 sizes 2 block 256 grid tensor 0 axes 0 units/block 1

// The BERT attention mask (k8 of test/models/onnx/bert.onnx): the shape
// result is stored by thread 0 of block 0; the concatenated dims go to
// shared memory in every block, then a barrier; the mask is a grid-stride
// loop with no barrier after it.
// GPU-LABEL: gpu.func @mask_expand
// GPU-SAME: workgroup(%[[DIMS:.*]] : memref<4xi64, #gpu.address_space<workgroup>>)
// GPU: %[[TID:.*]] = gpu.thread_id x
// GPU: %[[BID:.*]] = gpu.block_id x
// GPU: %[[GRID:.*]] = gpu.grid_dim x
// GPU: %[[B0:.*]] = arith.cmpi eq, %[[BID]], %c0
// GPU: %[[T0:.*]] = arith.cmpi eq, %[[TID]], %c0
// GPU: %[[FIRST:.*]] = arith.andi %[[B0]], %[[T0]]
// GPU: scf.if %[[FIRST]] {
// GPU-NEXT: memref.store %{{.*}}, %arg6[%c0] : memref<4xi64>
// GPU: memref.subview %[[DIMS]][3] [1] [1]
// GPU: scf.for %{{.*}} = %[[TID]] to %c1 step %c256
// GPU: gpu.barrier
// GPU: %[[START0:.*]] = arith.muli %[[BID]], %c256
// GPU: %[[START:.*]] = arith.addi %[[START0]], %[[TID]]
// GPU: %[[STRIDE:.*]] = arith.muli %[[GRID]], %c256
// GPU: scf.for %{{.*}} = %[[START]] to %{{.*}} step %[[STRIDE]]
// GPU: arith.andi
// GPU: memref.store
// GPU-NOT: gpu.barrier
// GPU: gpu.return

// Column means into shared memory in every block (block-stride loops, a
// barrier after each), then the rows over the grid.
// GPU-LABEL: gpu.func @center_cols
// GPU-SAME: workgroup(%[[MEANS:.*]] : memref<32xf32, #gpu.address_space<workgroup>>)
// GPU: %[[TID:.*]] = gpu.thread_id x
// GPU: %[[BID:.*]] = gpu.block_id x
// GPU: %[[GRID:.*]] = gpu.grid_dim x
// GPU: scf.for %{{.*}} = %[[TID]] to %c32 step %c256
// GPU: gpu.barrier
// GPU: scf.for %{{.*}} = %[[TID]] to %c32 step %c256
// GPU: scf.for %{{.*}} = %c0 to %c64 step %c1
// GPU: memref.store %{{.*}}, %[[MEANS]]
// GPU: gpu.barrier
// GPU: scf.for %{{.*}} = %[[BID]] to %c64 step %[[GRID]]

// One block: the code reads no block id.
// GPU-LABEL: gpu.func @center_cols_large
// GPU-NOT: gpu.block_id
// GPU-LABEL: gpu.func @dims_of
// GPU-NOT: gpu.block_id
// GPU: gpu.return

func.func @mask_expand(%ids: tensor<?x1x1x?xi64>, %a: tensor<1x1x?x1xi1>, %m: tensor<?x1x1x?xi1>, %d0: tensor<1xi64>, %d2: tensor<1xi64>, %d3: tensor<1xi64>) -> (tensor<4xi64>, tensor<?x1x?x?xi1>) {
  %cst = arith.constant dense<-1> : tensor<1xi64>
  %cst_0 = arith.constant dense<-1> : tensor<4xi64>
  %cst_1 = arith.constant dense<1> : tensor<4xi64>
  %0 = lmopt.shape %ids : tensor<?x1x1x?xi64> -> tensor<4xi64>
  %1 = lmopt.and %a, %m : (tensor<1x1x?x1xi1>, tensor<?x1x1x?xi1>) -> tensor<?x1x?x?xi1>
  %2 = lmopt.concat %d0, %cst, %d2, %d3 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %3 = lmopt.equal %2, %cst_0 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %4 = lmopt.where %3, %cst_1, %2 : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %5 = lmopt.expand %1, %4 : (tensor<?x1x?x?xi1>, tensor<4xi64>) -> tensor<?x1x?x?xi1>
  return %0, %5 : tensor<4xi64>, tensor<?x1x?x?xi1>
}

func.func @center_cols(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = lmopt.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<64x32xf32> -> tensor<1x32xf32>
  %1 = lmopt.sub %x, %0 : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  return %1 : tensor<64x32xf32>
}

func.func @center_cols_large(%x: tensor<512x32xf32>) -> tensor<512x32xf32> {
  %0 = lmopt.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<512x32xf32> -> tensor<1x32xf32>
  %1 = lmopt.sub %x, %0 : (tensor<512x32xf32>, tensor<1x32xf32>) -> tensor<512x32xf32>
  return %1 : tensor<512x32xf32>
}

func.func @center_cols_wide(%x: tensor<2x2048xf32>) -> tensor<2x2048xf32> {
  %0 = lmopt.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<2x2048xf32> -> tensor<1x2048xf32>
  %1 = lmopt.sub %x, %0 : (tensor<2x2048xf32>, tensor<1x2048xf32>) -> tensor<2x2048xf32>
  return %1 : tensor<2x2048xf32>
}

func.func @dims_of(%x: tensor<?x?x192xf32>) -> tensor<4xi64> {
  %cst = arith.constant dense<[4, 16]> : tensor<2xi64>
  %0 = lmopt.shape %x {end = 2 : i64} : tensor<?x?x192xf32> -> tensor<2xi64>
  %1 = lmopt.concat %0, %cst {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  return %1 : tensor<4xi64>
}
