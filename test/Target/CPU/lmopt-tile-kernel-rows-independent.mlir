// RUN: lmopt-opt %s --lmopt-tile-kernel-rows=independent-roots --split-input-file | FileCheck %s
// RUN: lmopt-opt %s --lmopt-tile-kernel-rows --split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: lmopt-opt %s --lmopt-tile-kernel-rows=independent-roots --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=CANON

// Inputs are linalg on tensors after lmopt-fuse-kernel-ops, canonicalization,
// CSE and lmopt-relax-kernel-floats, as the CPU kernel pipeline runs them.

// Two results that do not read each other: one loop each, over the rows of
// each result (the transposing cast reads a column of its operand per row),
// and the function is marked so that both loops can be split between
// threads. Without the option, kernels without a reduction keep their loop
// nests.
// CHECK-LABEL: func.func @two_elementwise_roots
// CHECK-SAME: attributes {lmopt.independent_row_loops}
// CHECK: %[[A:.*]] = scf.forall (%[[I:.*]]) in (32) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<32x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x64xf32>) outs(%{{.*}} : tensor<1x64xf32>)
// CHECK: math.exp
// CHECK: %[[B:.*]] = scf.forall (%[[J:.*]]) in (64) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<64x32xbf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<32x1xf32>) outs(%{{.*}} : tensor<1x32xbf16>)
// CHECK: arith.truncf
// CHECK: return %[[A]], %[[B]]
// DEFAULT-LABEL: func.func @two_elementwise_roots
// DEFAULT-NOT: lmopt.independent_row_loops
// DEFAULT-NOT: scf.forall
func.func @two_elementwise_roots(%arg0: tensor<32x64xf32>, %arg1: tensor<32x64xf32>) -> (tensor<32x64xf32>, tensor<64x32xbf16>) {
  %0 = tensor.empty() : tensor<32x64xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.exp %in fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<32x64xf32>
  %2 = tensor.empty() : tensor<64x32xbf16>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<32x64xf32>) outs(%2 : tensor<64x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %4 = arith.truncf %in : f32 to bf16
    linalg.yield %4 : bf16
  } -> tensor<64x32xbf16>
  return %1, %3 : tensor<32x64xf32>, tensor<64x32xbf16>
}

// -----

// A rank-1 elementwise root: blocks of flat-tile (4096) elements.
// CHECK-LABEL: func.func @flat_blocks
// DEFAULT-LABEL: func.func @flat_blocks
// CHECK-SAME: attributes {lmopt.independent_row_loops}
// CHECK: scf.forall (%[[I:.*]]) = (0) to (10000) step (4096)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<?xf32>) outs(%{{.*}} : tensor<?xf32>)
func.func @flat_blocks(%arg0: tensor<10000xf32>) -> tensor<10000xf32> {
  %0 = tensor.empty() : tensor<10000xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<10000xf32>) outs(%0 : tensor<10000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.mulf %in, %in fastmath<contract> : f32
    linalg.yield %2 : f32
  } -> tensor<10000xf32>
  return %1 : tensor<10000xf32>
}

// -----

// A bias gradient: the column sum of a gradient that is also returned. The
// loop runs over blocks of 64 columns, the elementwise producer computes
// the block's columns of every row inside it and leaves the loop as its
// second result.
// CHECK-LABEL: func.func @column_sum_with_returned_producer
// CHECK-SAME: attributes {lmopt.independent_row_loops}
// CHECK: %[[LOOP:.*]]:2 = scf.forall (%[[J:.*]]) = (0) to (256) step (64) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<256xf32>, tensor<128x256xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, %[[J]]] [128, 64] [1, 1]
// CHECK: %[[GRAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<128x64xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[GRAD]] : tensor<128x64xf32>) outs(%{{.*}} : tensor<64xf32>)
// CHECK-NOT: scf.forall (
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#0
func.func @column_sum_with_returned_producer(%arg0: tensor<128x256xf32>, %arg1: tensor<128x256xf32>) -> (tensor<128x256xf32>, tensor<256xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<128x256xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<128x256xf32>, tensor<128x256xf32>) outs(%0 : tensor<128x256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.mulf %in, %in_0 fastmath<contract> : f32
    linalg.yield %5 : f32
  } -> tensor<128x256xf32>
  %2 = tensor.empty() : tensor<256xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<256xf32>) -> tensor<256xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%1 : tensor<128x256xf32>) outs(%3 : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %5 : f32
  } -> tensor<256xf32>
  return %1, %4 : tensor<128x256xf32>, tensor<256xf32>
}

