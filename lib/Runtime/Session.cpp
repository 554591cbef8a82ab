//===- Session.cpp - Running a compiled bundle ----------------------------===//
//
// Creation does all the checking a plan allows before anything runs, so that
// run() only has to check the caller's inputs: the plan is parsed against
// the weights section, each step is validated and prepared by its executor
// (lib/Runtime/CPU/Executor.cpp), and every tensor that is not an input gets
// its final address.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Session.h"
#include "lmopt/Format/PlanShapes.h"
#include "lmopt/Format/Requirements.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Runtime/CPU/Executor.h"
#include "lmopt/Runtime/CPU/KernelLibrary.h"
#include "lmopt/Runtime/CPU/LinearStep.h"

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <new>

using namespace lmopt::runtime;

/// Generated kernels expect 64-byte aligned buffers (KernelCodegen.h).
static constexpr size_t kKernelAlignment = 64;

/// Anonymous pages: zero-filled and page-aligned, and only the pages a run
/// touches take memory, so a generous arena bound costs address space only.
struct Session::AlignedBuffer {
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer() {
    if (data)
      munmap(data, size);
  }

  /// False when the mapping fails.
  bool allocate(uint64_t bytes) {
    if (bytes == 0 || bytes > SIZE_MAX)
      return bytes == 0;
    void *p = mmap(nullptr, size_t(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return false;
    data = static_cast<uint8_t *>(p);
    size = size_t(bytes);
    return true;
  }

  uint8_t *data = nullptr;
  size_t size = 0;
};

TensorView TensorView::of(const Tensor &tensor) {
  TensorView view;
  view.dtype = tensor.dtype;
  view.dims = tensor.shape.data();
  view.rank = tensor.shape.size();
  view.data = tensor.data.data();
  view.byteSize = tensor.data.size();
  return view;
}

static std::string describe(const ValueInfo &info) {
  std::string text = std::string(dtypeName(info.dtype)) + " [";
  for (size_t d = 0; d < info.dims.size(); ++d)
    text += (d ? ", " : "") + (info.dims[d] < 0
                                   ? "<=" + std::to_string(info.maxDims[d])
                                   : std::to_string(info.dims[d]));
  return text + "]";
}

namespace {
struct ByteRange {
  uint64_t begin, end;
};
} // namespace

/// The byte ranges of the weights section that something reads at run time
/// in place: every weight tensor that is an operand of a step, except as a
/// linear step's weight (which the step may have copied), or a plan output.
static std::vector<ByteRange> weightsReadInPlace(const Plan &plan) {
  std::vector<ByteRange> ranges;
  auto add = [&](uint32_t id) {
    const PlanTensor &t = plan.tensors[id];
    if (t.storage == TensorStorage::Weight && t.byteSize())
      ranges.push_back({t.offset, t.offset + t.byteSize()});
  };
  for (const PlanStep &step : plan.steps)
    for (size_t i = 0; i < step.operands.size(); ++i)
      if (step.kind != StepKind::Linear || i != 1)
        add(step.operands[i]);
  for (const PlanValue &v : plan.outputs)
    add(v.tensor);
  return ranges;
}

/// Drops the resident pages that lie wholly inside `weight` and hold no byte
/// of `stillRead` from the process. The mapping is a private, read-only map
/// of the file, so a page touched again is read again from the file; the
/// section's checksum was verified before any step copied from it.
static void releaseWeightPages(const uint8_t *weights, const PlanTensor &weight,
                               const std::vector<ByteRange> &stillRead) {
  static const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t base = reinterpret_cast<uintptr_t>(weights);
  uint64_t begin = (base + weight.offset + page - 1) / page * page - base;
  uint64_t end =
      (base + weight.offset + weight.byteSize()) / page * page - base;
  if (begin >= end)
    return;
  for (const ByteRange &r : stillRead)
    if (r.begin < end && begin < r.end)
      return;
  // Advice only: a failure leaves the pages resident, which is harmless.
  madvise(const_cast<uint8_t *>(weights + begin), size_t(end - begin),
          MADV_DONTNEED);
}

Session::Session() = default;
Session::~Session() = default;

Status Session::create(const std::string &path, const SessionOptions &options,
                       std::unique_ptr<Session> &out) {
  std::unique_ptr<Session> session(new Session());
  session->path_ = path;
  if (Status st = BundleReader::open(path, session->reader_); !st)
    return st;
  const BundleReader &reader = *session->reader_;
  auto bundleError = [&](StatusCode code, const std::string &what) {
    return Status::error(code, "bundle '" + path + "' " + what);
  };

  if (reader.findSection("plan") < 0)
    return bundleError(StatusCode::NotFound, "has no 'plan' section");
  // Before any code of the bundle is loaded: a kernel built for a newer CPU
  // must fail here, not with an illegal instruction.
  if (reader.findSection("requires") >= 0) {
    SectionView requiresView;
    if (Status st = reader.section("requires", requiresView); !st)
      return st;
    if (Status st =
            checkRequirements(requiresView.data, requiresView.size, path);
        !st)
      return st;
  }
  SectionView planView, weightsView;
  if (Status st = reader.section("plan", planView); !st)
    return st;
  if (reader.findSection("weights") >= 0)
    if (Status st = reader.section("weights", weightsView); !st)
      return st;
  if (reader.findSection("meta") >= 0) {
    SectionView metaView;
    if (Status st = reader.section("meta", metaView); !st)
      return st;
    session->meta_.assign(reinterpret_cast<const char *>(metaView.data),
                          metaView.size);
  }
  Plan &plan = session->plan_;
  if (Status st =
          parsePlan(planView.data, planView.size, weightsView.size, path, plan);
      !st)
    return st;

  CpuContext::Options cpuOptions;
  cpuOptions.threads = options.threads;
  if (Status st = CpuContext::create(cpuOptions, session->cpu_); !st)
    return st;

  bool hasKernelStep = false;
  for (const PlanStep &step : plan.steps)
    hasKernelStep |= step.kind == StepKind::Kernel;
  if (hasKernelStep && reader.findSection("kernels") >= 0) {
    SectionView kernelsView;
    if (Status st = reader.section("kernels", kernelsView); !st)
      return st;
    if (Status st = KernelLibrary::load(kernelsView.data, kernelsView.size,
                                        "kernels section of '" + path + "'",
                                        session->kernels_);
        !st)
      return st;
  }

  session->packLinearWeights_ = options.packLinearWeights;
  StepBuildContext context{plan, *session->cpu_,   session->kernels_.get(),
                           path, weightsView.data, options.packLinearWeights};
  // Steps over symbolic dims are built again, packed for the rows of the
  // first run, before it; packing them for the bounds now would only cost
  // time and memory.
  StepBuildContext symbolicContext = context;
  symbolicContext.packLinearWeights = false;
  std::vector<ByteRange> weightsStillRead = weightsReadInPlace(plan);
  for (const PlanStep &step : plan.steps) {
    std::unique_ptr<StepExecutor> executor;
    bool symbolic = false;
    for (const auto *ids : {&step.operands, &step.results})
      for (uint32_t id : *ids)
        symbolic |= plan.tensors[id].isSymbolic();
    session->symbolicStep_.push_back(symbolic);
    if (Status st = createStepExecutor(symbolic ? symbolicContext : context,
                                       step, executor);
        !st)
      return st;
    // Released step by step, so that the copies and the mapped originals are
    // not resident together.
    if (int64_t copied = executor->copiedWeight(); copied >= 0)
      releaseWeightPages(weightsView.data, plan.tensors[size_t(copied)],
                         weightsStillRead);
    session->steps_.push_back(std::move(executor));
  }
  if (plan.isSymbolic()) {
    session->runPlan_ = plan;
    session->rebuildAll_ = true;
  }

  session->arena_ = std::make_unique<AlignedBuffer>();
  if (plan.arenaSize && !session->arena_->allocate(plan.arenaSize))
    return bundleError(StatusCode::IoError,
                       "needs a " + std::to_string(plan.arenaSize) +
                           "-byte arena, which cannot be allocated");
  auto *weights = const_cast<uint8_t *>(weightsView.data);
  for (const PlanTensor &t : plan.tensors) {
    uint8_t *base = t.storage == TensorStorage::Weight  ? weights
                    : t.storage == TensorStorage::Arena ? session->arena_->data
                                                        : nullptr;
    session->tensors_.push_back(base ? base + t.offset : nullptr);
  }

  // Inputs: element alignment for every reader, 64 bytes for kernels.
  auto valueInfo = [&](const PlanValue &v) {
    const PlanTensor &t = plan.tensors[v.tensor];
    ValueInfo info{v.name, t.dtype, t.dims, t.dims};
    for (size_t d = 0; d < t.dimExprs.size(); ++d)
      if (t.dimExprs[d] >= 0)
        info.dims[d] = -1;
    return info;
  };
  for (const PlanValue &v : plan.inputs) {
    const PlanTensor &t = plan.tensors[v.tensor];
    session->inputs_.push_back(valueInfo(v));
    session->inputAlignment_.push_back(dtypeSize(t.dtype));
  }
  session->staging_.resize(plan.inputs.size());
  for (const PlanStep &step : plan.steps)
    if (step.kind == StepKind::Kernel)
      for (uint32_t id : step.operands)
        if (plan.tensors[id].storage == TensorStorage::Input)
          session->inputAlignment_[plan.tensors[id].offset] = kKernelAlignment;
  for (const PlanValue &v : plan.outputs)
    session->outputs_.push_back(valueInfo(v));

  session->profiling_ = options.profile;
  if (options.profile)
    for (const PlanStep &step : plan.steps)
      session->profile_.push_back({step.name, step.kind, 0, 0});
  out = std::move(session);
  return Status::ok();
}

Status Session::bindInputs(const NamedTensorView *inputs, size_t count) {
  auto invalid = [](const std::string &message) {
    return Status::error(StatusCode::InvalidArgument, message);
  };
  std::vector<const TensorView *> bound(inputs_.size(), nullptr);
  for (size_t i = 0; i < count; ++i) {
    const NamedTensorView &given = inputs[i];
    size_t index = 0;
    while (index < inputs_.size() && inputs_[index].name != given.name)
      ++index;
    if (index == inputs_.size()) {
      std::string known;
      for (const ValueInfo &info : inputs_)
        known += (known.empty() ? "'" : ", '") + info.name + "'";
      return invalid("unknown input '" + std::string(given.name) +
                     "'; the model's inputs are " +
                     (known.empty() ? "none" : known));
    }
    if (bound[index])
      return invalid("input '" + inputs_[index].name + "' is given twice");
    bound[index] = &given.tensor;
  }
  std::string missing;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!bound[i])
      missing += (missing.empty() ? "'" : ", '") + inputs_[i].name + "' (" +
                 describe(inputs_[i]) + ")";
  if (!missing.empty())
    return invalid("missing input " + missing);

  for (size_t i = 0; i < inputs_.size(); ++i) {
    const ValueInfo &info = inputs_[i];
    const TensorView &view = *bound[i];
    if (view.dtype != info.dtype)
      return invalid("input '" + info.name + "' has dtype " +
                     dtypeName(view.dtype) + "; the model expects " +
                     describe(info));
    bool symbolic = plan_.isSymbolic();
    if (view.rank != info.dims.size() ||
        (view.rank && (!view.dims ||
                       (!symbolic && !std::equal(info.dims.begin(),
                                                 info.dims.end(), view.dims)))))
      return invalid(
          "input '" + info.name + "' has shape " +
          (view.rank && !view.dims
               ? "(null dims of rank " + std::to_string(view.rank) + ")"
               : formatDims(view.dims, view.rank)) +
          "; the model expects " + describe(info));
  }
  if (plan_.isSymbolic())
    if (Status st = bindShapes(bound); !st)
      return st;
  const Plan &plan = plan_.isSymbolic() ? runPlan_ : plan_;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const ValueInfo &info = inputs_[i];
    const TensorView &view = *bound[i];
    const PlanTensor &t = plan.tensors[plan.inputs[i].tensor];
    uint64_t bytes = t.byteSize();
    if (view.byteSize != bytes)
      return invalid("input '" + info.name + "' has " +
                     std::to_string(view.byteSize) + " bytes of data; " +
                     dtypeName(t.dtype) + " " + formatDims(t.dims) + " needs " +
                     std::to_string(bytes));
    if (bytes && !view.data)
      return invalid("input '" + info.name + "' has null data");
    void *data = const_cast<void *>(view.data);
    if (bytes && reinterpret_cast<uintptr_t>(data) % inputAlignment_[i] != 0) {
      if (!staging_[i]) {
        auto buffer = std::make_unique<AlignedBuffer>();
        if (!buffer->allocate(bytes))
          return Status::error(StatusCode::IoError,
                               "cannot allocate " + std::to_string(bytes) +
                                   " bytes to align input '" + info.name + "'");
        staging_[i] = std::move(buffer);
      }
      std::memcpy(staging_[i]->data, data, bytes);
      data = staging_[i]->data;
    }
    tensors_[plan_.inputs[i].tensor] = data;
  }
  return Status::ok();
}

