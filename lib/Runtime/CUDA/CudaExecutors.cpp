//===- CudaExecutors.cpp - Kernel, copy and append steps on the GPU ------===//
//
// The steps that need no library: a generated kernel launched per the
// payload's launch contract (lmopt/Format/CudaKernels.h), copies between the
// host and the GPU or within it, and appends into a state kept at its
// capacity. Each is validated and laid out when built; run() passes the
// run's pointers to what was prepared and enqueues.
//
//===----------------------------------------------------------------------===//

#include "CudaExecutors.h"

#include <algorithm>
#include <climits>

using namespace lmopt::runtime;
using namespace lmopt::runtime::cuda;

/// "bundle '<source>': <kind> step '<name>': <call> failed: ..." for an
/// enqueue that failed at run time.
static Status runError(const std::string &label, const CudaApi &api,
                       const char *call, CUresult result) {
  return Status::error(StatusCode::DeviceError,
                       label + ": " + api.describe(call, result));
}

Status CudaCheck::runtimeKernel(const std::string &name,
                                CUfunction &out) const {
  if (!env.runtimeKernels)
    return error("the CUDA device has not loaded the runtime's kernels",
                 StatusCode::DeviceError);
  if (Status st = api.check(
          "cuModuleGetFunction",
          api.cuModuleGetFunction(&out, env.runtimeKernels, name.c_str()));
      !st)
    return error("kernel '" + name + "': " + st.message(), st.code());
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

namespace {
class KernelExecutor final : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    if (blocks == 0)
      return Status::ok();
    for (size_t i = 0; i < ids.size(); ++i)
      pointers[i] = CUdeviceptr(tensors[ids[i]]);
    CUresult r =
        api->cuLaunchKernel(function, blocks, 1, 1, blockSize, 1, 1,
                            sharedBytes, stream, params.data(), nullptr);
    if (r != CUDA_SUCCESS)
      return runError(label, *api, "cuLaunchKernel", r);
    return Status::ok();
  }

  const CudaApi *api = nullptr;
  CUstream stream = nullptr;
  CUfunction function = nullptr;
  unsigned blocks = 0, blockSize = 0, sharedBytes = 0;
  /// Operands then results.
  std::vector<uint32_t> ids;
  /// The launch's parameters: `params[i]` points at `pointers[i]`, then at
  /// each of `sizes` (the dynamic dims), as cuLaunchKernel wants them.
  mutable std::vector<CUdeviceptr> pointers;
  std::vector<int64_t> sizes;
  mutable std::vector<void *> params;
  std::string label;
};
} // namespace