// -----

// Two column sums of one width (a layer norm's weight and bias gradients)
// start from one zero fill after CSE. Each loop gets a fill of its own,
// inside it, so nothing is left outside the loops (before, the shared fill
// stayed outside, and bufferization filled one result and copied it into
// the other, which kept the kernel from being split between threads).
// CHECK-LABEL: func.func @two_column_sums_one_fill
// CHECK-SAME: attributes {lmopt.independent_row_loops}
// CHECK-NOT: linalg.fill
// CHECK: %[[A:.*]] = scf.forall (%[[I:.*]]) = (0) to (256) step (64)
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<128x64xf32>)
// CHECK: %[[B:.*]] = scf.forall (%[[J:.*]]) = (0) to (256) step (64)
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<128x64xf32>)
// CHECK: return %[[A]], %[[B]]
func.func @two_column_sums_one_fill(%arg0: tensor<128x256xf32>, %arg1: tensor<128x256xf32>) -> (tensor<256xf32>, tensor<256xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<256xf32>) -> tensor<256xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<128x256xf32>) outs(%1 : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %4 : f32
  } -> tensor<256xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%arg1 : tensor<128x256xf32>) outs(%1 : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %4 : f32
  } -> tensor<256xf32>
  return %2, %3 : tensor<256xf32>, tensor<256xf32>
}

// -----

// A column sum cast to bf16: the rank-1 cast reads a column reduction, so
// its loop takes blocks of 64 columns (not 8 rows) and the sum is computed
// per block inside it.
// CHECK-LABEL: func.func @cast_of_column_sum
// CHECK: scf.forall (%[[J:.*]]) = (0) to (256) step (64)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<128x64xf32>) outs(%{{.*}} : tensor<64xf32>)
// CHECK: arith.truncf
func.func @cast_of_column_sum(%arg0: tensor<128x256xf32>) -> tensor<256xbf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<256xf32>) -> tensor<256xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<128x256xf32>) outs(%1 : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %5 : f32
  } -> tensor<256xf32>
  %3 = tensor.empty() : tensor<256xbf16>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%2 : tensor<256xf32>) outs(%3 : tensor<256xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %5 = arith.truncf %in : f32 to bf16
    linalg.yield %5 : bf16
  } -> tensor<256xbf16>
  return %4 : tensor<256xbf16>
}

// -----

// Two results that read one intermediate: it is not fused into either loop
// (the other would read it), so it stays before both, computed once.
// CHECK-LABEL: func.func @negative_shared_producer
// CHECK: %[[SHARED:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64xf32>)
// CHECK: math.exp
// CHECK: scf.forall {{.*}} in (8)
// CHECK: tensor.extract_slice %[[SHARED]]
// CHECK: scf.forall {{.*}} in (8)
// CHECK: tensor.extract_slice %[[SHARED]]
func.func @negative_shared_producer(%arg0: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = tensor.empty() : tensor<8x64xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<8x64xf32>) outs(%0 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.exp %in fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<8x64xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<8x64xf32>) outs(%0 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %in fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<8x64xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<8x64xf32>) outs(%0 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.mulf %in, %in fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<8x64xf32>
  return %2, %3 : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// A result read by another result through a reshape is no root of its own:
// a loop of its own would write what the other loop reads. It keeps its
// loop nest, before the reader's loop.
// CHECK-LABEL: func.func @negative_result_read_through_reshape
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[A]]
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[R]]
func.func @negative_result_read_through_reshape(%arg0: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x2x32xf32>) {
  %0 = tensor.empty() : tensor<8x64xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<8x64xf32>) outs(%0 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.exp %in fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<8x64xf32>
  %expanded = tensor.expand_shape %1 [[0], [1, 2]] output_shape [8, 2, 32] : tensor<8x64xf32> into tensor<8x2x32xf32>
  %2 = tensor.empty() : tensor<8x2x32xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<8x2x32xf32>) outs(%2 : tensor<8x2x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %in fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<8x2x32xf32>
  return %1, %3 : tensor<8x64xf32>, tensor<8x2x32xf32>
}

// -----

// A scalar result has no loop to share out: unchanged, unmarked.
// CHECK-LABEL: func.func @negative_scalar
// CHECK-NOT: lmopt.independent_row_loops
// CHECK-NOT: scf.forall (
// CHECK: return
func.func @negative_scalar(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = tensor.empty() : tensor<f32>
  %1 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%arg0 : tensor<f32>) outs(%0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = math.exp %in fastmath<contract> : f32
    linalg.yield %2 : f32
  } -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A bias gradient accumulated into its state: the runtime writes the result
