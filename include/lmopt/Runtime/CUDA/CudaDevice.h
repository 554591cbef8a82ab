//===- CudaDevice.h - An NVIDIA GPU as a runtime device ---------*- C++ -*-===//
//
// The "cuda" device (lib/Runtime/CUDA): one GPU's primary context, one
// stream every step enqueues on, cuBLASLt for matrix products, the bundle's
// generated kernels (a CUDA kernel payload, lmopt/Format/CudaKernels.h) and
// the runtime's own kernels. The driver and cuBLASLt are opened at run time,
// so this header and the registry entry exist only in a runtime built with
// the CUDA toolkit (LMOPT_HAVE_CUDA), and creating the device on a machine
// without a driver fails with a message naming what is missing.
//
// Environment: LMOPT_CUDA_DEVICE picks the GPU by ordinal (default 0);
// LMOPT_CUDA_LIBRARY_PATH is a directory searched first for libcuda.so.1
// and libcublasLt.so.13.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CUDA_CUDADEVICE_H
#define LMOPT_RUNTIME_CUDA_CUDADEVICE_H

#include "lmopt/Runtime/Device.h"

#include <memory>

namespace lmopt::runtime {

/// Creates the "cuda" device on the GPU LMOPT_CUDA_DEVICE names (0 when
/// unset). Fails with Unsupported when the driver, cuBLASLt or a GPU is
/// missing or the driver is too old, with DeviceError when the GPU fails.
Status createCudaDevice(const DeviceOptions &options,
                        std::unique_ptr<Device> &out);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CUDA_CUDADEVICE_H
