//===- KernelCodegen.h - Generated CUDA kernels -----------------*- C++ -*-===//
//
// Turns outlined kernel functions (lmopt ops on ranked tensors, the same
// input contract as the CPU's lmopt/Target/CPU/KernelCodegen.h) into one
// cubin through upstream MLIR: convert-lmopt-to-linalg, fusion and
// bufferization (shared with the CPU), a mapping of each kernel's work onto
// GPU blocks and threads (rows to blocks, a row's elements to threads, row
// reductions across a block with warp shuffles; elementwise kernels one
// element per thread with a grid stride), the gpu dialect, NVVM, and the
// cubin ptxas makes for sm_<N> (gpu-module-to-binary). The result is the
// payload lmopt/Format/CudaKernels.h describes, launch contract included.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CUDA_KERNELCODEGEN_H
#define LMOPT_TARGET_CUDA_KERNELCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lmopt::cuda {

struct CudaCodegenOptions {
  /// Compute capability major * 10 + minor (90: sm_90).
  unsigned smVersion = 90;
  /// Optimization level of NVVM/ptxas, 0-3.
  unsigned optLevel = 3;
  /// The CUDA toolkit whose ptxas and libdevice compile the kernels; empty:
  /// $CUDA_HOME, else /usr/local/cuda (ptxas may also come from PATH).
  std::string toolkitPath;
  /// When set, the kernels in the gpu dialect, before NVVM, are printed
  /// here (tests check the mapping).
  llvm::raw_ostream *gpuIROutput = nullptr;
  /// When set, the PTX is printed here (tests check vectorized loads and
  /// shuffles).
  llvm::raw_ostream *ptxOutput = nullptr;
};

/// Compiles every `func.func` in `kernels` into the serialized
/// lmopt::runtime::CudaKernelPayload (lmopt/Format/CudaKernels.h), one
/// kernel per function, named as the function. Failures are diagnostics at
/// the offending op ("no CUDA lowering for 'lmopt.foo' in kernel 'k3' (node
/// 'x')"), all offenders reported; environment failures (no ptxas) are
/// diagnostics on the module naming what is missing. `kernels` is not
/// modified.
FailureOr<std::vector<uint8_t>>
compileCudaKernels(ModuleOp kernels, const CudaCodegenOptions &options);

} // namespace mlir::lmopt::cuda

#endif // LMOPT_TARGET_CUDA_KERNELCODEGEN_H