Status
lmopt::runtime::cuda::buildKernelStep(const CudaCheck &c,
                                      std::unique_ptr<StepExecutor> &out) {
  std::string entry;
  std::vector<uint32_t> ids;
  std::vector<int64_t> sizes;
  if (Status st = c.checkKernelStep(entry, ids, sizes); !st)
    return st;
  if (!c.build.hasKernelPayload)
    return c.error("calls kernel '" + entry +
                       "' but the bundle has no kernels for the cuda device",
                   StatusCode::NotFound);
  auto found = c.build.kernels.find(entry);
  if (found == c.build.kernels.end())
    return c.error("calls kernel '" + entry +
                       "', which the bundle's CUDA kernels do not have",
                   StatusCode::NotFound);
  const LoadedKernel &kernel = found->second;
  const CudaKernelInfo &info = kernel.info;
  if (c.step.operands.size() != info.numOperands ||
      c.step.results.size() != info.numResults)
    return c.error("has " + std::to_string(c.step.operands.size()) +
                   " operands and " + std::to_string(c.step.results.size()) +
                   " results; kernel '" + entry + "' takes " +
                   std::to_string(info.numOperands) + " and " +
                   std::to_string(info.numResults));

  auto exec = std::make_unique<KernelExecutor>();
  exec->api = &c.api;
  exec->stream = c.env.stream;
  exec->function = kernel.function;
  exec->blockSize = info.blockSize;
  exec->sharedBytes = info.sharedBytes;
  exec->label = c.label();
  exec->ids = std::move(ids);
  exec->sizes = std::move(sizes);
  if (exec->sizes.size() != info.numDynamicSizes)
    return c.error("has " + std::to_string(exec->sizes.size()) +
                   " dynamic dims; kernel '" + entry + "' takes " +
                   std::to_string(info.numDynamicSizes));

  const PlanTensor &grid = c.plan.tensors[exec->ids[info.gridTensor]];
  if (info.gridAxes > grid.dims.size())
    return c.error("kernel '" + entry + "' sizes its grid by the first " +
                   std::to_string(info.gridAxes) + " dims of " +
                   describe(grid) + ", which has rank " +
                   std::to_string(grid.dims.size()));
  // Units never exceed the tensor's element count, which the plan's parser
  // bounded, unless a later dim is 0; saturate rather than wrap.
  uint64_t units = 1;
  for (uint32_t d = 0; d < info.gridAxes; ++d)
    if (__builtin_mul_overflow(units, uint64_t(grid.dims[d]), &units))
      units = UINT64_MAX;
  uint64_t blocks =
      units / info.unitsPerBlock + (units % info.unitsPerBlock != 0 ? 1 : 0);
  exec->blocks = unsigned(std::min<uint64_t>(blocks, INT_MAX));

  exec->pointers.resize(exec->ids.size());
  for (CUdeviceptr &p : exec->pointers)
    exec->params.push_back(&p);
  for (int64_t &size : exec->sizes)
    exec->params.push_back(&size);
  out = std::move(exec);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Copy
//===----------------------------------------------------------------------===//

namespace {
class CopyExecutor final : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    if (bytes == 0)
      return Status::ok();
    void *dst = tensors[to];
    const void *src = tensors[from];
    CUresult r = CUDA_SUCCESS;
    switch (kind) {
    case Device::CopyKind::HostToDevice:
      r = api->cuMemcpyHtoDAsync(CUdeviceptr(dst), src, bytes, stream);
      break;
    case Device::CopyKind::DeviceToHost:
      r = api->cuMemcpyDtoHAsync(dst, CUdeviceptr(src), bytes, stream);
      break;
    case Device::CopyKind::DeviceToDevice:
      r = api->cuMemcpyDtoDAsync(CUdeviceptr(dst), CUdeviceptr(src), bytes,
                                 stream);
      break;
    }
    if (r != CUDA_SUCCESS)
      return runError(label, *api, "cuMemcpyAsync", r);
    return Status::ok();
  }

  const CudaApi *api = nullptr;
  CUstream stream = nullptr;
  Device::CopyKind kind = Device::CopyKind::DeviceToDevice;
  int64_t from = 0, to = 0;
  size_t bytes = 0;
  std::string label;
};
} // namespace

