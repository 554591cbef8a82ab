// Casts between floats and integers, f16 arithmetic (statistics in f32) and
// integer arithmetic, run against the reference evaluator. Each f16 value is
// rounded to f16 as the reference rounds it: an f32 -> f16 -> f32 round trip
// must not fold away. f16 results are widened to f32 in the kernel because
// the reference evaluator writes no f16 archives.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz arg0=4x40:float32 arg1=4x40:float16 arg2=4x40:int64 arg3=40:float16
// RUN: lmopt-interpret %s --function=casts --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-kernel-test %s --kernel=casts --inputs=%t.npz --compare=%t.ref.npz | FileCheck %s

// CHECK: result0: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: result1: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: result2: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: result3: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: result4: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: result5: shape [4, 40], {{.*}}: PASS
func.func @casts(%x: tensor<4x40xf32>, %h: tensor<4x40xf16>, %i: tensor<4x40xi64>, %s: tensor<40xf16>) -> (tensor<4x40xi32>, tensor<4x40xf32>, tensor<4x40xf32>, tensor<4x40xf32>, tensor<4x40xi64>, tensor<4x40xf32>) {
  %0 = lmopt.cast %x : tensor<4x40xf32> -> tensor<4x40xi32>
  %1 = lmopt.cast %i : tensor<4x40xi64> -> tensor<4x40xf32>
  %2 = lmopt.cast %x : tensor<4x40xf32> -> tensor<4x40xf16>
  %h2 = lmopt.cast %2 : tensor<4x40xf16> -> tensor<4x40xf32>
  %3 = lmopt.gelu %h : tensor<4x40xf16>
  %h3 = lmopt.cast %3 : tensor<4x40xf16> -> tensor<4x40xf32>
  %c = lmopt.cast %x : tensor<4x40xf32> -> tensor<4x40xi64>
  %4 = lmopt.sub %i, %c : (tensor<4x40xi64>, tensor<4x40xi64>) -> tensor<4x40xi64>
  %5 = lmopt.layer_norm %h, %s : (tensor<4x40xf16>, tensor<40xf16>) -> tensor<4x40xf16>
  %h5 = lmopt.cast %5 : tensor<4x40xf16> -> tensor<4x40xf32>
  return %0, %1, %h2, %h3, %4, %h5 : tensor<4x40xi32>, tensor<4x40xf32>, tensor<4x40xf32>, tensor<4x40xf32>, tensor<4x40xi64>, tensor<4x40xf32>
}
