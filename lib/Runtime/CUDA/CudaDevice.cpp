//===- CudaDevice.cpp - An NVIDIA GPU as a runtime device -----------------===//
//
// One device object per session: the GPU's primary context (shared with
// any other user of the GPU in the process), a non-blocking stream that
// every copy and step goes through, a cuBLASLt handle and workspace, the
// runtime's own kernels and the bundle's. Copies and allocations the
// session asks for outside a run (weights, states, zero fills) wait for the
// stream; steps only enqueue, and synchronize() reports a fault naming the
// step enqueued last.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CUDA/CudaDevice.h"

#include "CudaExecutors.h"
#include "GatherStep.h"

#include "lmopt/Format/Requirements.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::cuda;

/// cuBLASLt's workspace: what its heuristics ask for at transformer shapes
/// on Hopper (NVIDIA recommends 32 MiB there).
static constexpr size_t kMatmulWorkspaceBytes = size_t(32) << 20;

static std::string smText(int sm) {
  return std::to_string(sm / 10) + "." + std::to_string(sm % 10);
}

namespace {
/// GPU memory, freed with the object.
class CudaBuffer final : public DeviceBuffer {
public:
  CudaBuffer(const CudaApi &api, CUcontext context)
      : api_(api), context_(context) {}
  ~CudaBuffer() override {
    if (!data_)
      return;
    api_.cuCtxSetCurrent(context_);
    api_.cuMemFree(CUdeviceptr(data_));
  }
  void adopt(CUdeviceptr ptr, uint64_t bytes) {
    data_ = reinterpret_cast<void *>(ptr);
    size_ = bytes;
  }

private:
  const CudaApi &api_;
  CUcontext context_;
};

/// Pinned host memory (cuMemHostAlloc), freed with the object.
class PinnedBuffer final : public DeviceBuffer {
public:
  PinnedBuffer(const CudaApi &api, CUcontext context)
      : api_(api), context_(context) {}
  ~PinnedBuffer() override {
    if (!data_)
      return;
    api_.cuCtxSetCurrent(context_);
    api_.cuMemFreeHost(data_);
  }
  void adopt(void *ptr, uint64_t bytes) {
    data_ = ptr;
    size_ = bytes;
  }

private:
  const CudaApi &api_;
  CUcontext context_;
};

/// A recorded run: an instantiated CUDA graph.
class CudaGraph final : public CapturedRun {
public:
  CudaGraph(const CudaApi &api, CUcontext context, CUgraphExec exec)
      : api_(api), context_(context), exec_(exec) {}
  ~CudaGraph() override {
    api_.cuCtxSetCurrent(context_);
    api_.cuGraphExecDestroy(exec_);
  }
  CUgraphExec exec() const { return exec_; }

private:
  const CudaApi &api_;
  CUcontext context_;
  CUgraphExec exec_;
};

class CudaDevice;

/// Notes the step before it enqueues it (for synchronize()'s message) and
/// makes the device's context current on the calling thread.
class TrackedExecutor final : public StepExecutor {
public:
  TrackedExecutor(CudaDevice &device, std::unique_ptr<StepExecutor> inner,
                  std::string label)
      : device_(device), inner_(std::move(inner)), label_(std::move(label)) {}
  Status run(void *const *tensors) const override;
  int64_t copiedWeight() const override { return inner_->copiedWeight(); }

private:
  CudaDevice &device_;
  std::unique_ptr<StepExecutor> inner_;
  std::string label_;
};

class CudaDevice final : public Device {
public:
  explicit CudaDevice(const CudaApi &api) : api_(api), env_{api} {}
  ~CudaDevice() override;

  Status open(const DeviceOptions &options);