// in place of %arg1. The column sum and the result shared one empty; the
// result starts from an allocation of its own and the sum's block from an
// empty of its own, so no temporary is computed in the result's buffer,
// where it would overwrite the state before the addition reads it. 32
// columns take two blocks of 16 rather than one of 64: a loop of one
// iteration would be inlined, and the kernel not split.
// CHECK-LABEL: func.func @accumulate_into_result
// CHECK: %[[OUT:.*]] = bufferization.alloc_tensor() : tensor<32xf32>
// CHECK: scf.forall (%{{.*}}) = (0) to (32) step (16) shared_outs(%{{.*}} = %[[OUT]])
// CANON-LABEL: func.func @accumulate_into_result
// CANON: %[[OUT:.*]] = bufferization.alloc_tensor() : tensor<32xf32>
// CANON: scf.forall (%{{.*}}) = (0) to (32) step (16) shared_outs(%[[SHARED:.*]] = %[[OUT]])
// CANON: %[[TMP:.*]] = tensor.empty() : tensor<16xf32>
// CANON: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[TMP]] : tensor<16xf32>)
// CANON: %[[SUM:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x16xf32>) outs(%[[ZERO]] : tensor<16xf32>)
// CANON: %[[SLICE:.*]] = tensor.extract_slice %[[SHARED]]
// CANON: linalg.generic {{.*}} ins(%{{.*}}, %[[SUM]] : tensor<16xf32>, tensor<16xf32>) outs(%[[SLICE]] : tensor<16xf32>)
// DEFAULT-LABEL: func.func @accumulate_into_result
// DEFAULT-NOT: bufferization.alloc_tensor
func.func @accumulate_into_result(%arg0: tensor<4x32xf32>, %arg1: tensor<32xf32>) -> tensor<32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32xf32>) -> tensor<32xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<4x32xf32>) outs(%1 : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %4 : f32
  } -> tensor<32xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg1, %2 : tensor<32xf32>, tensor<32xf32>) outs(%0 : tensor<32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<32xf32>
  return %3 : tensor<32xf32>
}

// -----

// A scalar accumulated into its state: nothing to tile, but the result
// still starts from an allocation of its own, so that once CSE merges the
// two empties the sum is not computed in the result's buffer.
// CANON-LABEL: func.func @scalar_accumulate_into_result
// CANON-DAG: %[[OUT:.*]] = bufferization.alloc_tensor() : tensor<f32>
// CANON-DAG: %[[TMP:.*]] = tensor.empty() : tensor<f32>
// CANON: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[TMP]] : tensor<f32>)
// CANON: %[[SUM:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<64xf32>) outs(%[[ZERO]] : tensor<f32>)
// CANON: linalg.generic {{.*}} ins(%{{.*}}, %[[SUM]] : tensor<f32>, tensor<f32>) outs(%[[OUT]] : tensor<f32>)
func.func @scalar_accumulate_into_result(%arg0: tensor<64xf32>, %arg1: tensor<f32>) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<f32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<f32>) -> tensor<f32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%arg0 : tensor<64xf32>) outs(%1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %4 : f32
  } -> tensor<f32>
  %3 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%arg1, %2 : tensor<f32>, tensor<f32>) outs(%0 : tensor<f32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 fastmath<contract> : f32
    linalg.yield %4 : f32
  } -> tensor<f32>
  return %3 : tensor<f32>
}

// -----

// A negative-step slice reads its input backwards (`-d0 + 18`): tiling would
// slice that input through the map into a wrong tile (ONNX's
// test_slice_neg_steps), so the root keeps its loop nest.
// CHECK-LABEL: func.func @reversed_read_not_tiled
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<19x3x2xf32>) outs(%{{.*}} : tensor<19x3x2xf32>)
func.func @reversed_read_not_tiled(%arg0: tensor<20x10x5xf32>) -> tensor<19x3x2xf32> {
  %s = tensor.extract_slice %arg0[1, 3, 2] [19, 3, 2] [1, 3, 2] : tensor<20x10x5xf32> to tensor<19x3x2xf32>
  %0 = tensor.empty() : tensor<19x3x2xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (-d0 + 18, -d1 + 2, -d2 + 1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<19x3x2xf32>) outs(%0 : tensor<19x3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<19x3x2xf32>
  return %1 : tensor<19x3x2xf32>
}
