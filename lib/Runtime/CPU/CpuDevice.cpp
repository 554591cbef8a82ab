//===- CpuDevice.cpp - The host CPU as a runtime device -------------------===//

#include "lmopt/Runtime/CPU/CpuDevice.h"

#include "lmopt/Format/Requirements.h"
#include "lmopt/Runtime/CPU/Executor.h"
#include "lmopt/Runtime/CPU/KernelLibrary.h"
#include "lmopt/Runtime/CPU/LinearStep.h"

#include <sys/mman.h>

#include <cstring>

using namespace lmopt::runtime;

namespace {
/// Anonymous pages: zero-filled and page-aligned.
class HostBuffer final : public DeviceBuffer {
public:
  ~HostBuffer() override {
    if (data_)
      munmap(data_, size_t(size_));
  }
  bool allocate(uint64_t bytes) {
    if (bytes == 0)
      return true;
    if (bytes > SIZE_MAX)
      return false;
    void *p = mmap(nullptr, size_t(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return false;
    data_ = p;
    size_ = bytes;
    return true;
  }
};

class CpuDevice final : public Device {
public:
  const char *name() const override { return "cpu"; }

  Status checkRequirements(const uint8_t *data, size_t size,
                           const std::string &source) override {
    return lmopt::runtime::checkRequirements(data, size, source);
  }

  Status allocate(uint64_t bytes, std::unique_ptr<DeviceBuffer> &out) override {
    return allocateHostBuffer(bytes, out);
  }

  Status copy(void *dst, const void *src, uint64_t bytes, CopyKind) override {
    if (bytes)
      std::memmove(dst, src, size_t(bytes));
    return Status::ok();
  }

  Status loadKernels(const uint8_t *data, size_t size,
                     const std::string &source) override {
    if (kernels_)
      return Status::error(StatusCode::InvalidArgument,
                           source + ": the cpu device has kernels already");
    return KernelLibrary::load(data, size, source, kernels_);
  }

  Status createStep(const StepBuildContext &context, const PlanStep &step,
                    std::unique_ptr<StepExecutor> &out) override {
    CpuStepContext cpuContext{
        context.program,    context.plan,   *cpu_,
        kernels_.get(),     context.source, context.weights,
        context.packWeights};
    return createCpuStepExecutor(cpuContext, step, out);
  }

  Status synchronize() override { return Status::ok(); }

  std::unique_ptr<CpuContext> cpu_;
  /// Declared after cpu_: executors hold functions of the library, so it
  /// outlives nothing that the session keeps longer than the device.
  std::unique_ptr<KernelLibrary> kernels_;
};
} // namespace

Status lmopt::runtime::allocateHostBuffer(uint64_t bytes,
                                          std::unique_ptr<DeviceBuffer> &out) {
  auto buffer = std::make_unique<HostBuffer>();
  if (!buffer->allocate(bytes))
    return Status::error(StatusCode::IoError,
                         "out of memory: cannot allocate " +
                             std::to_string(bytes) + " bytes of host memory");
  out = std::move(buffer);
  return Status::ok();
}

Status lmopt::runtime::createCpuDevice(const DeviceOptions &options,
                                       std::unique_ptr<Device> &out) {
  auto device = std::make_unique<CpuDevice>();
  CpuContext::Options cpuOptions;
  cpuOptions.threads = options.threads;
  if (Status st = CpuContext::create(cpuOptions, device->cpu_); !st)
    return st;
  out = std::move(device);
  return Status::ok();
}