  const char *name() const override { return "cuda"; }
  Status checkRequirements(const uint8_t *data, size_t size,
                           const std::string &source) override;
  Status allocate(uint64_t bytes, std::unique_ptr<DeviceBuffer> &out) override;
  Status copy(void *dst, const void *src, uint64_t bytes,
              CopyKind kind) override;
  Status loadKernels(const uint8_t *data, size_t size,
                     const std::string &source) override;
  Status createStep(const StepBuildContext &context, const PlanStep &step,
                    std::unique_ptr<StepExecutor> &out) override;
  Status synchronize() override;
  bool asynchronous() const override { return true; }
  Status recordTimer(size_t index) override;
  Status timerSeconds(size_t from, size_t to, double &seconds) override;
  bool canCapture() const override { return true; }
  Status beginCapture() override;
  Status endCapture(std::unique_ptr<CapturedRun> &out) override;
  Status replay(const CapturedRun &run) override;
  Status allocateHost(uint64_t bytes,
                      std::unique_ptr<DeviceBuffer> &out) override;

  void enterStep(const std::string &label) {
    api_.cuCtxSetCurrent(context_);
    // Assigned, not rebuilt: after the first runs the capacity suffices.
    lastStep_.assign(label);
  }

private:
  /// "cuda: <what>: <call> failed: <error>".
  Status fail(const std::string &what, const char *call,
              CUresult result) const {
    return Status::error(StatusCode::DeviceError,
                         "cuda: " + what + ": " + api_.describe(call, result));
  }
  Status ready() const {
    return api_.check("cuCtxSetCurrent", api_.cuCtxSetCurrent(context_));
  }

  const CudaApi &api_;
  CudaStepEnv env_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string deviceName_;
  size_t maxSharedOptin_ = 0;
  CUdeviceptr workspace_ = 0;
  CUmodule bundleKernels_ = nullptr;
  std::map<std::string, LoadedKernel> kernels_;
  bool hasPayload_ = false;
  MatmulAlgoCache algos_;
  std::string lastStep_;
  /// Profiling's events, by timer index.
  std::vector<CUevent> timers_;
};
} // namespace

Status TrackedExecutor::run(void *const *tensors) const {
  device_.enterStep(label_);
  return inner_->run(tensors);
}

CudaDevice::~CudaDevice() {
  if (!context_)
    return;
  api_.cuCtxSetCurrent(context_);
  if (env_.stream)
    api_.cuStreamSynchronize(env_.stream);
  if (env_.cublasLt)
    api_.cublasLtDestroy(env_.cublasLt);
  for (CUevent event : timers_)
    if (event)
      api_.cuEventDestroy(event);
  if (bundleKernels_)
    api_.cuModuleUnload(bundleKernels_);
  if (env_.runtimeKernels)
    api_.cuModuleUnload(env_.runtimeKernels);
  if (workspace_)
    api_.cuMemFree(workspace_);
  if (env_.stream)
    api_.cuStreamDestroy(env_.stream);
  api_.cuDevicePrimaryCtxRelease(device_);
}

