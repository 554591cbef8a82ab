//===- Executor.cpp - Plan steps checked and bound to library steps ------===//
//
// One builder per step kind, found through a table. A builder checks the
// step's operand and result counts, dtypes and dims and its attributes (an
// attribute it does not know is refused by name: a newer compiler's step
// must not run with part of its meaning ignored), then prepares the library
// step. Aliasing is checked once for every kind: a result may share arena
// bytes with no operand and no other result, except a linear step's
// residual, which may be its output exactly (accumulated in place).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/Executor.h"
#include "lmopt/Format/AdamW.h"
#include "StepChecker.h"

#include "OmpRegionSync.h"
#include "lmopt/Runtime/CPU/GatherStep.h"
#include "lmopt/Runtime/CPU/KernelLibrary.h"
#include "lmopt/Runtime/CPU/LinearStep.h"
#include "lmopt/Runtime/CPU/MatMulStep.h"
#include "lmopt/Runtime/CPU/QuantLinearStep.h"
#include "lmopt/Runtime/CPU/ScatterStep.h"
#include "lmopt/Runtime/MatMulCheck.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <optional>

using namespace lmopt::runtime;

namespace {
//===----------------------------------------------------------------------===//
// Executors
//===----------------------------------------------------------------------===//

class LinearExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    auto f32 = [&](int64_t id) {
      return id < 0 ? nullptr : static_cast<const float *>(tensors[id]);
    };
    return step->run(tensors[input], rows,
                     step->packed() ? nullptr : tensors[weight], f32(bias),
                     f32(residual), static_cast<float *>(tensors[output]));
  }
  int64_t copiedWeight() const override { return step->packed() ? weight : -1; }

  std::unique_ptr<LinearStep> step;
  int64_t input = 0, weight = 0, bias = -1, residual = -1, output = 0;
  int64_t rows = 0;
};

class GatherExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    return step->run(tensors[data], tensors[indices], tensors[output],
                     scales < 0 ? nullptr
                                : static_cast<const float *>(tensors[scales]));
  }

  std::unique_ptr<GatherStep> step;
  int64_t data = 0, indices = 0, output = 0, scales = -1;
};

class GatherElementsExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    return step->run(tensors[data], tensors[indices], tensors[output]);
  }

  std::unique_ptr<GatherElementsStep> step;
  int64_t data = 0, indices = 0, output = 0;
};

class ScatterNDExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    return step->run(tensors[data], tensors[indices], tensors[updates],
                     tensors[output]);
  }

  std::unique_ptr<ScatterNDStep> step;
  int64_t data = 0, indices = 0, updates = 0, output = 0;
};

class MatMulExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    return step->run(static_cast<const float *>(tensors[lhs]),
                     static_cast<const float *>(tensors[rhs]),
                     static_cast<float *>(tensors[output]));
  }

  std::unique_ptr<MatMulStep> step;
  int64_t lhs = 0, rhs = 0, output = 0;
};

class CopyExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    if (bytes)
      std::memcpy(tensors[to], tensors[from], bytes);
    return Status::ok();
  }

  int64_t from = 0, to = 0;
  uint64_t bytes = 0;
};

/// Bytes (of its results, or of its operands for a kernel that reduces them,
/// such as a column sum) from which a kernel with a partitioned form splits
/// its rows between the threads. The team is the OpenMP team whose workers
/// still spin after the preceding product, so a split costs little:
/// BERT-base's batch-1 layer norms and casts (384 KiB) took 1.95 ms per run
/// on one thread and 1.22 ms split (bf16, 2 threads). When the team was
/// helper threads of its own that had to be woken, the threshold was 1 MiB:
/// on a busy machine a helper preempted inside its share made those layer
/// norms 0.24 -> 0.84 ms.
constexpr uint64_t kMinPartitionedBytes = 128 * 1024;
/// Shares per thread: a thread that starts late, or rows that cost unevenly,
/// leave less idle time at the end.
constexpr int64_t kSharesPerThread = 4;

class KernelExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    for (size_t i = 0; i < ids.size(); ++i)
      args[i] = tensors[ids[i]];
    if (!team) {
      function(args.data());
      return Status::ok();
    }
    team->run(part, args.data(), kSharesPerThread * team->size());
    return Status::ok();
  }

  KernelFunction function = nullptr;
  /// The kernel's share-of-the-rows form and the session's team, when the
  /// kernel has that form, the step is large enough to split and the session
  /// has several threads.
  KernelPartFunction part = nullptr;
  std::optional<KernelTeam> team;
  /// Operands then results.
  std::vector<uint32_t> ids;
  /// With symbolic tensors: the size of every symbolic dim of the operands
  /// then the results, in order; passed after the data pointers.
  std::vector<int64_t> sizes;
  /// A session runs on one thread at a time, so the argument array is reused.
  mutable std::vector<void *> args;
};

} // namespace

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

/// Linear steps with fewer rows read their weight in place.
static constexpr int64_t kMinPackedRows = 16;

/// The CPU's library steps run f32.
static Status expectF32(const StepCheck &c, const std::string &role,
                        const PlanTensor &t) {
  return c.expectDType(role, t, DType::F32);
}

/// Linear inputs: f32, or bf16 with an f32 output (mixed precision).
static Status expectF32OrBF16(const StepCheck &c, const std::string &role,
                              const PlanTensor &t) {
  if (t.dtype == DType::F32 || t.dtype == DType::BF16)
    return Status::ok();
  return c.expectDType(role, t, DType::F32);
}

static Status buildLinear(const StepChecker &c,
                          std::unique_ptr<StepExecutor> &out) {
  LinearShape shape;
  if (Status st = checkLinearStep(c, expectF32OrBF16, shape); !st)
    return st;
  const bool bf16 = c.operand(0).dtype == DType::BF16;
  if (bf16 && shape.outputDType != DType::F32)
    return c.error("writes a bf16 output; the CPU writes bf16 products in "
                   "f32",
                   StatusCode::Unsupported);
  const PlanTensor &weight = c.operand(1);
  auto exec = std::make_unique<LinearExecutor>();
  exec->input = c.step.operands[0];
  exec->weight = c.step.operands[1];
  exec->output = c.step.results[0];
  if (shape.bias >= 0)
    exec->bias = c.step.operands[size_t(shape.bias)];
  if (shape.residual >= 0)
    exec->residual = c.step.operands[size_t(shape.residual)];
  exec->rows = shape.rows;
  LinearStepDesc desc;
  desc.name = c.step.name;
  desc.inputFeatures = shape.k;
  desc.weightShape = weight.dims;
  desc.transposeWeight = shape.transpose;
  desc.transposeInput = shape.transposeInput;
  desc.hasBias = shape.hasBias;
  desc.activation = LinearActivation(shape.activation);
  desc.hasResidual = shape.hasResidual;
  desc.bf16Operands = bf16;
  // Static rows and a weight from the weights section: pack it once. Should
  // oneDNN refuse that form, the plain one still runs the step. With
  // symbolic rows the step is rebuilt, and the weight packed again, when a
  // run's rows differ from the last run's. A few rows (a decoding step)
  // stream the weight once and gain nothing from a packed copy: GPT-2
  // small's decode step took 21.5 ms packed and 18.2 ms plain (1 row, two
  // threads, docs/cpu-backend.md).
  if (!bf16 && !shape.transposeInput && c.context.packLinearWeights &&
      c.context.weights &&
      weight.storage == TensorStorage::Weight && exec->rows >= kMinPackedRows &&
      LinearStep::createPacked(
          c.context.cpu, desc, exec->rows,
          reinterpret_cast<const float *>(c.context.weights + weight.offset),
          exec->step)) {
    out = std::move(exec);
    return Status::ok();
  }
  // A primitive needs a positive row bound; zero rows run as a no-op.
  if (Status st = LinearStep::create(
          c.context.cpu, desc, std::max<int64_t>(exec->rows, 1), exec->step);
      !st)
    return c.withSource(st);
  out = std::move(exec);
  return Status::ok();
}

/// The name, data and indices (operands 0 and 1) of a checked gather step.
static void setGatherOperands(const StepChecker &c, int64_t axis,
                              GatherOperands &out) {
  const PlanTensor &data = c.operand(0), &indices = c.operand(1);
  out.name = c.step.name;
  out.dataDims = data.dims;
  out.elementSize = int64_t(dtypeSize(data.dtype));
  out.axis = axis;
  out.indicesDims = indices.dims;
  out.indices64 = indices.dtype == DType::I64;
}

