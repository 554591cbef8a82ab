//===- CudaTarget.h - The CUDA target ---------------------------*- C++ -*-===//
//
// `lmopt-compile --target=cuda`: matrix products and attention as library
// steps the runtime's CUDA device runs (cuBLASLt, its own fused attention),
// everything else as kernels generated through MLIR into one cubin
// (KernelCodegen.h), the plan on the GPU with the inputs and outputs copied
// between it and the host (docs/cuda-backend.md).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CUDA_CUDATARGET_H
#define LMOPT_TARGET_CUDA_CUDATARGET_H

#include "lmopt/Target/TargetBackend.h"

#include <memory>

namespace mlir::lmopt::cuda {

std::unique_ptr<TargetBackend> createCudaTargetBackend();

void registerCudaTargetBackend();

} // namespace mlir::lmopt::cuda

#endif // LMOPT_TARGET_CUDA_CUDATARGET_H
