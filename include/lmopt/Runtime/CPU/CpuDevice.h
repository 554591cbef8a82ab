//===- CpuDevice.h - The host CPU as a runtime device -----------*- C++ -*-===//
//
// The first Device: host memory (anonymous pages, zero-filled, 64-byte
// aligned), memcpy copies, the bundle's kernels as a shared object
// (KernelLibrary), and steps on oneDNN and the runtime's own CPU kernels
// (Executor.h). Steps run synchronously on the calling thread and the
// threads the context gives oneDNN and the kernel team.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_CPUDEVICE_H
#define LMOPT_RUNTIME_CPU_CPUDEVICE_H

#include "lmopt/Runtime/Device.h"

#include <memory>

namespace lmopt::runtime {

/// Creates the "cpu" device: its oneDNN context with `options.threads`.
Status createCpuDevice(const DeviceOptions &options,
                       std::unique_ptr<Device> &out);

/// Allocates `bytes` of zero-filled, page-aligned host memory that only
/// takes memory where it is touched (so a generous bound costs address space
/// only).
Status allocateHostBuffer(uint64_t bytes, std::unique_ptr<DeviceBuffer> &out);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_CPUDEVICE_H