static Status buildGather(const StepChecker &c,
                          std::unique_ptr<StepExecutor> &out) {
  GatherShape shape;
  if (Status st = checkGatherStep(c, shape); !st)
    return st;
  const bool rowScales = shape.rowScales;
  GatherStepDesc desc;
  setGatherOperands(c, shape.axis, desc);
  desc.rowScales = rowScales;
  auto exec = std::make_unique<GatherExecutor>();
  if (rowScales)
    exec->scales = c.step.operands[2];
  exec->data = c.step.operands[0];
  exec->indices = c.step.operands[1];
  exec->output = c.step.results[0];
  if (Status st = GatherStep::create(desc, exec->step); !st)
    return c.withSource(st);
  out = std::move(exec);
  return Status::ok();
}

static Status buildGatherElements(const StepChecker &c,
                                  std::unique_ptr<StepExecutor> &out) {
  int64_t axis = 0;
  if (Status st = checkGatherElementsStep(c, axis); !st)
    return st;
  GatherElementsStepDesc desc;
  setGatherOperands(c, axis, desc);
  auto exec = std::make_unique<GatherElementsExecutor>();
  exec->data = c.step.operands[0];
  exec->indices = c.step.operands[1];
  exec->output = c.step.results[0];
  if (Status st = GatherElementsStep::create(desc, exec->step); !st)
    return c.withSource(st);
  out = std::move(exec);
  return Status::ok();
}

static Status buildScatterND(const StepChecker &c,
                             std::unique_ptr<StepExecutor> &out) {
  int64_t reduction = 0;
  if (Status st = checkScatterNDStep(c, reduction); !st)
    return st;
  const PlanTensor &data = c.operand(0), &indices = c.operand(1),
                   &updates = c.operand(2);
  ScatterNDStepDesc desc;
  desc.name = c.step.name;
  desc.dataDims = data.dims;
  desc.dtype = data.dtype;
  desc.indicesDims = indices.dims;
  desc.indices64 = indices.dtype == DType::I64;
  desc.updatesDims = updates.dims;
  desc.reduction = ScatterReduction(reduction);
  auto exec = std::make_unique<ScatterNDExecutor>();
  exec->data = c.step.operands[0];
  exec->indices = c.step.operands[1];
  exec->updates = c.step.operands[2];
  exec->output = c.step.results[0];
  if (Status st = ScatterNDStep::create(desc, exec->step); !st)
    return c.withSource(st);
  out = std::move(exec);
  return Status::ok();
}

static Status buildMatMul(const StepChecker &c,
                          std::unique_ptr<StepExecutor> &out) {
  if (Status st = checkMatMulStep(c, expectF32); !st)
    return st;
  const PlanTensor &lhs = c.operand(0), &rhs = c.operand(1),
                   &output = c.result(0);
  MatMulStepDesc desc;
  desc.name = c.step.name;
  desc.lhsDims = lhs.dims;
  desc.rhsDims = rhs.dims;
  auto exec = std::make_unique<MatMulExecutor>();
  if (Status st = MatMulStep::create(c.context.cpu, desc, exec->step); !st)
    return c.withSource(st);
  if (Status st = c.expectDims("output", output, exec->step->outputDims(),
                               "numpy.matmul of lhs and rhs");
      !st)
    return st;
  exec->lhs = c.step.operands[0];
  exec->rhs = c.step.operands[1];
  exec->output = c.step.results[0];
  out = std::move(exec);
  return Status::ok();
}

static Status buildCopy(const StepChecker &c,
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
  auto exec = std::make_unique<CopyExecutor>();
  exec->from = c.step.operands[0];
  exec->to = c.step.results[0];
  exec->bytes = from.byteSize();
  out = std::move(exec);
  return Status::ok();
}

/// The rows of a gradient added into a zeroed table at their indices.
class GatherGradExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    auto *out = static_cast<float *>(tensors[output]);
    const auto *grad = static_cast<const float *>(tensors[gradient]);
    std::fill(out, out + rows * rowSize, 0.0f);
    for (int64_t p = 0; p < count; ++p) {
      int64_t index =
          indices64 ? static_cast<const int64_t *>(tensors[indices])[p]
                    : static_cast<const int32_t *>(tensors[indices])[p];
      if (index < -rows || index >= rows)
        return Status::error(StatusCode::InvalidArgument,
                             "gather_grad step '" + name + "': index " +
                                 std::to_string(index) +
                                 " is out of range for " +
                                 std::to_string(rows) + " rows");
      float *row = out + (index < 0 ? index + rows : index) * rowSize;
      const float *from = grad + p * rowSize;
      for (int64_t e = 0; e < rowSize; ++e)
        row[e] += from[e];
    }
    return Status::ok();
  }

  std::string name;
  int64_t gradient = 0, indices = 0, output = 0;
  int64_t rows = 0, rowSize = 0, count = 0;
  bool indices64 = true;
};

