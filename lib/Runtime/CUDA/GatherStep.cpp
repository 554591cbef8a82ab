//===- GatherStep.cpp - ONNX Gather on the CUDA device --------------------===//
//
// Checks a gather step as every device does (checkGatherStep) and enqueues
// one kernel (Kernels/Gather.cuh): rows copied in the widest unit that the
// row size and the addresses allow, or int8 rows dequantized with their f32
// scales (row_scales). Indices out of
// range are recorded on the device and reported by checkGatherErrors
// (GatherStep.h) after the device synchronizes.
//
//===----------------------------------------------------------------------===//

#include "GatherStep.h"

#include "CudaExecutors.h"
#include "Kernels/KernelParams.cuh"

#include <algorithm>
#include <map>
#include <mutex>

using namespace lmopt::runtime;
using namespace lmopt::runtime::cuda;
using lmopt_kernels::GatherParams;

static constexpr unsigned kGatherThreads = 256;
/// {position, value, step id}, int64 each; position -1 (all bytes 0xff)
/// while clean.
static constexpr size_t kErrorRecordBytes = 3 * sizeof(int64_t);

namespace {
/// What a message about one gather step needs.
struct GatherInfo {
  std::string source, name;
  int64_t axis = 0, axisSize = 0;
  std::vector<int64_t> indicesDims;
};

/// The error record of one stream and the gather steps alive on it.
struct StreamRecord {
  CUdeviceptr record = 0;
  std::map<int64_t, GatherInfo> steps;
};

/// Records by stream. Executors register when built and leave when
/// destroyed; the record is freed with the stream's last gather step.
struct Registry {
  std::mutex mutex;
  std::map<CUstream, StreamRecord> streams;
  int64_t nextId = 0;
};

class CudaGatherExecutor : public StepExecutor {
public:
  explicit CudaGatherExecutor(const CudaStepEnv &env) : env(env) {}
  ~CudaGatherExecutor() override;

  Status run(void *const *tensors) const override;

  /// A copy: the device may build each step with an env of the moment.
  const CudaStepEnv env;
  GatherParams params{};
  /// Data row size in bytes (copy) or elements (dequantize); rows.
  int64_t rowBytes = 0, rows = 0;
  bool dequantize = false;
  /// The kernels by unit: 1, 2, 4, 8, 16 bytes; the dequantizing one.
  CUfunction copyKernels[5] = {};
  CUfunction dequantKernel = nullptr;
  int64_t data = 0, indices = 0, output = 0, scales = -1;
  /// -1 until registered.
  int64_t id = -1;
};
} // namespace

static Registry &registry() {
  static Registry *instance = new Registry(); // outlives static destructors
  return *instance;
}

CudaGatherExecutor::~CudaGatherExecutor() {
  if (id < 0)
    return;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.streams.find(env.stream);
  if (it == r.streams.end())
    return;
  it->second.steps.erase(id);
  if (it->second.steps.empty()) {
    (void)env.api.cuMemFree(it->second.record);
    r.streams.erase(it);
  }
}

Status CudaGatherExecutor::run(void *const *tensors) const {
  GatherParams p = params;
  if (p.count == 0)
    return Status::ok();
  p.data = tensors[data];
  p.indices = tensors[indices];
  p.out = tensors[output];
  p.scales = scales < 0 ? nullptr : static_cast<const float *>(tensors[scales]);
  CUfunction kernel = dequantKernel;
  int64_t units = rowBytes;
  if (!dequantize) {
    // The widest unit dividing the row size and both addresses.
    uint64_t bits = uint64_t(rowBytes) | reinterpret_cast<uintptr_t>(p.data) |
                    reinterpret_cast<uintptr_t>(p.out);
    int log = 0;
    while (log < 4 && rowBytes > 0 && !(bits & ((uint64_t(2) << log) - 1)))
      ++log;
    kernel = copyKernels[log];
    units = rowBytes >> log;
  }
  p.rowUnits = units;
  int rowThreads = 1;
  while (rowThreads < int(kGatherThreads) && rowThreads < units)
    rowThreads *= 2;
  p.rowThreads = rowThreads;
  const int64_t rowsPerBlock = kGatherThreads / unsigned(rowThreads);
  const int64_t maxBlocks =
      16 * int64_t(env.multiprocessors > 0 ? env.multiprocessors : 132);
  const int64_t blocks = std::clamp<int64_t>(
      std::max<int64_t>((rows + rowsPerBlock - 1) / rowsPerBlock,
                        (p.count + kGatherThreads - 1) / kGatherThreads),
      1, maxBlocks);
  void *args[] = {&p};
  return env.api.check("cuLaunchKernel (gather)",
                       env.api.cuLaunchKernel(kernel, unsigned(blocks), 1, 1,
                                              kGatherThreads, 1, 1, 0,
                                              env.stream, args, nullptr));
}

/// The position of flat element `flat` of a tensor of `dims`, as "[i, j]".
static std::string positionString(const std::vector<int64_t> &dims,
                                  int64_t flat) {
  std::vector<int64_t> pos(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    pos[i] = dims[i] ? flat % dims[i] : 0;
    flat = dims[i] ? flat / dims[i] : 0;
  }
  return formatDims(pos);
}

