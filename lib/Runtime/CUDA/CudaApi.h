//===- CudaApi.h - The CUDA driver and cuBLASLt, loaded at run time -*- C++ -*-===//
//
// The runtime links no CUDA library: the driver (libcuda.so.1) and cuBLASLt
// (libcublasLt.so.13) are opened with dlopen when a session first asks for
// the `cuda` device, so the runtime builds, links and runs its tests on
// machines without a GPU. The toolkit's headers give the types and the
// versioned symbol names (cuda.h maps cuMemAlloc to cuMemAlloc_v2, and so
// on); each entry point below is looked up under the name its macro expands
// to.
//
// Private to lib/Runtime/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_CUDAAPI_H
#define LMOPT_LIB_RUNTIME_CUDA_CUDAAPI_H

#include "lmopt/Format/Status.h"

#include <cublasLt.h>
#include <cuda.h>

#include <string>

namespace lmopt::runtime::cuda {

// X(name): a driver entry point, looked up as what `name` expands to.
#define LMOPT_CUDA_DRIVER_FUNCTIONS(X)                                         \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuMemGetInfo)                                                              \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemHostAlloc)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyDtoD)                                                              \
  X(cuMemcpyAsync)                                                             \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemcpy2DAsync)                                                           \
  X(cuMemsetD8)                                                                \
  X(cuMemsetD8Async)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphDestroy)                                                            \
  X(cuGraphExecDestroy)                                                        \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)

// X(name): a cuBLASLt entry point (its symbols are not versioned).
#define LMOPT_CUBLASLT_FUNCTIONS(X)                                            \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtGetVersion)                                                        \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtMatmul)                                                            \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)

/// The loaded entry points. Each member has the type of the function its
/// header declares.
struct CudaApi {
#define LMOPT_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  LMOPT_CUDA_DRIVER_FUNCTIONS(LMOPT_CUDA_MEMBER)
  LMOPT_CUBLASLT_FUNCTIONS(LMOPT_CUDA_MEMBER)
#undef LMOPT_CUDA_MEMBER

  /// The driver's version (cuDriverGetVersion: 1000 * major + 10 * minor).
  int driverVersion = 0;

  /// "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string describe(const char *what, CUresult result) const;
  std::string describe(const char *what, cublasStatus_t status) const;
  /// Status::ok() for success, else StatusCode::DeviceError with
  /// describe()'s text.
  Status check(const char *what, CUresult result) const;
  Status check(const char *what, cublasStatus_t status) const;
};

/// Opens the driver (and, when `withCublasLt`, cuBLASLt) once per process,
/// calls cuInit, and returns the table. Fails with Unsupported naming the
/// library that is missing (with dlerror's text and the variable
/// LMOPT_CUDA_LIBRARY_PATH, a directory searched first), the entry point
/// that is absent, or a driver older than the toolkit the runtime was built
/// with (CUDA_VERSION).
Status loadCudaApi(const CudaApi *&out, bool withCublasLt = true);

} // namespace lmopt::runtime::cuda

#endif // LMOPT_LIB_RUNTIME_CUDA_CUDAAPI_H