/// One AdamW update over a parameter, in place when the plan binds the
/// results to the operands' states; the elements split over the team.
class AdamWExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    auto scalar = [&](size_t i) {
      return *static_cast<const float *>(tensors[operands[i]]);
    };
    lmopt::adamw::Scalars s;
    s.lr = scalar(4);
    s.stepSize = scalar(5);
    s.biasCorrection2Sqrt = scalar(6);
    s.gradScale = scalar(7);
    s.clipCoef = scalar(8);
    const float decay = s.decay(constants);
    const auto *param = static_cast<const float *>(tensors[operands[0]]);
    const auto *grad = static_cast<const float *>(tensors[operands[1]]);
    const auto *m = static_cast<const float *>(tensors[operands[2]]);
    const auto *v = static_cast<const float *>(tensors[operands[3]]);
    auto *newParam = static_cast<float *>(tensors[results[0]]);
    auto *newM = static_cast<float *>(tensors[results[1]]);
    auto *newV = static_cast<float *>(tensors[results[2]]);
    const lmopt::adamw::Constants c = constants;
    const int64_t n = count;
    // Element i is read before it is written, so results may alias the
    // operands they replace.
    OmpRegionSync ompSync;
    ompSync.fork();
#pragma omp parallel num_threads(team) if (n >= 65536)
    {
      ompSync.enter();
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < n; ++i) {
        float p = param[i], mi = m[i], vi = v[i];
        lmopt::adamw::update(p, mi, vi, grad[i], s, c, decay);
        newParam[i] = p;
        newM[i] = mi;
        newV[i] = vi;
      }
      ompSync.leave();
    }
    ompSync.join();
    return Status::ok();
  }

  std::vector<uint32_t> operands, results;
  lmopt::adamw::Constants constants;
  int64_t count = 0;
  int team = 1;
};

static Status buildAdamW(const StepChecker &c,
                         std::unique_ptr<StepExecutor> &out) {
  auto exec = std::make_unique<AdamWExecutor>();
  double beta1, beta2, epsilon, weightDecay;
  if (Status st = checkAdamWStep(c, exec->count, beta1, beta2, epsilon,
                                 weightDecay);
      !st)
    return st;
  exec->constants =
      lmopt::adamw::Constants::from(beta1, beta2, epsilon, weightDecay);
  exec->operands.assign(c.step.operands.begin(), c.step.operands.end());
  exec->results.assign(c.step.results.begin(), c.step.results.end());
  exec->team = c.context.cpu.threads() > 0 ? c.context.cpu.threads()
                                           : omp_get_max_threads();
  out = std::move(exec);
  return Status::ok();
}

static Status buildGatherGrad(const StepChecker &c,
                              std::unique_ptr<StepExecutor> &out) {
  auto exec = std::make_unique<GatherGradExecutor>();
  if (Status st = checkGatherGradStep(c, exec->rows, exec->rowSize); !st)
    return st;
  const PlanTensor &indices = c.operand(1);
  if (!dimsProduct(indices.dims, 0, indices.dims.size(), exec->count))
    return c.error("indices " + describe(indices) + " are too many");
  exec->name = c.step.name;
  exec->indices64 = indices.dtype == DType::I64;
  exec->gradient = c.step.operands[0];
  exec->indices = c.step.operands[1];
  exec->output = c.step.results[0];
  out = std::move(exec);
  return Status::ok();
}

/// Writes a dense operand into the last rows of a state view along `axis`.
class AppendExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    copyStateView(tensors[value], static_cast<uint8_t *>(tensors[state]) + skip,
                  dims, capacity, elementSize, /*toState=*/true);
    return Status::ok();
  }

  int64_t value = 0, state = 0;
  /// Bytes from the state's start to the first written row.
  uint64_t skip = 0;
  std::vector<int64_t> dims, capacity;
  size_t elementSize = 0;
};

