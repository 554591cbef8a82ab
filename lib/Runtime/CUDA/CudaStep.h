//===- CudaStep.h - What the CUDA device's step executors share -*- C++ -*-===//
//
// The CUDA device (CudaDevice.cpp) owns the context, the stream, the
// cuBLASLt handle, the bundle's kernel module and the runtime's own kernels
// (lib/Runtime/CUDA/Kernels, compiled by nvcc when the runtime is built and
// embedded in it); each step executor enqueues its work on the session's one
// stream and never synchronizes, so that a whole run can be captured as one
// CUDA graph. Executors validate their step when they are built (messages
// "bundle '<source>': <kind> step '<name>': <what is wrong>", as the CPU's)
// and fail at run time only on a device error.
//
// Private to lib/Runtime/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_CUDASTEP_H
#define LMOPT_LIB_RUNTIME_CUDA_CUDASTEP_H

#include "CudaApi.h"

#include "lmopt/Runtime/Device.h"

#include <memory>

extern "C" {
/// The runtime's own kernels: the fatbin nvcc built from
/// Kernels/RuntimeKernels.cu, embedded (Kernels/CMakeLists.txt).
extern const unsigned char lmoptCudaRuntimeKernelsImage[];
extern const unsigned char lmoptCudaRuntimeKernelsImageEnd[];
}

namespace lmopt::runtime::cuda {

struct CudaStepEnv {
  const CudaApi &api;
  CUstream stream = nullptr;
  /// The runtime's own kernels (attention, gather, append, ...).
  CUmodule runtimeKernels = nullptr;
  cublasLtHandle_t cublasLt = nullptr;
  /// f32 matrix products may use TF32 tensor cores.
  bool allowTf32 = false;
  /// Compute capability, major * 10 + minor.
  int smVersion = 0;
  /// Streaming multiprocessors (grid sizing).
  int multiprocessors = 0;
};

} // namespace lmopt::runtime::cuda

#endif // LMOPT_LIB_RUNTIME_CUDA_CUDASTEP_H
