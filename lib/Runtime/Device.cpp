//===- Device.cpp - Device registry and state-view copies -----------------===//
//
// createDevice knows one factory per device name. Devices whose hardware
// libraries not every machine has load them at run time, so listing a name
// here costs nothing on machines without them.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Device.h"
#include "lmopt/Runtime/CPU/CpuDevice.h"
#ifdef LMOPT_HAVE_CUDA
#include "lmopt/Runtime/CUDA/CudaDevice.h"
#endif

#include <cstring>

using namespace lmopt::runtime;

DeviceBuffer::~DeviceBuffer() = default;
StepExecutor::~StepExecutor() = default;
Device::~Device() = default;
CapturedRun::~CapturedRun() = default;

Status Device::beginCapture() {
  return Status::error(StatusCode::Unsupported,
                       std::string("device '") + name() +
                           "' cannot record runs");
}

Status Device::endCapture(std::unique_ptr<CapturedRun> &) {
  return beginCapture();
}

Status Device::replay(const CapturedRun &) { return beginCapture(); }

Status Device::allocateHost(uint64_t bytes,
                            std::unique_ptr<DeviceBuffer> &out) {
  return allocateHostBuffer(bytes, out);
}

Status Device::recordTimer(size_t) {
  return Status::error(StatusCode::Unsupported,
                       std::string("the ") + name() +
                           " device has no timers (it runs synchronously)");
}

Status Device::timerSeconds(size_t, size_t, double &) { return recordTimer(0); }

namespace {
struct DeviceFactory {
  const char *name;
  Status (*create)(const DeviceOptions &, std::unique_ptr<Device> &);
};
} // namespace

static const DeviceFactory kDevices[] = {
    {"cpu", createCpuDevice},
#ifdef LMOPT_HAVE_CUDA
    {"cuda", createCudaDevice},
#endif
};

std::vector<std::string> lmopt::runtime::knownDevices() {
  std::vector<std::string> names;
  for (const DeviceFactory &factory : kDevices)
    names.push_back(factory.name);
  return names;
}

Status lmopt::runtime::createDevice(std::string_view name,
                                    const DeviceOptions &options,
                                    std::unique_ptr<Device> &out) {
  for (const DeviceFactory &factory : kDevices)
    if (name == factory.name)
      return factory.create(options, out);
  std::string known;
  for (const DeviceFactory &factory : kDevices)
    known += (known.empty() ? "'" : ", '") + std::string(factory.name) + "'";
  return Status::error(StatusCode::Unsupported,
                       "device '" + std::string(name) +
                           "' is not one this runtime has (it has " + known +
                           "); use a runtime built with it");
}

bool lmopt::runtime::isDenseStateView(const std::vector<int64_t> &dims,
                                      const std::vector<int64_t> &capacity) {
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] == 0)
      return true;
  for (size_t d = 1; d < dims.size(); ++d)
    if (dims[d] != capacity[d])
      return false;
  return true;
}

StateViewRuns
lmopt::runtime::stateViewRuns(const std::vector<int64_t> &dims,
                              const std::vector<int64_t> &capacity,
                              size_t elementSize) {
  size_t rank = dims.size();
  StateViewRuns out;
  out.stride.assign(rank, elementSize);
  for (size_t d = rank; d-- > 1;)
    out.stride[d - 1] = out.stride[d] * uint64_t(capacity[d]);
  size_t inner = rank;
  uint64_t run = elementSize;
  while (inner > 0 && dims[inner - 1] == capacity[inner - 1])
    run *= uint64_t(dims[--inner]);
  if (inner > 0)
    run *= uint64_t(dims[--inner]);
  out.outer = inner;
  out.run = run;
  return out;
}

void lmopt::runtime::copyStateView(void *dense, void *state,
                                   const std::vector<int64_t> &dims,
                                   const std::vector<int64_t> &capacity,
                                   size_t elementSize, bool toState) {
  for (int64_t dim : dims)
    if (dim == 0)
      return;
  const StateViewRuns runs = stateViewRuns(dims, capacity, elementSize);
  const size_t inner = runs.outer;
  std::vector<int64_t> index(inner, 0);
  auto *denseBytes = static_cast<uint8_t *>(dense);
  auto *stateBytes = static_cast<uint8_t *>(state);
  for (;;) {
    uint64_t offset = 0;
    for (size_t d = 0; d < inner; ++d)
      offset += uint64_t(index[d]) * runs.stride[d];
    if (toState)
      std::memcpy(stateBytes + offset, denseBytes, runs.run);
    else
      std::memcpy(denseBytes, stateBytes + offset, runs.run);
    denseBytes += runs.run;
    size_t d = inner;
    while (d > 0 && ++index[d - 1] == dims[d - 1])
      index[--d] = 0;
    if (d == 0)
      return;
  }
}