static Status buildAppend(const StepChecker &c,
                          std::unique_ptr<StepExecutor> &out) {
  int64_t axis = 0;
  if (Status st = checkAppendStep(c, axis); !st)
    return st;
  const PlanTensor &value = c.operand(0), &dest = c.result(0);
  const PlanState &state = c.context.program.states[size_t(dest.offset)];
  auto exec = std::make_unique<AppendExecutor>();
  exec->value = c.step.operands[0];
  exec->state = c.step.results[0];
  exec->dims = value.dims;
  exec->capacity = state.dims;
  exec->elementSize = dtypeSize(value.dtype);
  uint64_t stride = exec->elementSize;
  for (size_t d = size_t(axis) + 1; d < state.dims.size(); ++d)
    stride *= uint64_t(state.dims[d]);
  exec->skip =
      uint64_t(dest.dims[size_t(axis)] - value.dims[size_t(axis)]) * stride;
  out = std::move(exec);
  return Status::ok();
}

static Status buildKernel(const StepChecker &c,
                          std::unique_ptr<StepExecutor> &out) {
  std::string entry;
  std::vector<uint32_t> ids;
  std::vector<int64_t> sizes;
  if (Status st = c.checkKernelStep(entry, ids, sizes); !st)
    return st;
  if (!c.context.kernels)
    return c.error("calls kernel '" + entry +
                       "' but the bundle has no 'kernels' section",
                   StatusCode::NotFound);
  auto exec = std::make_unique<KernelExecutor>();
  if (Status st = c.context.kernels->lookup(entry, exec->function); !st)
    return c.error(st.message(), st.code());
  exec->ids = std::move(ids);
  exec->sizes = std::move(sizes);
  uint64_t resultBytes = 0, operandBytes = 0;
  for (uint32_t id : c.step.results)
    resultBytes += c.context.plan.tensors[id].byteSize();
  for (uint32_t id : c.step.operands)
    operandBytes += c.context.plan.tensors[id].byteSize();
  if (std::max(resultBytes, operandBytes) >= kMinPartitionedBytes)
    exec->part = c.context.kernels->lookupPartitioned(entry);
  const int threads = c.context.cpu.threads() > 0 ? c.context.cpu.threads()
                                                  : omp_get_max_threads();
  if (exec->part && threads > 1)
    exec->team.emplace(threads);
  exec->args.resize(exec->ids.size() + (exec->sizes.empty() ? 0 : 1));
  if (!exec->sizes.empty())
    exec->args.back() = exec->sizes.data();
  out = std::move(exec);
  return Status::ok();
}

static Status buildQuantLinear(const StepChecker &c,
                               std::unique_ptr<StepExecutor> &out) {
  return buildQuantLinearExecutor(c.context, c.step, out);
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

using StepBuilder = Status (*)(const StepChecker &,
                               std::unique_ptr<StepExecutor> &);

struct StepKindEntry {
  StepKind kind;
  StepBuilder build;
};

static const StepKindEntry kStepKinds[] = {
    {StepKind::Kernel, buildKernel},
    {StepKind::Linear, buildLinear},
    {StepKind::Attention, buildAttentionExecutor},
    {StepKind::Gather, buildGather},
    {StepKind::Copy, buildCopy},
    {StepKind::MatMul, buildMatMul},
    {StepKind::QuantLinear, buildQuantLinear},
    {StepKind::Append, buildAppend},
    {StepKind::GatherGrad, buildGatherGrad},
    {StepKind::AdamW, buildAdamW},
    {StepKind::GatherElements, buildGatherElements},
    {StepKind::AttentionGrad, buildAttentionGradExecutor},
    {StepKind::ScatterND, buildScatterND},
};

Status
lmopt::runtime::createCpuStepExecutor(const CpuStepContext &context,
                                      const PlanStep &step,
                                      std::unique_ptr<StepExecutor> &out) {
  StepChecker checker(context, step);
  const StepKindEntry *entry =
      std::find_if(std::begin(kStepKinds), std::end(kStepKinds),
                   [&](const StepKindEntry &e) { return e.kind == step.kind; });
  if (entry == std::end(kStepKinds))
    return checker.error("has a kind this executor cannot run",
                         StatusCode::Unsupported);
  if (Status st = entry->build(checker, out); !st)
    return st;
  if (Status st = checker.checkStateViews(); !st)
    return st;
  return checker.checkAliasing();
}
