// RUN: lmopt-opt %s --lmopt-lower-kernel-row-loops --split-input-file --verify-diagnostics | FileCheck %s

// Inputs are row loops of lmopt-tile-kernel-rows after bufferization,
// buffer-results-to-out-params and lmopt-annotate-kernel-args (row bodies
// cut down to one generic).

// A kernel that is one row loop: `part` and `parts` arguments, and the loop
// runs rows [total * part / parts, total * (part + 1) / parts) of the 2x4
// rows, each linear index split back into the two forall indices.
// CHECK-LABEL: func.func @partitioned_rows(
// CHECK-SAME: %[[X:arg[0-9]+]]: memref<2x4x64xf32> {{.*}}, %[[PART:arg[0-9]+]]: index, %[[PARTS:arg[0-9]+]]: index) attributes {lmopt.partitioned}
// CHECK: %[[TRIP0:.*]] = arith.ceildivui
// CHECK: %[[TRIP1:.*]] = arith.ceildivui
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[TRIP1]] : index
// CHECK: %[[B0:.*]] = arith.muli %[[TOTAL]], %[[PART]] : index
// CHECK: %[[BEGIN:.*]] = arith.divui %[[B0]], %[[PARTS]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[PART]], %{{.*}} : index
// CHECK: %[[E0:.*]] = arith.muli %[[TOTAL]], %[[NEXT]] : index
// CHECK: %[[END:.*]] = arith.divui %[[E0]], %[[PARTS]] : index
// CHECK: scf.for %[[IV:.*]] = %[[BEGIN]] to %[[END]] step
// CHECK: %[[POS1:.*]] = arith.remui %[[IV]], %[[TRIP1]] : index
// CHECK: %[[POS0:.*]] = arith.divui %[[IV]], %[[TRIP1]] : index
// CHECK: %[[OFF1:.*]] = arith.muli %[[POS1]], %{{.*}} : index
// CHECK: %[[J:.*]] = arith.addi %{{.*}}, %[[OFF1]] : index
// CHECK: %[[OFF0:.*]] = arith.muli %[[POS0]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.addi %{{.*}}, %[[OFF0]] : index
// CHECK: memref.subview %[[X]][%[[I]], %[[J]], 0] [1, 1, 64]
// CHECK-NOT: scf.forall
func.func @partitioned_rows(%arg0: memref<2x4x64xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg1: memref<2x4x64xf32> {llvm.align = 64 : i64, llvm.noalias}) {
  scf.forall (%arg2, %arg3) in (2, 4) {
    %subview = memref.subview %arg0[%arg2, %arg3, 0] [1, 1, 64] [1, 1, 1] : memref<2x4x64xf32> to memref<1x1x64xf32, strided<[256, 64, 1], offset: ?>>
    %subview_0 = memref.subview %arg1[%arg2, %arg3, 0] [1, 1, 64] [1, 1, 1] : memref<2x4x64xf32> to memref<1x1x64xf32, strided<[256, 64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%subview : memref<1x1x64xf32, strided<[256, 64, 1], offset: ?>>) outs(%subview_0 : memref<1x1x64xf32, strided<[256, 64, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      %0 = math.exp %in fastmath<contract> : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// Blocks of 8 rows: the trip count is ceil((16 - 0) / 8) and iteration k
// starts at row 0 + k * 8. The loop's temporaries are private to the call,
// so the kernel is still partitioned.
// CHECK-LABEL: func.func @partitioned_row_blocks(
// CHECK-SAME: %[[X:arg[0-9]+]]: memref<16x64xf32> {{.*}}, %[[PART:arg[0-9]+]]: index, %[[PARTS:arg[0-9]+]]: index) attributes {lmopt.partitioned}
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[SPAN:.*]] = arith.subi %[[C16]], %{{.*}} : index
// CHECK: %[[TRIP:.*]] = arith.ceildivui %[[SPAN]], %[[C8]] : index
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[OFF:.*]] = arith.muli %[[IV]], %[[C8]] : index
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: memref.subview %[[X]][%[[ROW]], 0] [8, 64]
func.func @partitioned_row_blocks(%arg0: memref<16x64xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg1: memref<16xf32> {llvm.align = 64 : i64, llvm.noalias}) {
  %cst = arith.constant 0.000000e+00 : f32
  scf.forall (%arg2) = (0) to (16) step (8) {
    %subview = memref.subview %arg0[%arg2, 0] [8, 64] [1, 1] : memref<16x64xf32> to memref<8x64xf32, strided<[64, 1], offset: ?>>
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
    linalg.fill ins(%cst : f32) outs(%alloc : memref<8xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%subview : memref<8x64xf32, strided<[64, 1], offset: ?>>) outs(%alloc : memref<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.addf %in, %out fastmath<reassoc,contract> : f32
      linalg.yield %0 : f32
    }
    %subview_0 = memref.subview %arg1[%arg2] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: ?>>
    memref.copy %alloc, %subview_0 : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
  }
  return
}

// -----

// A column mean computed before the loop writes memory every share would
// write again: the loop becomes a plain scf.for over all rows and the kernel
// gets no `part`/`parts`.
// CHECK-LABEL: func.func @negative_work_outside_the_loop(
// CHECK-SAME: %{{.*}}: memref<4x64xf32> {llvm.align = 64 : i64, llvm.noalias}) {
// CHECK: %[[TOTAL:.*]] = arith.muli
// CHECK: %[[BEGIN:.*]] = arith.constant 0 : index
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[TOTAL]] step
// CHECK-NOT: scf.forall
func.func @negative_work_outside_the_loop(%arg0: memref<4x64xf32> {llvm.align = 64 : i64, llvm.noalias}, %arg1: memref<4x64xf32> {llvm.align = 64 : i64, llvm.noalias}) {
  %cst = arith.constant 0.000000e+00 : f32
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.fill ins(%cst : f32) outs(%alloc : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%arg0 : memref<4x64xf32>) outs(%alloc : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc,contract> : f32
    linalg.yield %0 : f32
  }
  scf.forall (%arg2) in (4) {
    %subview = memref.subview %arg0[%arg2, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %subview_0 = memref.subview %arg1[%arg2, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%subview, %alloc : memref<1x64xf32, strided<[64, 1], offset: ?>>, memref<64xf32>) outs(%subview_0 : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %0 = arith.subf %in, %in_1 fastmath<contract> : f32
      linalg.yield %0 : f32
    }
  }
  memref.dealloc %alloc : memref<64xf32>
  return
}

// -----

// Two row loops: each becomes an scf.for over all its rows; a share of the
// rows of one is not a share of the other, so the kernel is not partitioned.
// CHECK-LABEL: func.func @negative_two_loops(
// CHECK-SAME: %{{.*}}: memref<4x64xf32>) {
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: scf.forall
func.func @negative_two_loops(%arg0: memref<4x64xf32>, %arg1: memref<4x64xf32>) {
  scf.forall (%arg2) in (4) {
    %subview = memref.subview %arg0[%arg2, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %subview_0 = memref.subview %arg1[%arg2, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %subview, %subview_0 : memref<1x64xf32, strided<[64, 1], offset: ?>> to memref<1x64xf32, strided<[64, 1], offset: ?>>
  }
  scf.forall (%arg2) in (4) {
    %subview = memref.subview %arg1[%arg2, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%subview : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%out: f32):
      %0 = math.exp %out fastmath<contract> : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// The same two loops in a function that lmopt-tile-kernel-rows marked as
// independent (neither reads what the other writes): both run their share
// of their own rows, with one `part` and one `parts`; the mark is consumed.
// CHECK-LABEL: func.func @independent_loops(
// CHECK-SAME: %{{.*}}: memref<4x64xf32>, %{{.*}}: memref<4x64xf32>, %{{.*}}: memref<8x64xf32>, %[[PART:arg[0-9]+]]: index, %[[PARTS:arg[0-9]+]]: index) attributes {lmopt.partitioned}
// CHECK: %[[B0:.*]] = arith.muli %{{.*}}, %[[PART]] : index
// CHECK: %[[BEGIN0:.*]] = arith.divui %[[B0]], %[[PARTS]] : index
// CHECK: scf.for %{{.*}} = %[[BEGIN0]] to %{{.*}} step
// CHECK: memref.copy
// CHECK: %[[B1:.*]] = arith.muli %{{.*}}, %[[PART]] : index
// CHECK: %[[BEGIN1:.*]] = arith.divui %[[B1]], %[[PARTS]] : index
// CHECK: scf.for %{{.*}} = %[[BEGIN1]] to %{{.*}} step
// CHECK: math.exp
// CHECK-NOT: scf.forall
func.func @independent_loops(%arg0: memref<4x64xf32>, %arg1: memref<4x64xf32>, %arg2: memref<8x64xf32>) attributes {lmopt.independent_row_loops} {
  scf.forall (%arg3) in (4) {
    %subview = memref.subview %arg0[%arg3, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %subview_0 = memref.subview %arg1[%arg3, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %subview, %subview_0 : memref<1x64xf32, strided<[64, 1], offset: ?>> to memref<1x64xf32, strided<[64, 1], offset: ?>>
  }
  scf.forall (%arg3) in (8) {
    %subview = memref.subview %arg2[%arg3, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%subview : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%out: f32):
      %0 = math.exp %out fastmath<contract> : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// Independent loops after a producer that both read, computed once outside
// them: a share of the loops would not have it, so nothing is partitioned.
// CHECK-LABEL: func.func @negative_independent_loops_after_shared_work(
// CHECK-SAME: %{{.*}}: memref<4x64xf32>, %{{.*}}: memref<4x64xf32>, %{{.*}}: memref<4x64xf32>) {
// CHECK: linalg.generic
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NOT: scf.forall
func.func @negative_independent_loops_after_shared_work(%arg0: memref<4x64xf32>, %arg1: memref<4x64xf32>, %arg2: memref<4x64xf32>) attributes {lmopt.independent_row_loops} {
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : memref<4x64xf32>) outs(%alloc : memref<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in fastmath<contract> : f32
    linalg.yield %0 : f32
  }
  scf.forall (%arg3) in (4) {
    %subview = memref.subview %alloc[%arg3, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %subview_0 = memref.subview %arg1[%arg3, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %subview, %subview_0 : memref<1x64xf32, strided<[64, 1], offset: ?>> to memref<1x64xf32, strided<[64, 1], offset: ?>>
  }
  scf.forall (%arg3) in (4) {
    %subview = memref.subview %alloc[%arg3, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %subview_0 = memref.subview %arg2[%arg3, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %subview, %subview_0 : memref<1x64xf32, strided<[64, 1], offset: ?>> to memref<1x64xf32, strided<[64, 1], offset: ?>>
  }
  memref.dealloc %alloc : memref<4x64xf32>
  return
}

// -----

// A scalar condition every loop reads (a gradient accumulation's
// `accumulate > 0`), computed before the loops into the call's own buffer:
// each share computes it again, and the loops are partitioned.
// CHECK-LABEL: func.func @independent_loops_after_private_scalar(
// CHECK-SAME: %[[PART:arg[0-9]+]]: index, %[[PARTS:arg[0-9]+]]: index) attributes {lmopt.partitioned}
// CHECK: memref.alloca() : memref<i1>
// CHECK: arith.cmpf
// CHECK: arith.divui %{{.*}}, %[[PARTS]] : index
// CHECK: scf.for
// CHECK: arith.divui %{{.*}}, %[[PARTS]] : index
// CHECK: scf.for
func.func @independent_loops_after_private_scalar(%arg0: memref<f32>, %arg1: memref<4x64xf32>, %arg2: memref<4x64xf32>, %arg3: memref<8x64xf32>) attributes {lmopt.independent_row_loops} {
  %cst = arith.constant 0.000000e+00 : f32
  %alloca = memref.alloca() : memref<i1>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%arg0 : memref<f32>) outs(%alloca : memref<i1>) {
  ^bb0(%in: f32, %out: i1):
    %0 = arith.cmpf ogt, %in, %cst : f32
    linalg.yield %0 : i1
  }
  scf.forall (%arg4) in (4) {
    %subview = memref.subview %arg1[%arg4, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %subview_0 = memref.subview %arg2[%arg4, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%alloca, %subview : memref<i1>, memref<1x64xf32, strided<[64, 1], offset: ?>>) outs(%subview_0 : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: i1, %in_1: f32, %out: f32):
      %0 = arith.select %in, %in_1, %cst : f32
      linalg.yield %0 : f32
    }
  }
  scf.forall (%arg4) in (8) {
    %subview = memref.subview %arg3[%arg4, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%alloca : memref<i1>) outs(%subview : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: i1, %out: f32):
      %0 = arith.select %in, %out, %cst : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// The same scalar read from an argument that a loop writes in place of
// another (lmopt.in_place_args pairs %arg0 with %arg2): a share could read
// it after another share's loop wrote it, so nothing is partitioned.
// CHECK-LABEL: func.func @negative_private_scalar_reads_written_state(
// CHECK-SAME: %{{.*}}: memref<4x64xf32>, %{{.*}}: memref<4x64xf32>) attributes {lmopt.in_place_args = array<i64: 0, 2>} {
func.func @negative_private_scalar_reads_written_state(%arg0: memref<4x64xf32>, %arg1: memref<4x64xf32>, %arg2: memref<4x64xf32>, %arg3: memref<4x64xf32>) attributes {lmopt.independent_row_loops, lmopt.in_place_args = array<i64: 0, 2>} {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %alloca = memref.alloca() : memref<f32>
  %sub = memref.subview %arg0[0, 0] [1, 1] [1, 1] : memref<4x64xf32> to memref<f32, strided<[], offset: 0>>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%sub : memref<f32, strided<[], offset: 0>>) outs(%alloca : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  scf.forall (%arg4) in (4) {
    %subview = memref.subview %arg1[%arg4, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %subview_0 = memref.subview %arg2[%arg4, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%alloca, %subview : memref<f32>, memref<1x64xf32, strided<[64, 1], offset: ?>>) outs(%subview_0 : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %0 = arith.addf %in, %in_1 : f32
      linalg.yield %0 : f32
    }
  }
  scf.forall (%arg4) in (4) {
    %subview = memref.subview %arg3[%arg4, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%subview : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%out: f32):
      %0 = arith.addf %out, %cst : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// Without a row loop nothing changes.
// CHECK-LABEL: func.func @negative_no_row_loop(
// CHECK-SAME: %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) {
// CHECK-NEXT: memref.copy
func.func @negative_no_row_loop(%arg0: memref<4xf32>, %arg1: memref<4xf32>) {
  memref.copy %arg0, %arg1 : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Before bufferization the rows insert into tensors: nothing to lower yet.
func.func @tensor_row_loop(%arg0: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = tensor.empty() : tensor<4x64xf32>
  // expected-error @+1 {{'scf.forall' op has 1 tensor result(s): lmopt-lower-kernel-row-loops lowers row loops on buffers, after bufferization}}
  %1 = scf.forall (%arg1) in (4) shared_outs(%arg2 = %0) -> (tensor<4x64xf32>) {
    %extracted_slice = tensor.extract_slice %arg0[%arg1, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %extracted_slice into %arg2[%arg1, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<4x64xf32>
    }
  }
  return %1 : tensor<4x64xf32>
}