Status CudaDevice::open(const DeviceOptions &options) {
  int count = 0;
  if (CUresult r = api_.cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    return Status::error(StatusCode::Unsupported,
                         "no CUDA device: " +
                             api_.describe("cuDeviceGetCount", r));
  if (count == 0)
    return Status::error(StatusCode::Unsupported,
                         "no CUDA device: the driver sees no GPU");
  int ordinal = 0;
  if (const char *text = std::getenv("LMOPT_CUDA_DEVICE"); text && *text) {
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (*end || value < 0 || value >= count)
      return Status::error(StatusCode::InvalidArgument,
                           "LMOPT_CUDA_DEVICE is '" + std::string(text) +
                               "'; expected a GPU ordinal in [0, " +
                               std::to_string(count) + ")");
    ordinal = int(value);
  }
  if (Status st =
          api_.check("cuDeviceGet", api_.cuDeviceGet(&device_, ordinal));
      !st)
    return st;
  char name[256] = {};
  if (Status st = api_.check("cuDeviceGetName",
                             api_.cuDeviceGetName(name, sizeof name, device_));
      !st)
    return st;
  deviceName_ = name;
  int major = 0, minor = 0, sms = 0, sharedOptin = 0;
  for (auto [attribute, value] :
       {std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &sharedOptin}})
    if (Status st =
            api_.check("cuDeviceGetAttribute",
                       api_.cuDeviceGetAttribute(value, attribute, device_));
        !st)
      return st;
  env_.smVersion = major * 10 + minor;
  env_.multiprocessors = sms;
  env_.allowTf32 = options.allowTf32;
  maxSharedOptin_ = size_t(sharedOptin);

  if (CUresult r = api_.cuDevicePrimaryCtxRetain(&context_, device_);
      r != CUDA_SUCCESS) {
    context_ = nullptr;
    return fail("cannot open GPU " + std::to_string(ordinal) + " (" +
                    deviceName_ + ")",
                "cuDevicePrimaryCtxRetain", r);
  }
  if (Status st = ready(); !st)
    return st;
  if (CUresult r = api_.cuStreamCreate(&env_.stream, CU_STREAM_NON_BLOCKING);
      r != CUDA_SUCCESS)
    return fail("cannot create a stream", "cuStreamCreate", r);
  if (Status st =
          api_.check("cublasLtCreate", api_.cublasLtCreate(&env_.cublasLt));
      !st)
    return st;
  if (CUresult r = api_.cuMemAlloc(&workspace_, kMatmulWorkspaceBytes);
      r != CUDA_SUCCESS) {
    workspace_ = 0;
    return fail("cannot allocate cuBLASLt's " +
                    std::to_string(kMatmulWorkspaceBytes) + "-byte workspace",
                "cuMemAlloc", r);
  }
  if (CUresult r = api_.cuModuleLoadData(&env_.runtimeKernels,
                                         lmoptCudaRuntimeKernelsImage);
      r != CUDA_SUCCESS) {
    env_.runtimeKernels = nullptr;
    return Status::error(StatusCode::Unsupported,
                         "cuda: the runtime's own kernels do not load on " +
                             deviceName_ + " (sm_" +
                             std::to_string(env_.smVersion) +
                             "; built for LMOPT_CUDA_RUNTIME_ARCHS): " +
                             api_.describe("cuModuleLoadData", r));
  }
  return Status::ok();
}

Status CudaDevice::checkRequirements(const uint8_t *data, size_t size,
                                     const std::string &source) {
  int needed = 0;
  Status st = forEachRequirement(
      data, size, source, "cuda",
      [&](std::string_view, std::string_view value, size_t line) {
        int sm = 0;
        bool valid = !value.empty() && value.size() <= 4;
        for (char ch : value) {
          valid &= ch >= '0' && ch <= '9';
          sm = sm * 10 + (ch - '0');
        }
        if (!valid)
          return requirementLineError(
              source, line,
              "is 'cuda-sm " + std::string(value.substr(0, 64)) +
                  "'; expected 'cuda-sm <major * 10 + minor>' (cuda-sm 90)");
        needed = std::max(needed, sm);
        return Status::ok();
      });
  if (!st)
    return st;
  if (needed > env_.smVersion)
    return Status::error(StatusCode::Unsupported,
                         "bundle '" + source +
                             "' needs a GPU of compute capability " +
                             smText(needed) + " or newer; this one (" +
                             deviceName_ + ") is " + smText(env_.smVersion));
  return Status::ok();
}