Status lmopt::runtime::cuda::checkGatherErrors(const CudaApi &api,
                                               CUstream stream) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.streams.find(stream);
  if (it == r.streams.end())
    return Status::ok();
  int64_t record[3] = {-1, 0, 0};
  if (Status st = api.check(
          "cuMemcpyDtoH (gather error record)",
          api.cuMemcpyDtoH(record, it->second.record, kErrorRecordBytes));
      !st)
    return st;
  if (record[0] < 0)
    return Status::ok();
  if (Status st =
          api.check("cuMemsetD8 (gather error record)",
                    api.cuMemsetD8(it->second.record, 0xff, kErrorRecordBytes));
      !st)
    return st;
  auto step = it->second.steps.find(record[2]);
  if (step == it->second.steps.end())
    return Status::error(StatusCode::InvalidArgument,
                         "a gather step (since destroyed) met index " +
                             std::to_string(record[1]) + " out of range");
  const GatherInfo &g = step->second;
  std::string range =
      g.axisSize == 0
          ? "axis " + std::to_string(g.axis) + " has size 0, no index is valid"
          : "valid range [" + std::to_string(-g.axisSize) + ", " +
                std::to_string(g.axisSize - 1) + "]";
  return Status::error(
      StatusCode::InvalidArgument,
      "bundle '" + g.source + "': gather step '" + g.name + "': index " +
          std::to_string(record[1]) + " at position " +
          positionString(g.indicesDims, record[0]) +
          " is out of range for axis " + std::to_string(g.axis) + " of size " +
          std::to_string(g.axisSize) + " (" + range + ")");
}

/// Gives the executor an id and the stream's error record (allocated and
/// cleared with the stream's first gather step).
static Status registerStep(const CudaCheck &c, CudaGatherExecutor &exec,
                           GatherInfo info) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto [it, inserted] = r.streams.try_emplace(exec.env.stream);
  StreamRecord &stream = it->second;
  if (inserted) {
    const CudaApi &api = exec.env.api;
    Status st = api.check("cuMemAlloc (gather error record)",
                          api.cuMemAlloc(&stream.record, kErrorRecordBytes));
    if (st)
      st = api.check("cuMemsetD8 (gather error record)",
                     api.cuMemsetD8(stream.record, 0xff, kErrorRecordBytes));
    if (!st) {
      if (stream.record)
        (void)api.cuMemFree(stream.record);
      r.streams.erase(it);
      return c.error(st.message(), st.code());
    }
  }
  exec.id = r.nextId++;
  stream.steps.emplace(exec.id, std::move(info));
  exec.params.error = reinterpret_cast<long long *>(stream.record);
  exec.params.stepId = exec.id;
  return Status::ok();
}

Status
lmopt::runtime::cuda::buildGatherStep(const CudaCheck &c,
                                      std::unique_ptr<StepExecutor> &out) {
  const PlanStep &step = c.step;
  GatherShape shape;
  if (Status st = checkGatherStep(c, shape); !st)
    return st;
  const PlanTensor &data = c.operand(0), &indices = c.operand(1);
  if (dtypeSize(data.dtype) == 0)
    return c.error("data " + describe(data) + " has no element size");
  const int64_t axis = shape.axis;
  const bool rowScales = shape.rowScales;
  const size_t a = size_t(axis);
  const int64_t elementSize = int64_t(dtypeSize(data.dtype));
  int64_t outer = 0, inner = 0, count = 0, rows = 0, rowBytes = 0;
  if (!dimsProduct(data.dims, 0, a, outer) ||
      !dimsProduct(data.dims, a + 1, data.dims.size(), inner) ||
      !dimsProduct(indices.dims, 0, indices.dims.size(), count) ||
      __builtin_mul_overflow(inner, elementSize, &rowBytes) ||
      __builtin_mul_overflow(outer, count, &rows))
    return c.error("sizes overflow: data " + formatDims(data.dims) +
                       ", indices " + formatDims(indices.dims),
                   StatusCode::InvalidArgument);

  auto exec = std::make_unique<CudaGatherExecutor>(c.env);
  GatherParams &p = exec->params;
  p.outer = outer;
  p.count = count;
  p.axisSize = data.dims[a];
  p.indices64 = indices.dtype == DType::I64;
  exec->rows = rows;
  exec->dequantize = rowScales;
  exec->rowBytes = rowScales ? inner : rowBytes;
  exec->data = step.operands[0];
  exec->indices = step.operands[1];
  exec->output = step.results[0];
  if (rowScales) {
    exec->scales = step.operands[2];
    if (Status st =
            c.runtimeKernel("lmopt_gather_dequant_i8", exec->dequantKernel);
        !st)
      return st;
  } else {
    static const char *const kNames[5] = {
        "lmopt_gather_rows_u1", "lmopt_gather_rows_u2", "lmopt_gather_rows_u4",
        "lmopt_gather_rows_u8", "lmopt_gather_rows_u16"};
    for (int i = 0; i < 5; ++i)
      if (Status st = c.runtimeKernel(kNames[i], exec->copyKernels[i]); !st)
        return st;
  }
  GatherInfo info{c.source, step.name, axis, data.dims[a], indices.dims};
  if (Status st = registerStep(c, *exec, std::move(info)); !st)
    return st;
  out = std::move(exec);
  return Status::ok();
}
