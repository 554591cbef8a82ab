// Casts between floats and integers, f16 arithmetic (statistics in f32) and
// integer arithmetic, run against the reference evaluator. Each f16 value is
// rounded to f16 as the reference rounds it: an f32 -> f16 -> f32 round trip
// must not fold away. f16 results are widened to f32 in the kernel because
// the reference evaluator writes no f16 archives.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=4x40:float32 input1=4x40:float16 input2=4x40:int64 input3=40:float16
// RUN: lmopt-interpret %s --function=casts --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-kernel-test %s --kernel=casts --inputs=%t.npz --compare=%t.ref.npz | FileCheck %s
// bf16 rounds through integer arithmetic, so a CPU without AVX-512 BF16
// (baseline x86-64) needs no `__truncsfbf2` from libgcc.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.bf.npz input0=4x32:float32 input1=32:float32
// RUN: lmopt-interpret %s --function=bf16_ops --inputs=%t.bf.npz --output=%t.bf.ref.npz
// RUN: lmopt-kernel-test %s --kernel=bf16_ops --inputs=%t.bf.npz --compare=%t.bf.ref.npz | FileCheck %s --check-prefix=BF16
// RUN: lmopt-kernel-test %s --kernel=bf16_ops --cpu=x86-64 --inputs=%t.bf.npz --compare=%t.bf.ref.npz | FileCheck %s --check-prefix=BF16

// CHECK: output0: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: output1: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: output2: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: output3: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: output4: shape [4, 40], {{.*}}: PASS
// CHECK-NEXT: output5: shape [4, 40], {{.*}}: PASS
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

// BF16: output0: shape [4, 32], {{.*}}: PASS
// BF16-NEXT: output1: shape [4, 32], {{.*}}: PASS
func.func @bf16_ops(%x: tensor<4x32xf32>, %s: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %xb = lmopt.cast %x : tensor<4x32xf32> -> tensor<4x32xbf16>
  %sb = lmopt.cast %s : tensor<32xf32> -> tensor<32xbf16>
  %n = lmopt.rms_norm %xb, %sb : (tensor<4x32xbf16>, tensor<32xbf16>) -> tensor<4x32xbf16>
  %g = lmopt.gelu %xb : tensor<4x32xbf16>
  %nf = lmopt.cast %n : tensor<4x32xbf16> -> tensor<4x32xf32>
  %gf = lmopt.cast %g : tensor<4x32xbf16> -> tensor<4x32xf32>
  return %nf, %gf : tensor<4x32xf32>, tensor<4x32xf32>
}