Status CudaDevice::allocate(uint64_t bytes,
                            std::unique_ptr<DeviceBuffer> &out) {
  auto buffer = std::make_unique<CudaBuffer>(api_, context_);
  if (bytes == 0) {
    out = std::move(buffer);
    return Status::ok();
  }
  if (Status st = ready(); !st)
    return st;
  CUdeviceptr ptr = 0;
  if (CUresult r = api_.cuMemAlloc(&ptr, size_t(bytes)); r != CUDA_SUCCESS) {
    size_t free = 0, total = 0;
    std::string memory;
    if (api_.cuMemGetInfo(&free, &total) == CUDA_SUCCESS)
      memory = " (" + std::to_string(free) + " bytes free of " +
               std::to_string(total) + ")";
    return Status::error(StatusCode::DeviceError,
                         "cuda: cannot allocate " + std::to_string(bytes) +
                             " bytes of GPU memory on " + deviceName_ + memory +
                             ": " + api_.describe("cuMemAlloc", r));
  }
  buffer->adopt(ptr, bytes);
  // On the stream, so that the zeros land before any step reads them.
  if (CUresult r = api_.cuMemsetD8Async(ptr, 0, size_t(bytes), env_.stream);
      r != CUDA_SUCCESS)
    return fail("cannot zero " + std::to_string(bytes) + " bytes",
                "cuMemsetD8Async", r);
  if (CUresult r = api_.cuStreamSynchronize(env_.stream); r != CUDA_SUCCESS)
    return fail("cannot zero " + std::to_string(bytes) + " bytes",
                "cuStreamSynchronize", r);
  out = std::move(buffer);
  return Status::ok();
}

Status CudaDevice::copy(void *dst, const void *src, uint64_t bytes,
                        CopyKind kind) {
  if (bytes == 0)
    return Status::ok();
  if (Status st = ready(); !st)
    return st;
  auto dstPtr = CUdeviceptr(dst), srcPtr = CUdeviceptr(src);
  CUresult r = CUDA_SUCCESS;
  const char *what = "";
  switch (kind) {
  case CopyKind::HostToDevice:
    what = "cuMemcpyHtoDAsync";
    r = api_.cuMemcpyHtoDAsync(dstPtr, src, size_t(bytes), env_.stream);
    break;
  case CopyKind::DeviceToHost:
    what = "cuMemcpyDtoHAsync";
    r = api_.cuMemcpyDtoHAsync(dst, srcPtr, size_t(bytes), env_.stream);
    break;
  case CopyKind::DeviceToDevice:
    what = "cuMemcpyDtoDAsync";
    r = api_.cuMemcpyDtoDAsync(dstPtr, srcPtr, size_t(bytes), env_.stream);
    break;
  }
  if (r == CUDA_SUCCESS)
    r = api_.cuStreamSynchronize(env_.stream);
  if (r != CUDA_SUCCESS)
    return Status::error(StatusCode::DeviceError,
                         "cuda: copying " + std::to_string(bytes) +
                             " bytes: " + api_.describe(what, r));
  return Status::ok();
}

Status CudaDevice::loadKernels(const uint8_t *data, size_t size,
                               const std::string &source) {
  if (bundleKernels_ || hasPayload_)
    return Status::error(StatusCode::InvalidArgument,
                         source + ": the cuda device has kernels already");
  CudaKernelPayload payload;
  if (Status st = parseCudaKernels(data, size, source, payload); !st)
    return st;
  if (int(payload.smVersion) > env_.smVersion)
    return Status::error(StatusCode::Unsupported,
                         source + ": the kernels are compiled for sm_" +
                             std::to_string(payload.smVersion) +
                             "; this GPU (" + deviceName_ + ") is sm_" +
                             std::to_string(env_.smVersion) +
                             "; recompile the bundle for it");
  if (Status st = ready(); !st)
    return st;
  // The driver reads an image that is neither ELF nor a fatbin as PTX text
  // up to a NUL: one after the bytes keeps it inside them.
  payload.image.push_back(0);
  if (CUresult r = api_.cuModuleLoadData(&bundleKernels_, payload.image.data());
      r != CUDA_SUCCESS) {
    bundleKernels_ = nullptr;
    return Status::error(StatusCode::InvalidFormat,
                         source + ": the CUDA image does not load on " +
                             deviceName_ + ": " +
                             api_.describe("cuModuleLoadData", r));
  }
  for (const CudaKernelInfo &info : payload.kernels) {
    LoadedKernel kernel{info, nullptr};
    if (CUresult r = api_.cuModuleGetFunction(&kernel.function, bundleKernels_,
                                              info.name.c_str());
        r != CUDA_SUCCESS)
      return Status::error(StatusCode::InvalidFormat,
                           source + ": kernel '" + info.name +
                               "' is listed but not in the image: " +
                               api_.describe("cuModuleGetFunction", r));
    // Above 48 KiB a kernel must ask for its dynamic shared memory.
    if (info.sharedBytes > 48 * 1024) {
      if (info.sharedBytes > maxSharedOptin_)
        return Status::error(
            StatusCode::Unsupported,
            source + ": kernel '" + info.name + "' needs " +
                std::to_string(info.sharedBytes) +
                " bytes of shared memory; this GPU (" + deviceName_ + ") has " +
                std::to_string(maxSharedOptin_) + " per block");
      if (CUresult r = api_.cuFuncSetAttribute(
              kernel.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              int(info.sharedBytes));
          r != CUDA_SUCCESS)
        return Status::error(StatusCode::DeviceError,
                             source + ": kernel '" + info.name + "': " +
                                 api_.describe("cuFuncSetAttribute", r));
    }
    kernels_.emplace(info.name, std::move(kernel));
  }
  hasPayload_ = true;
  return Status::ok();
}

