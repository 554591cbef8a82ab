// RUN: lmopt-compile --help | FileCheck %s --check-prefix=HELP
// RUN: rm -rf %t && mkdir -p %t
// RUN: lmopt-compile %s --target=cpu -o %t/model.lmopt 2>/dev/null
// RUN: %lmopt_python %S/Inputs/read_bundle.py %t/model.lmopt | FileCheck %s

// `--help` lists the registered targets with what each does (the target
// registry, TargetBackend.h); the bundle's meta names the target that
// compiled it.

// HELP: --target=<string> {{.*}}- Target to compile for: cpu (library steps on oneDNN, kernels LLVM compiles for --cpu); cuda (NVIDIA GPUs: cuBLASLt matrix products, fused attention, kernels MLIR compiles for --cuda-arch)

// CHECK: meta {{.*}}"target": "cpu"}

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = lmopt.exp %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