Status Session::bindShapes(const std::vector<const TensorView *> &bound) {
  std::vector<std::vector<int64_t>> inputDims;
  inputDims.reserve(bound.size());
  for (const TensorView *view : bound)
    inputDims.emplace_back(view->dims, view->dims + view->rank);
  PlanShapes shapes;
  if (Status st = evaluatePlanShapes(plan_, inputDims, shapes); !st)
    return Status::error(st.code(),
                         st.code() == StatusCode::InvalidArgument
                             ? st.message()
                             : "bundle '" + path_ + "': " + st.message());
  if (shapes.symbols == runSymbols_ && !rebuildAll_)
    return Status::ok();
  std::vector<bool> changed(plan_.tensors.size(), false);
  for (size_t i = 0; i < plan_.tensors.size(); ++i) {
    std::vector<int64_t> &dims = runPlan_.tensors[i].dims;
    if (dims != shapes.dims[i] || rebuildAll_) {
      dims = std::move(shapes.dims[i]);
      changed[i] = true;
    }
  }
  // Should a step fail to build, the next run rebuilds them all.
  rebuildAll_ = true;
  // Rebuilt steps read the weights section in place (nothing is packed for
  // one shape).
  SectionView weightsView;
  if (reader_->findSection("weights") >= 0)
    if (Status st = reader_->section("weights", weightsView); !st)
      return st;
  StepBuildContext context{runPlan_,         *cpu_,
                           kernels_.get(),   path_,
                           weightsView.data, packLinearWeights_};
  std::vector<ByteRange> weightsStillRead = weightsReadInPlace(runPlan_);
  for (size_t s = 0; s < runPlan_.steps.size(); ++s) {
    if (!symbolicStep_[s])
      continue;
    const PlanStep &step = runPlan_.steps[s];
    bool stepChanged = false;
    for (const auto *ids : {&step.operands, &step.results})
      for (uint32_t id : *ids)
        stepChanged |= changed[id];
    if (!stepChanged)
      continue;
    std::unique_ptr<StepExecutor> executor;
    if (Status st = createStepExecutor(context, step, executor); !st)
      return st;
    steps_[s] = std::move(executor);
    if (int64_t copied = steps_[s]->copiedWeight(); copied >= 0)
      releaseWeightPages(weightsView.data, runPlan_.tensors[size_t(copied)],
                         weightsStillRead);
  }
  runSymbols_ = std::move(shapes.symbols);
  rebuildAll_ = false;
  return Status::ok();
}