namespace {
struct CudaStepKind {
  StepKind kind;
  CudaStepBuilder build;
};
} // namespace

static const CudaStepKind kStepKinds[] = {
    {StepKind::Kernel, buildKernelStep},
    {StepKind::Linear, buildLinearStep},
    {StepKind::Attention, buildAttentionStep},
    {StepKind::Gather, buildGatherStep},
    {StepKind::Copy, buildCopyStep},
    {StepKind::MatMul, buildMatMulStep},
    {StepKind::Append, buildAppendStep},
};

Status CudaDevice::createStep(const StepBuildContext &context,
                              const PlanStep &step,
                              std::unique_ptr<StepExecutor> &out) {
  CudaBuildEnv build{env_,        *this,      kernels_,
                     hasPayload_, workspace_, kMatmulWorkspaceBytes,
                     algos_};
  CudaCheck checker(build, context, step);
  const CudaStepKind *entry =
      std::find_if(std::begin(kStepKinds), std::end(kStepKinds),
                   [&](const CudaStepKind &e) { return e.kind == step.kind; });
  if (entry == std::end(kStepKinds))
    return checker.error(std::string("the cuda device cannot run ") +
                             stepKindName(step.kind) + " steps yet",
                         StatusCode::Unsupported);
  if (Status st = ready(); !st)
    return checker.deviceError(st);
  std::unique_ptr<StepExecutor> executor;
  if (Status st = entry->build(checker, executor); !st)
    return st;
  if (Status st = checker.checkStateViews(); !st)
    return st;
  if (Status st = checker.checkAliasing(); !st)
    return st;
  out = std::make_unique<TrackedExecutor>(*this, std::move(executor),
                                          "'" + step.name + "' (" +
                                              stepKindName(step.kind) + ")");
  return Status::ok();
}

Status CudaDevice::synchronize() {
  if (Status st = ready(); !st)
    return st;
  CUresult r = api_.cuStreamSynchronize(env_.stream);
  std::string after = lastStep_.empty() ? "" : " after step " + lastStep_;
  lastStep_.clear();
  if (r != CUDA_SUCCESS)
    return Status::error(StatusCode::DeviceError,
                         "cuda: device error" + after + ": " +
                             api_.describe("cuStreamSynchronize", r));
  // A gather that met an index out of range wrote zeros and recorded it.
  return checkGatherErrors(api_, env_.stream);
}

