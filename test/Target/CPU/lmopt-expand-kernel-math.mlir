// RUN: lmopt-opt %s --lmopt-expand-kernel-math --split-input-file | FileCheck %s

// Inputs are kernel loops after convert-linalg-to-loops and lower-affine.

// f32 exp becomes a polynomial (range reduction, an FMA chain, the exponent
// built in the integer bits), so it vectorizes with the loop.
// CHECK-LABEL: func.func @exp_loop
// CHECK: scf.for
// CHECK: %[[X:.*]] = memref.load
// CHECK-NOT: math.exp
// CHECK: math.floor
// CHECK: math.fma
// CHECK: %[[SCALE:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[R:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: memref.store %[[R]]
func.func @exp_loop(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %arg2 = %c0 to %c4 step %c1 {
    scf.for %arg3 = %c0 to %c8 step %c1 {
      %0 = memref.load %arg0[%arg2, %arg3] : memref<4x8xf32>
      %1 = math.exp %0 fastmath<contract> : f32
      memref.store %1, %arg1[%arg2, %arg3] : memref<4x8xf32>
    }
  }
  return
}

// -----

// Narrow floats are computed in f32: tanh on f16 is widened, approximated
// and rounded back.
// CHECK-LABEL: func.func @tanh_f16
// CHECK-SAME: %[[X:.*]]: f16
// CHECK: %[[W:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK: %[[N:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: return %[[N]]
func.func @tanh_f16(%arg0: f16) -> f16 {
  %0 = math.tanh %arg0 fastmath<contract> : f16
  return %0 : f16
}

// -----

// bf16 conversions become integer arithmetic: widening is a shift of the
// bits, narrowing rounds to nearest even (NaN kept) without __truncsfbf2.
// CHECK-LABEL: func.func @bf16_conversions
// CHECK-SAME: %[[B:.*]]: bf16, %[[F:.*]]: f32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[B]] : bf16 to i16
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[WIDE]], %{{.*}} : i32
// CHECK: %[[EXT:.*]] = arith.bitcast %[[SHIFTED]] : i32 to f32
// CHECK: %[[FBITS:.*]] = arith.bitcast %[[F]] : f32 to i32
// CHECK: arith.shrui %[[FBITS]], %{{.*}} : i32
// CHECK: %[[NARROW:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK: %[[SEL:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NARROW]] : i16
// CHECK: %[[TRUNC:.*]] = arith.bitcast %[[SEL]] : i16 to bf16
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return %[[EXT]], %[[TRUNC]]
func.func @bf16_conversions(%arg0: bf16, %arg1: f32) -> (f32, bf16) {
  %0 = arith.extf %arg0 : bf16 to f32
  %1 = arith.truncf %arg1 : f32 to bf16
  return %0, %1 : f32, bf16
}

// -----

// Math LLVM has instructions for, and f64 math, is left to
// convert-math-to-llvm and convert-math-to-libm.
// CHECK-LABEL: func.func @negative_sqrt_and_f64
// CHECK-SAME: %[[X:.*]]: f32, %[[Y:.*]]: f64
// CHECK: %[[S:.*]] = math.sqrt %[[X]] fastmath<contract> : f32
// CHECK: %[[E:.*]] = math.exp %[[Y]] : f64
// CHECK: %[[T:.*]] = math.erf %[[Y]] : f64
// CHECK: return %[[S]], %[[E]], %[[T]]
func.func @negative_sqrt_and_f64(%arg0: f32, %arg1: f64) -> (f32, f64, f64) {
  %0 = math.sqrt %arg0 fastmath<contract> : f32
  %1 = math.exp %arg1 : f64
  %2 = math.erf %arg1 : f64
  return %0, %1, %2 : f32, f64, f64
}