Status Session::execute(const NamedTensorView *inputs, size_t count) {
  if (count && !inputs)
    return Status::error(StatusCode::InvalidArgument,
                         "session run: null inputs for a count of " +
                             std::to_string(count));
  if (Status st = bindInputs(inputs, count); !st)
    return st;
  using Clock = std::chrono::steady_clock;
  for (size_t i = 0; i < steps_.size(); ++i) {
    Clock::time_point start;
    if (profiling_)
      start = Clock::now();
    if (Status st = steps_[i]->run(tensors_.data()); !st)
      return st;
    if (profiling_) {
      profile_[i].calls += 1;
      profile_[i].seconds +=
          std::chrono::duration<double>(Clock::now() - start).count();
    }
  }
  return Status::ok();
}

const void *Session::outputData(size_t index) const {
  return tensors_[plan_.outputs[index].tensor];
}

const PlanTensor &Session::outputTensor(size_t index) const {
  const Plan &plan = plan_.isSymbolic() ? runPlan_ : plan_;
  return plan.tensors[plan.outputs[index].tensor];
}

Status Session::run(const std::vector<NamedTensorView> &inputs,
                    std::vector<NamedTensor> &outputs) {
  outputs.clear();
  if (Status st = execute(inputs.data(), inputs.size()); !st)
    return st;
  outputs.resize(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const PlanTensor &t = outputTensor(i);
    NamedTensor &o = outputs[i];
    o.name = outputs_[i].name;
    o.tensor.dtype = t.dtype;
    o.tensor.shape = t.dims;
    const auto *data = static_cast<const uint8_t *>(outputData(i));
    o.tensor.data.assign(data, data + t.byteSize());
  }
  return Status::ok();
}

Status Session::run(const std::vector<NamedTensor> &inputs,
                    std::vector<NamedTensor> &outputs) {
  std::vector<NamedTensorView> views;
  views.reserve(inputs.size());
  for (const NamedTensor &input : inputs)
    views.push_back({input.name, TensorView::of(input.tensor)});
  return run(views, outputs);
}

void Session::resetProfile() {
  for (StepProfile &p : profile_) {
    p.calls = 0;
    p.seconds = 0;
  }
}
