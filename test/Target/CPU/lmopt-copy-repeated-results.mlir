// RUN: lmopt-opt %s --lmopt-copy-repeated-results --split-input-file | FileCheck %s

// Inputs are kernels after one-shot bufferization across function
// boundaries, before buffer-results-to-out-params.

// A value returned twice: the repeat becomes a copy into its own buffer, so
// that each result can become an out-param of its own.
// CHECK-LABEL: func.func @returned_twice
// CHECK: %[[ALLOC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK: linalg.generic {{.*}} outs(%[[ALLOC]] : memref<4x8xf32>)
// CHECK: %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK: memref.copy %[[ALLOC]], %[[COPY]] : memref<4x8xf32> to memref<4x8xf32>
// CHECK: return %[[ALLOC]], %[[COPY]] : memref<4x8xf32>, memref<4x8xf32>
func.func @returned_twice(%arg0: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) {
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : memref<4x8xf32>) outs(%alloc : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in fastmath<contract> : f32
    linalg.yield %0 : f32
  }
  return %alloc, %alloc : memref<4x8xf32>, memref<4x8xf32>
}

// -----

// With run-time sizes, each copy is sized like the returned buffer; a third
// return of the value gets a second copy.
// CHECK-LABEL: func.func @dynamic_returned_three_times
// CHECK: %[[ALLOC:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[ROWS:.*]] = memref.dim %[[ALLOC]], %[[C0]] : memref<?x8xf32>
// CHECK: %[[COPY1:.*]] = memref.alloc(%[[ROWS]]) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK: memref.copy %[[ALLOC]], %[[COPY1]]
// CHECK: %[[COPY2:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK: memref.copy %[[ALLOC]], %[[COPY2]]
// CHECK: return %[[ALLOC]], %[[COPY1]], %[[COPY2]]
func.func @dynamic_returned_three_times(%arg0: memref<?x8xf32>) -> (memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x8xf32>
  %alloc = memref.alloc(%dim) {alignment = 64 : i64} : memref<?x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : memref<?x8xf32>) outs(%alloc : memref<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in fastmath<contract> : f32
    linalg.yield %0 : f32
  }
  return %alloc, %alloc, %alloc : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
}

// -----

// Distinct buffers are left alone.
// CHECK-LABEL: func.func @negative_distinct
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>
// CHECK-NOT: memref.copy
// CHECK: return %[[A]], %[[B]] : memref<4xf32>, memref<4xf32>
func.func @negative_distinct(%arg0: memref<4xf32>, %arg1: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  return %arg0, %arg1 : memref<4xf32>, memref<4xf32>
}

// -----

// Only buffers are copied; a repeated scalar needs no storage.
// CHECK-LABEL: func.func @negative_scalar
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-NOT: memref.alloc
// CHECK: return %[[X]], %[[X]] : f32, f32
func.func @negative_scalar(%arg0: f32) -> (f32, f32) {
  return %arg0, %arg0 : f32, f32
}