Status CudaDevice::beginCapture() {
  if (Status st = ready(); !st)
    return st;
  if (CUresult r = api_.cuStreamBeginCapture(
          env_.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      r != CUDA_SUCCESS)
    return fail("cannot record a run", "cuStreamBeginCapture", r);
  return Status::ok();
}

Status CudaDevice::endCapture(std::unique_ptr<CapturedRun> &out) {
  if (Status st = ready(); !st)
    return st;
  CUgraph graph = nullptr;
  if (CUresult r = api_.cuStreamEndCapture(env_.stream, &graph);
      r != CUDA_SUCCESS)
    return fail("cannot record a run", "cuStreamEndCapture", r);
  CUgraphExec exec = nullptr;
  CUresult r = api_.cuGraphInstantiate(&exec, graph, 0);
  api_.cuGraphDestroy(graph);
  if (r != CUDA_SUCCESS)
    return fail("cannot instantiate a recorded run", "cuGraphInstantiate", r);
  out = std::make_unique<CudaGraph>(api_, context_, exec);
  return Status::ok();
}

Status CudaDevice::replay(const CapturedRun &run) {
  if (Status st = ready(); !st)
    return st;
  lastStep_.assign("(a recorded run)");
  if (CUresult r = api_.cuGraphLaunch(
          static_cast<const CudaGraph &>(run).exec(), env_.stream);
      r != CUDA_SUCCESS)
    return fail("cannot replay a recorded run", "cuGraphLaunch", r);
  return Status::ok();
}

Status CudaDevice::allocateHost(uint64_t bytes,
                                std::unique_ptr<DeviceBuffer> &out) {
  auto buffer = std::make_unique<PinnedBuffer>(api_, context_);
  if (bytes) {
    if (Status st = ready(); !st)
      return st;
    void *ptr = nullptr;
    if (CUresult r = api_.cuMemHostAlloc(&ptr, size_t(bytes), 0);
        r != CUDA_SUCCESS)
      return fail("cannot allocate " + std::to_string(bytes) +
                      " bytes of pinned host memory",
                  "cuMemHostAlloc", r);
    std::memset(ptr, 0, size_t(bytes));
    buffer->adopt(ptr, bytes);
  }
  out = std::move(buffer);
  return Status::ok();
}

Status CudaDevice::recordTimer(size_t index) {
  if (index >= timers_.size())
    timers_.resize(index + 1, nullptr);
  if (!timers_[index])
    if (CUresult r = api_.cuEventCreate(&timers_[index], CU_EVENT_DEFAULT);
        r != CUDA_SUCCESS) {
      timers_[index] = nullptr;
      return fail("cannot create a timer", "cuEventCreate", r);
    }
  if (CUresult r = api_.cuEventRecord(timers_[index], env_.stream);
      r != CUDA_SUCCESS)
    return fail("cannot record a timer", "cuEventRecord", r);
  return Status::ok();
}

Status CudaDevice::timerSeconds(size_t from, size_t to, double &seconds) {
  if (std::max(from, to) >= timers_.size() || !timers_[from] || !timers_[to])
    return Status::error(StatusCode::InvalidArgument,
                         "cuda: timer " + std::to_string(std::max(from, to)) +
                             " was never recorded");
  float ms = 0;
  if (CUresult r = api_.cuEventElapsedTime(&ms, timers_[from], timers_[to]);
      r != CUDA_SUCCESS)
    return fail("cannot read a timer", "cuEventElapsedTime", r);
  seconds = double(ms) / 1000;
  return Status::ok();
}

bool MatmulAlgoCache::find(const std::string &key,
                           cublasLtMatmulAlgo_t &algo) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = algos_.find(key);
  if (it == algos_.end())
    return false;
  algo = it->second;
  return true;
}

void MatmulAlgoCache::insert(const std::string &key,
                             const cublasLtMatmulAlgo_t &algo) {
  std::lock_guard<std::mutex> lock(mutex_);
  algos_[key] = algo;
}

Status lmopt::runtime::createCudaDevice(const DeviceOptions &options,
                                        std::unique_ptr<Device> &out) {
  const CudaApi *api = nullptr;
  if (Status st = loadCudaApi(api); !st)
    return st;
  auto device = std::make_unique<CudaDevice>(*api);
  if (Status st = device->open(options); !st)
    return st;
  out = std::move(device);
  return Status::ok();
}
