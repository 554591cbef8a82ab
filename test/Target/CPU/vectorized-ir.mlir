// What the generated code looks like: AVX-512 vectors for elementwise loops
// and reductions, polynomial erf/exp/tanh instead of libm calls, vector
// width following the CPU, and an unknown CPU refused.
// RUN: lmopt-kernel-test %s --cpu=skylake-avx512 --print-llvm-ir | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: lmopt-kernel-test %s --cpu=x86-64 --print-llvm-ir | FileCheck %s --check-prefixes=CHECK,SSE
// RUN: lmopt-kernel-test %s --cpu=skylake-avx512 --print-llvm-ir | FileCheck %s --check-prefix=SOFTMAX
// RUN: not lmopt-kernel-test %s --cpu=not-a-cpu 2>&1 | FileCheck %s --check-prefix=CPU

// CPU: error: kernel code generation: LLVM does not know the CPU 'not-a-cpu'

// CHECK-NOT: @erff
// CHECK-NOT: @expf
// CHECK-NOT: @tanhf
// CHECK-LABEL: define {{.*}}@{{(__lmopt_kernel_impl\.)?}}bias_gelu(
// AVX512: fadd contract <16 x float>
// SSE: fadd contract <4 x float>
// CHECK: call <[[N:[0-9]+]] x float> @llvm.fma.v[[N]]f32(
func.func @bias_gelu(%x: tensor<8x256xf32>, %b: tensor<256xf32>) -> tensor<8x256xf32> {
  %0 = lmopt.add %x, %b : (tensor<8x256xf32>, tensor<256xf32>) -> tensor<8x256xf32>
  %1 = lmopt.gelu %0 : tensor<8x256xf32>
  return %1 : tensor<8x256xf32>
}

// The row sums of layer_norm vectorize as reassociated reductions; nothing
// else is reassociated.
// CHECK-LABEL: define {{.*}}@{{(__lmopt_kernel_impl\.)?}}layer_norm(
// AVX512: fadd reassoc contract <16 x float>
// AVX512: @llvm.vector.reduce.fadd.v16f32(
// SSE: fadd reassoc contract <4 x float>
func.func @layer_norm(%x: tensor<8x256xf32>, %s: tensor<256xf32>) -> tensor<8x256xf32> {
  %0 = lmopt.layer_norm %x, %s : (tensor<8x256xf32>, tensor<256xf32>) -> tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// Softmax: a max reduction, a polynomial exp, a sum. Its two results read
// nothing of each other, so both loops are split between threads and the
// body sits in an internal function that may come first in the module
// (hence a run of its own).
// CHECK-LABEL: define {{.*}}@{{(__lmopt_kernel_impl\.)?}}softmax_tanh(
// SOFTMAX: define {{.*}}@{{(__lmopt_kernel_impl\.)?}}softmax_tanh(
// SOFTMAX-NOT: define
// SOFTMAX: call {{.*}}float @llvm.vector.reduce.fmaximum.v16f32(
// SOFTMAX-NOT: define
// SOFTMAX: call {{.*}}float @llvm.vector.reduce.fadd.v16f32(
func.func @softmax_tanh(%x: tensor<8x256xf32>, %s: tensor<256xf32>) -> (tensor<8x256xf32>, tensor<8x256xf32>) {
  %0 = lmopt.softmax %x : tensor<8x256xf32>
  %1 = lmopt.tanh %x : tensor<8x256xf32>
  return %0, %1 : tensor<8x256xf32>, tensor<8x256xf32>
}
