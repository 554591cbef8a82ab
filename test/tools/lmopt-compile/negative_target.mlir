// RUN: rm -rf %t && mkdir -p %t
// RUN: not lmopt-compile %s --target=tpu -o %t/model.lmopt 2>&1 | FileCheck %s --check-prefix=TPU
// RUN: not lmopt-compile %s -O7 -o %t/model.lmopt 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not lmopt-compile %s 2>&1 | FileCheck %s --check-prefix=NO-OUTPUT
// RUN: not lmopt-compile %s --target=cuda --cuda-arch=sm_5 -o %t/model.lmopt 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not lmopt-compile %s --target=cuda --cuda-arch=gfx90a -o %t/model.lmopt 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: ls %t | count 0

// A target that is not registered is refused before anything is read, with
// the list of those that are (TargetBackend.h); so is a GPU architecture
// lmopt does not compile for.

// TPU: error: unknown target 'tpu'; registered targets: cpu, cuda
// OPT: error: unknown optimization level -O7; use -O0 to -O3
// NO-OUTPUT: error: no output file; pass -o model.lmopt (or --dump-plan)
// ARCH: error: --cuda-arch: '{{.*}}' is not a GPU architecture lmopt compiles for; use sm_75 or newer, e.g. sm_90

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = lmopt.exp %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
