// REQUIRES: cuda-toolkit
// The payload's image is one sm_90 (or --sm) cubin holding every kernel
// under its function's name, and the payload parses as the runtime reads it.
// RUN: lmopt-cuda-kernel-test %s --cubin %t.sm90.cubin -o %t.payload
// RUN: llvm-readelf -h %t.sm90.cubin | FileCheck %s --check-prefix=ELF90
// RUN: llvm-readelf --symbols %t.sm90.cubin | FileCheck %s --check-prefix=SYMS
// RUN: lmopt-cuda-kernel-test %s --sm=80 --cubin %t.sm80.cubin
// RUN: llvm-readelf -h %t.sm80.cubin | FileCheck %s --check-prefix=ELF80
// RUN: od -A n -c -N 4 %t.payload | FileCheck %s --check-prefix=MAGIC

// ELF90: Machine: NVIDIA CUDA architecture
// ELF90: Flags: {{.*}}sm_90
// ELF80: Flags: {{.*}}sm_80
// SYMS-DAG: FUNC {{.*}} scale{{$}}
// SYMS-DAG: FUNC {{.*}} row_sum{{$}}
// MAGIC: L M C K

func.func @scale(%x: tensor<1000xf32>, %y: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = lmopt.mul %x, %y : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  return %0 : tensor<1000xf32>
}

func.func @row_sum(%x: tensor<5x300xf32>) -> tensor<5xf32> {
  %0 = lmopt.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : tensor<5x300xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