Status lmopt::runtime::cuda::buildCopyStep(const CudaCheck &c,
                                           std::unique_ptr<StepExecutor> &out) {
  if (Status st = c.expectAttrs({}); !st)
    return st;
  if (Status st = c.expectCounts(1, "source", 1); !st)
    return st;
  const PlanTensor &from = c.operand(0), &to = c.result(0);
  if (from.byteSize() != to.byteSize())
    return c.error("copies " + std::to_string(from.byteSize()) + " bytes of " +
                   describe(from) + " into " + std::to_string(to.byteSize()) +
                   " bytes of " + describe(to));
  // Where each side is: the host, or the device that runs the step.
  auto side = [&](const PlanTensor &t) {
    const std::string &name = c.program.devices[t.device].name;
    return name == "cpu" ? 0 : t.device == c.step.device ? 1 : -1;
  };
  int fromSide = side(from), toSide = side(to);
  if (fromSide < 0 || toSide < 0 || (fromSide == 0 && toSide == 0))
    return c.error("copies from device '" +
                       c.program.devices[from.device].name + "' to '" +
                       c.program.devices[to.device].name +
                       "'; the cuda device copies between itself and the "
                       "host only",
                   StatusCode::Unsupported);
  auto exec = std::make_unique<CopyExecutor>();
  exec->api = &c.api;
  exec->stream = c.env.stream;
  exec->kind = fromSide == 0 ? Device::CopyKind::HostToDevice
               : toSide == 0 ? Device::CopyKind::DeviceToHost
                             : Device::CopyKind::DeviceToDevice;
  exec->from = c.step.operands[0];
  exec->to = c.step.results[0];
  exec->bytes = size_t(from.byteSize());
  exec->label = c.label();
  out = std::move(exec);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Append
//===----------------------------------------------------------------------===//

namespace {
/// Writes a dense operand into the last rows of a state view along an axis:
/// a list of 2-D copies (rows of `width` bytes, `height` of them, dense in
/// the operand and `dstPitch` apart in the state), prepared when built.
class AppendExecutor final : public StepExecutor {
public:
  struct Block {
    uint64_t srcOffset, dstOffset;
    size_t height;
  };

  Status run(void *const *tensors) const override {
    auto src = CUdeviceptr(tensors[value]);
    auto dst = CUdeviceptr(tensors[state]);
    for (const Block &block : blocks) {
      if (block.height == 1) {
        if (CUresult r = api->cuMemcpyDtoDAsync(
                dst + block.dstOffset, src + block.srcOffset, width, stream);
            r != CUDA_SUCCESS)
          return runError(label, *api, "cuMemcpyDtoDAsync", r);
        continue;
      }
      CUDA_MEMCPY2D copy = {};
      copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
      copy.srcDevice = src + block.srcOffset;
      copy.srcPitch = width;
      copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      copy.dstDevice = dst + block.dstOffset;
      copy.dstPitch = dstPitch;
      copy.WidthInBytes = width;
      copy.Height = block.height;
      if (CUresult r = api->cuMemcpy2DAsync(&copy, stream); r != CUDA_SUCCESS)
        return runError(label, *api, "cuMemcpy2DAsync", r);
    }
    return Status::ok();
  }

  const CudaApi *api = nullptr;
  CUstream stream = nullptr;
  int64_t value = 0, state = 0;
  size_t width = 0, dstPitch = 0;
  std::vector<Block> blocks;
  std::string label;
};
} // namespace

/// cuMemcpy2D's pitches are at most this (CU_DEVICE_ATTRIBUTE_MAX_PITCH is
/// 2^31 - 1 on every GPU so far).
static constexpr uint64_t kMaxPitch = INT_MAX;

Status
lmopt::runtime::cuda::buildAppendStep(const CudaCheck &c,
                                      std::unique_ptr<StepExecutor> &out) {
  int64_t axis = 0;
  if (Status st = checkAppendStep(c, axis); !st)
    return st;
  const PlanTensor &value = c.operand(0), &dest = c.result(0);
  const PlanState &state = c.program.states[size_t(dest.offset)];
  const std::vector<int64_t> &dims = value.dims;

  auto exec = std::make_unique<AppendExecutor>();
  exec->api = &c.api;
  exec->stream = c.env.stream;
  exec->value = c.step.operands[0];
  exec->state = c.step.results[0];
  exec->label = c.label();
  out = std::move(exec);
  auto *append = static_cast<AppendExecutor *>(out.get());
  if (value.elementCount() == 0)
    return Status::ok();

  // As copyStateView: one contiguous run per index of the outer axes; the
  // last outer axis makes the rows of one 2-D copy, and the axes before it
  // one copy each.
  const StateViewRuns runs =
      stateViewRuns(dims, state.dims, dtypeSize(value.dtype));
  const std::vector<uint64_t> &stride = runs.stride;
  const size_t inner = runs.outer;
  const uint64_t run = runs.run;
  // The first written row along the axis.
  uint64_t skip = uint64_t(dest.dims[size_t(axis)] - dims[size_t(axis)]) *
                  stride[size_t(axis)];
  size_t rowAxis = inner; // rows of a 2-D copy along axis inner - 1
  uint64_t height = 1, pitch = run;
  if (inner > 0 && stride[inner - 1] <= kMaxPitch) {
    rowAxis = inner - 1;
    height = uint64_t(dims[rowAxis]);
    pitch = stride[rowAxis];
  }
  append->width = size_t(run);
  append->dstPitch = size_t(pitch);
  std::vector<int64_t> index(rowAxis, 0);
  uint64_t srcOffset = 0;
  for (;;) {
    uint64_t dstOffset = skip;
    for (size_t d = 0; d < rowAxis; ++d)
      dstOffset += uint64_t(index[d]) * stride[d];
    append->blocks.push_back({srcOffset, dstOffset, size_t(height)});
    srcOffset += run * height;
    size_t d = rowAxis;
    while (d > 0 && ++index[d - 1] == dims[d - 1])
      index[--d] = 0;
    if (d == 0)
      break;
  }
  return Status::ok();
}
