//===- Session.cpp - Running a compiled bundle ----------------------------===//
//
// Creation does all the checking a program allows before anything runs, so
// that run() only has to check the caller's inputs and the states' dims:
// the program is parsed against the weights section, its devices are
// created, each step of each entry is validated and prepared by its
// device, and every tensor that is not an input gets its final address.
// The states (SessionState.cpp) are created with their initial values; the
// weights come from the mapped section or are rebuilt (SessionWeights.cpp).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Session.h"
#include "SessionImpl.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/PlanShapes.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace lmopt::runtime;

/// Generated kernels expect 64-byte aligned buffers (KernelCodegen.h).
static constexpr size_t kKernelAlignment = 64;

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

/// The byte ranges of the weights section that something reads at run time
/// in place, in any entry: every weight tensor that is an operand of a step,
/// except as a linear step's weight (which the step may have copied), or an
/// output.
static std::vector<std::pair<uint64_t, uint64_t>>
weightsReadInPlace(const Program &program) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const Plan &plan : program.entries) {
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
  }
  return ranges;
}

/// Drops the resident pages that lie wholly inside `weight` and hold no byte
/// of `stillRead` from the process. The mapping is a private, read-only map
/// of the file, so a page touched again is read again from the file; the
/// section's checksum was verified before any step copied from it.
static void releaseWeightPages(
    const uint8_t *weights, const PlanTensor &weight,
    const std::vector<std::pair<uint64_t, uint64_t>> &stillRead) {
  static const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t base = reinterpret_cast<uintptr_t>(weights);
  uint64_t begin = (base + weight.offset + page - 1) / page * page - base;
  uint64_t end =
      (base + weight.offset + weight.byteSize()) / page * page - base;
  if (begin >= end)
    return;
  for (const auto &[readBegin, readEnd] : stillRead)
    if (readBegin < end && begin < readEnd)
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
  if (reader.findSection("plan") < 0)
    return Status::error(StatusCode::NotFound,
                         "bundle '" + path + "' has no 'plan' section");
  SectionView planView;
  if (Status st = reader.section("plan", planView); !st)
    return st;
  if (Status st = session->loadWeights(options); !st)
    return st;
  if (reader.findSection("meta") >= 0) {
    SectionView metaView;
    if (Status st = reader.section("meta", metaView); !st)
      return st;
    session->meta_.assign(reinterpret_cast<const char *>(metaView.data),
                          metaView.size);
  }
  if (Status st = parsePlan(planView.data, planView.size, session->weightsSize_,
                            path, session->program_);
      !st)
    return st;
  session->packLinearWeights_ = options.packLinearWeights;
  session->profiling_ = options.profile;
  session->weightsReadInPlace_ = weightsReadInPlace(session->program_);

  if (Status st = session->createDevices(options); !st)
    return st;
  // The first device that records runs; its host memory holds the host's
  // arena (pinned pages: copies of outputs are faster, and recordable).
  int pinningDevice = -1;
  for (size_t d = 1; d < session->devices_.size(); ++d)
    if (pinningDevice < 0 && session->devices_[d]->canCapture())
      pinningDevice = int(d);
  if (options.recordRuns && !options.profile)
    session->recordDevice_ = pinningDevice;
  if (Status st = session->createStates(); !st)
    return st;
  const Program &program = session->program_;
  // One arena per device, large enough for every entry (entries run one at
  // a time).
  for (size_t d = 0; d < program.devices.size(); ++d) {
    uint64_t bytes = 0;
    for (const Plan &plan : program.entries)
      bytes = std::max(bytes, plan.arenaSize(uint32_t(d)));
    Device &allocator = d == 0 && pinningDevice >= 0
                            ? *session->devices_[size_t(pinningDevice)]
                            : *session->devices_[d];
    if (Status st = d == 0 ? allocator.allocateHost(bytes, session->arenas_[d])
                           : allocator.allocate(bytes, session->arenas_[d]);
        !st)
      return Status::error(st.code(),
                           "bundle '" + path + "' needs a " +
                               std::to_string(bytes) + "-byte arena on " +
                               program.devices[d].name + ": " + st.message());
  }
  for (size_t e = 0; e < program.entries.size(); ++e)
    if (Status st = session->createEntry(e, options); !st)
      return st;
  out = std::move(session);
  return Status::ok();
}

Status Session::createDevices(const SessionOptions &options) {
  const BundleReader &reader = *reader_;
  DeviceOptions deviceOptions;
  deviceOptions.threads = options.threads;
  deviceOptions.allowTf32 = options.allowTf32;
  devices_.resize(program_.devices.size());
  deviceWeights_.resize(program_.devices.size());
  arenas_.resize(program_.devices.size());
  std::vector<std::string> known = knownDevices();
  for (size_t d = 0; d < program_.devices.size(); ++d) {
    const std::string &name = program_.devices[d].name;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string names;
      for (const std::string &k : known)
        names += (names.empty() ? "'" : ", '") + k + "'";
      return Status::error(StatusCode::Unsupported,
                           "bundle '" + path_ + "' runs on device '" + name +
                               "', which this runtime does not have (it has " +
                               names + ")");
    }
    if (Status st = createDevice(name, deviceOptions, devices_[d]); !st)
      return st;
  }
  // Before any code of the bundle is loaded: a kernel built for a newer CPU
  // or GPU must fail here, not with an illegal instruction. Each device
  // checks its own lines.
  if (reader.findSection("requires") >= 0) {
    SectionView requiresView;
    if (Status st = reader.section("requires", requiresView); !st)
      return st;
    for (const std::unique_ptr<Device> &device : devices_)
      if (Status st = device->checkRequirements(requiresView.data,
                                                requiresView.size, path_);
          !st)
        return st;
  }
  for (size_t d = 0; d < program_.devices.size(); ++d) {
    const PlanDevice &device = program_.devices[d];
    bool hasKernelStep = false, hasWeight = false;
    for (const Plan &plan : program_.entries) {
      for (const PlanStep &step : plan.steps)
        hasKernelStep |= step.kind == StepKind::Kernel && step.device == d;
      for (const PlanTensor &t : plan.tensors)
        hasWeight |= t.storage == TensorStorage::Weight && t.device == d;
    }
    // Without the section, a kernel step fails naming it when it is built.
    if (hasKernelStep && !device.kernels.empty() &&
        reader.findSection(device.kernels) >= 0) {
      SectionView kernelsView;
      if (Status st = reader.section(device.kernels, kernelsView); !st)
        return st;
      if (Status st = devices_[d]->loadKernels(
              kernelsView.data, kernelsView.size,
              device.kernels + " section of '" + path_ + "'");
          !st)
        return st;
    }
    // The host reads the mapping; another device gets its own copy.
    if (d == 0 || !hasWeight || !weights_)
      continue;
    if (Status st = devices_[d]->allocate(weightsSize_, deviceWeights_[d]); !st)
      return st;
    if (Status st =
            devices_[d]->copy(deviceWeights_[d]->data(), weights_, weightsSize_,
                              Device::CopyKind::HostToDevice);
        !st)
      return st;
  }
  return Status::ok();
}

/// The entry's inputs or outputs as ValueInfo.
static std::vector<ValueInfo> valueInfos(const Plan &plan,
                                         const std::vector<PlanValue> &values) {
  std::vector<ValueInfo> infos;
  for (const PlanValue &v : values) {
    const PlanTensor &t = plan.tensors[v.tensor];
    ValueInfo info{v.name, t.dtype, t.dims, t.dims};
    for (size_t d = 0; d < t.dimExprs.size(); ++d)
      if (t.dimExprs[d] >= 0)
        info.dims[d] = -1;
    infos.push_back(std::move(info));
  }
  return infos;
}

Status Session::createEntry(size_t index, const SessionOptions &options) {
  const Plan &plan = program_.entries[index];
  auto entry = std::make_unique<Entry>();
  entry->index = index;
  entry->source =
      program_.entries.size() > 1 ? path_ + "' entry '" + plan.name : path_;
  StepBuildContext context{program_, plan, entry->source, weights_,
                           options.packLinearWeights};
  // Steps over symbolic dims are built again, packed for the rows of the
  // first run, before it; packing them for the bounds now would only cost
  // time and memory.
  StepBuildContext symbolicContext = context;
  symbolicContext.packWeights = false;
  for (const PlanStep &step : plan.steps) {
    std::unique_ptr<StepExecutor> executor;
    bool symbolic = false;
    for (const auto *ids : {&step.operands, &step.results})
      for (uint32_t id : *ids)
        symbolic |= plan.tensors[id].isSymbolic();
    entry->symbolicStep.push_back(symbolic);
    if (Status st = devices_[step.device]->createStep(
            symbolic ? symbolicContext : context, step, executor);
        !st)
      return st;
    // Released step by step, so that the copies and the mapped originals are
    // not resident together.
    if (int64_t copied = executor->copiedWeight();
        copied >= 0 && weights_ && !ownedWeights_)
      releaseWeightPages(weights_, plan.tensors[size_t(copied)],
                         weightsReadInPlace_);
    entry->steps.push_back(std::move(executor));
  }
  if (plan.isSymbolic()) {
    entry->runPlan = plan;
    entry->rebuildAll = true;
  }

  for (const PlanTensor &t : plan.tensors) {
    void *data = nullptr;
    switch (t.storage) {
    case TensorStorage::Input:
      break; // bound by each run
    case TensorStorage::Weight:
      data = const_cast<uint8_t *>(
          t.device == 0
              ? weights_
              : static_cast<const uint8_t *>(deviceWeights_[t.device]->data()));
      data = static_cast<uint8_t *>(data) + t.offset;
      break;
    case TensorStorage::Arena:
      data = static_cast<uint8_t *>(arenas_[t.device]->data()) + t.offset;
      break;
    case TensorStorage::State:
      data = states_[size_t(t.offset)]->buffer->data();
      break;
    }
    entry->tensors.push_back(data);
  }

  // Inputs: element alignment for every reader, 64 bytes for kernels.
  EntryInfo info;
  info.name = plan.name;
  info.inputs = valueInfos(plan, plan.inputs);
  info.outputs = valueInfos(plan, plan.outputs);
  for (const PlanStateUse &use : plan.stateReads)
    info.stateReads.push_back(program_.states[use.state].name);
  for (const PlanStateUse &use : plan.stateWrites)
    info.stateWrites.push_back(program_.states[use.state].name);
  for (const PlanValue &v : plan.inputs)
    entry->inputAlignment.push_back(dtypeSize(plan.tensors[v.tensor].dtype));
  entry->staging.resize(plan.inputs.size());
  for (const PlanStep &step : plan.steps)
    if (step.kind == StepKind::Kernel)
      for (uint32_t id : step.operands)
        if (plan.tensors[id].storage == TensorStorage::Input)
          entry->inputAlignment[plan.tensors[id].offset] = kKernelAlignment;

  entry->recordable = recordDevice_ >= 0 && !plan.steps.empty();
  for (const PlanStep &step : plan.steps)
    entry->recordable &= int(step.device) == recordDevice_;
  if (entry->recordable) {
    entry->pinnedInputs.resize(plan.inputs.size());
    for (size_t i = 0; i < plan.inputs.size(); ++i)
      if (Status st = devices_[size_t(recordDevice_)]->allocateHost(
              plan.tensors[plan.inputs[i].tensor].byteSize(),
              entry->pinnedInputs[i]);
          !st)
        return st;
  }

  entry->profileOffset = profile_.size();
  if (profiling_)
    for (size_t i = 0; i < plan.steps.size(); ++i)
      profile_.push_back({plan.name, plan.steps[i].name, plan.steps[i].kind,
                          uint32_t(i), 0, 0});
  entryInfos_.push_back(std::move(info));
  entries_.push_back(std::move(entry));
  return Status::ok();
}

std::string Session::entryNames() const {
  std::string names;
  for (const EntryInfo &info : entryInfos_)
    names += (names.empty() ? "'" : ", '") + info.name + "'";
  return names;
}

long Session::findEntry(std::string_view name) const {
  for (size_t i = 0; i < entryInfos_.size(); ++i)
    if (entryInfos_[i].name == name)
      return long(i);
  return -1;
}

Status Session::findEntry(std::string_view name, size_t &out) const {
  long index = findEntry(name);
  if (index < 0)
    return Status::error(StatusCode::InvalidArgument,
                         "bundle '" + path_ + "' has no entry '" +
                             std::string(name) + "'; its entries are " +
                             entryNames());
  out = size_t(index);
  return Status::ok();
}

Status Session::bindInputs(Entry &entry, const NamedTensorView *inputs,
                           size_t count) {
  auto invalid = [](const std::string &message) {
    return Status::error(StatusCode::InvalidArgument, message);
  };
  const Plan &plan = program_.entries[entry.index];
  const std::vector<ValueInfo> &infos = entryInfos_[entry.index].inputs;
  std::vector<const TensorView *> bound(infos.size(), nullptr);
  for (size_t i = 0; i < count; ++i) {
    const NamedTensorView &given = inputs[i];
    size_t index = 0;
    while (index < infos.size() && infos[index].name != given.name)
      ++index;
    if (index == infos.size()) {
      std::string known;
      for (const ValueInfo &info : infos)
        known += (known.empty() ? "'" : ", '") + info.name + "'";
      return invalid("unknown input '" + std::string(given.name) + "'; " +
                     (entries_.size() > 1
                          ? "the inputs of entry '" + plan.name + "' are "
                          : std::string("the model's inputs "
                                        "are ")) +
                     (known.empty() ? "none" : known));
    }
    if (bound[index])
      return invalid("input '" + infos[index].name + "' is given twice");
    bound[index] = &given.tensor;
  }
  std::string missing;
  for (size_t i = 0; i < infos.size(); ++i)
    if (!bound[i])
      missing += (missing.empty() ? "'" : ", '") + infos[i].name + "' (" +
                 describe(infos[i]) + ")";
  if (!missing.empty())
    return invalid("missing input " + missing);

  for (size_t i = 0; i < infos.size(); ++i) {
    const ValueInfo &info = infos[i];
    const TensorView &view = *bound[i];
    if (view.dtype != info.dtype)
      return invalid("input '" + info.name + "' has dtype " +
                     dtypeName(view.dtype) + "; the model expects " +
                     describe(info));
    bool symbolic = plan.isSymbolic();
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
  if (Status st = checkStateReads(entry); !st)
    return st;
  if (plan.isSymbolic())
    if (Status st = bindShapes(entry, bound); !st)
      return st;
  const Plan &runPlan = plan.isSymbolic() ? entry.runPlan : plan;
  for (size_t i = 0; i < infos.size(); ++i) {
    const ValueInfo &info = infos[i];
    const TensorView &view = *bound[i];
    const PlanTensor &t = runPlan.tensors[runPlan.inputs[i].tensor];
    uint64_t bytes = t.byteSize();
    if (view.byteSize != bytes)
      return invalid("input '" + info.name + "' has " +
                     std::to_string(view.byteSize) + " bytes of data; " +
                     dtypeName(t.dtype) + " " + formatDims(t.dims) + " needs " +
                     std::to_string(bytes));
    if (bytes && !view.data)
      return invalid("input '" + info.name + "' has null data");
    void *data = const_cast<void *>(view.data);
    if (bytes &&
        reinterpret_cast<uintptr_t>(data) % entry.inputAlignment[i] != 0) {
      std::unique_ptr<DeviceBuffer> &staging = entry.staging[i];
      if (!staging || staging->size() < bytes)
        if (Status st = devices_[0]->allocate(bytes, staging); !st)
          return Status::error(StatusCode::IoError,
                               "cannot allocate " + std::to_string(bytes) +
                                   " bytes to align input '" + info.name + "'");
      std::memcpy(staging->data(), data, bytes);
      data = staging->data();
    }
    entry.tensors[plan.inputs[i].tensor] = data;
  }
  // The states the entry reads hold values of this run's dims.
  for (const PlanStateUse &use : plan.stateReads) {
    const State &state = *states_[use.state];
    const std::vector<int64_t> &dims = runPlan.tensors[use.tensor].dims;
    if (state.dims != dims)
      return invalid("state '" + program_.states[use.state].name + "' holds " +
                     formatDims(state.dims) + " but entry '" + plan.name +
                     "' reads it as " + formatDims(dims) +
                     " with these inputs");
  }
  return Status::ok();
}

Status Session::bindShapes(Entry &entry,
                           const std::vector<const TensorView *> &bound) {
  const Plan &plan = program_.entries[entry.index];
  std::vector<std::vector<int64_t>> inputDims;
  inputDims.reserve(bound.size());
  for (const TensorView *view : bound)
    inputDims.emplace_back(view->dims, view->dims + view->rank);
  std::vector<std::vector<int64_t>> stateDims;
  for (const std::unique_ptr<State> &state : states_)
    stateDims.push_back(state->hasValue ? state->dims : std::vector<int64_t>());
  PlanShapes shapes;
  if (Status st = evaluatePlanShapes(plan, inputDims, program_.states,
                                     stateDims, shapes);
      !st)
    return Status::error(st.code(),
                         st.code() == StatusCode::InvalidArgument
                             ? st.message()
                             : "bundle '" + path_ + "': " + st.message());
  if (shapes.symbols == entry.runSymbols && !entry.rebuildAll)
    return Status::ok();
  std::vector<bool> changed(plan.tensors.size(), false);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    std::vector<int64_t> &dims = entry.runPlan.tensors[i].dims;
    if (dims != shapes.dims[i] || entry.rebuildAll) {
      dims = std::move(shapes.dims[i]);
      changed[i] = true;
    }
  }
  // Should a step fail to build, the next run rebuilds them all.
  entry.rebuildAll = true;
  // A recording holds the executors' arguments: it is for the old ones.
  entry.recorded.reset();
  entry.eagerRuns = 0;
  // Rebuilt steps are packed for this run's rows when packing is on.
  StepBuildContext context{program_, entry.runPlan, entry.source, weights_,
                           packLinearWeights_};
  for (size_t s = 0; s < entry.runPlan.steps.size(); ++s) {
    if (!entry.symbolicStep[s])
      continue;
    const PlanStep &step = entry.runPlan.steps[s];
    bool stepChanged = false;
    for (const auto *ids : {&step.operands, &step.results})
      for (uint32_t id : *ids)
        stepChanged |= changed[id];
    if (!stepChanged)
      continue;
    std::unique_ptr<StepExecutor> executor;
    if (Status st = devices_[step.device]->createStep(context, step, executor);
        !st)
      return st;
    entry.steps[s] = std::move(executor);
    if (int64_t copied = entry.steps[s]->copiedWeight();
        copied >= 0 && weights_ && !ownedWeights_)
      releaseWeightPages(weights_, entry.runPlan.tensors[size_t(copied)],
                         weightsReadInPlace_);
  }
  entry.runSymbols = std::move(shapes.symbols);
  entry.rebuildAll = false;
  return Status::ok();
}

Status Session::execute(size_t index, const NamedTensorView *inputs,
                        size_t count) {
  auto lock = lockRuns();
  if (index >= entries_.size())
    return Status::error(StatusCode::InvalidArgument,
                         "session run: entry " + std::to_string(index) +
                             " of " + std::to_string(entries_.size()));
  if (count && !inputs)
    return Status::error(StatusCode::InvalidArgument,
                         "session run: null inputs for a count of " +
                             std::to_string(count));
  Entry &entry = *entries_[index];
  if (Status st = bindInputs(entry, inputs, count); !st)
    return st;
  lastEntry_ = index;
  if (entry.recordable) {
    if (Status st = runRecorded(entry); !st)
      return st;
  } else if (Status st = runSteps(entry); !st) {
    return st;
  }
  for (const std::unique_ptr<Device> &device : devices_)
    if (Status st = device->synchronize(); !st)
      return st;
  // Steps on an asynchronous device were timed by its timers (runSteps).
  const Plan &entryPlan = program_.entries[index];
  for (size_t i = 0; profiling_ && i < entry.steps.size(); ++i) {
    if (!devices_[entryPlan.steps[i].device]->asynchronous())
      continue;
    double seconds = 0;
    if (Status st = devices_[entryPlan.steps[i].device]->timerSeconds(
            2 * i, 2 * i + 1, seconds);
        !st)
      return st;
    profile_[entry.profileOffset + i].seconds += seconds;
  }
  const Plan &plan = program_.entries[index];
  const Plan &runPlan = plan.isSymbolic() ? entry.runPlan : plan;
  for (const PlanStateUse &use : plan.stateWrites) {
    State &state = *states_[use.state];
    state.dims = runPlan.tensors[use.tensor].dims;
    state.hasValue = true;
  }
  return Status::ok();
}

Status Session::runRecorded(Entry &entry) {
  // The recording reads the inputs at fixed addresses.
  const Plan &plan = program_.entries[entry.index];
  const Plan &runPlan = plan.isSymbolic() ? entry.runPlan : plan;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    uint32_t tensor = plan.inputs[i].tensor;
    uint64_t bytes = runPlan.tensors[tensor].byteSize();
    void *pinned = entry.pinnedInputs[i]->data();
    if (bytes && entry.tensors[tensor] != pinned)
      std::memcpy(pinned, entry.tensors[tensor], bytes);
    entry.tensors[tensor] = pinned;
  }
  Device &device = *devices_[size_t(recordDevice_)];
  if (!entry.recorded && entry.eagerRuns == 0) {
    // The first run of new executors is eager: a step that fails, fails
    // here, with its own message.
    ++entry.eagerRuns;
    return runSteps(entry);
  }
  if (!entry.recorded) {
    if (Status st = device.beginCapture(); !st)
      return st;
    Status ran = runSteps(entry);
    std::unique_ptr<CapturedRun> recorded;
    Status ended = device.endCapture(recorded);
    if (!ran)
      return ran;
    if (!ended)
      return ended;
    entry.recorded = std::move(recorded);
  }
  return device.replay(*entry.recorded);
}

Status Session::runSteps(Entry &entry) {
  using Clock = std::chrono::steady_clock;
  const Plan &entryPlan = program_.entries[entry.index];
  for (size_t i = 0; i < entry.steps.size(); ++i) {
    // A step on an asynchronous device is timed by that device's timers
    // 2i and 2i + 1 around it, read once everything has finished.
    Device &device = *devices_[entryPlan.steps[i].device];
    bool onDevice = profiling_ && device.asynchronous();
    Clock::time_point start;
    if (onDevice) {
      if (Status st = device.recordTimer(2 * i); !st)
        return st;
    } else if (profiling_) {
      start = Clock::now();
    }
    if (Status st = entry.steps[i]->run(entry.tensors.data()); !st)
      return st;
    if (!profiling_)
      continue;
    StepProfile &p = profile_[entry.profileOffset + i];
    p.calls += 1;
    if (!onDevice)
      p.seconds += std::chrono::duration<double>(Clock::now() - start).count();
    else if (Status st = device.recordTimer(2 * i + 1); !st)
      return st;
  }
  return Status::ok();
}

const void *Session::outputData(size_t index) const {
  const Entry &entry = *entries_[lastEntry_];
  return entry.tensors[program_.entries[lastEntry_].outputs[index].tensor];
}

const PlanTensor &Session::outputTensor(size_t index) const {
  const Plan &plan = program_.entries[lastEntry_];
  const Plan &runPlan =
      plan.isSymbolic() ? entries_[lastEntry_]->runPlan : plan;
  return runPlan.tensors[runPlan.outputs[index].tensor];
}

Status Session::run(size_t entry, const std::vector<NamedTensorView> &inputs,
                    std::vector<NamedTensor> &outputs) {
  outputs.clear();
  // Held until the outputs are copied out: another thread's run would
  // overwrite the arena they live in.
  auto lock = lockRuns();
  if (Status st = execute(entry, inputs.data(), inputs.size()); !st)
    return st;
  const std::vector<ValueInfo> &infos = entryInfos_[entry].outputs;
  outputs.resize(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    const PlanTensor &t = outputTensor(i);
    NamedTensor &o = outputs[i];
    o.name = infos[i].name;
    o.tensor.dtype = t.dtype;
    o.tensor.shape = t.dims;
    o.tensor.data.resize(t.byteSize());
    if (!o.tensor.data.empty())
      std::memcpy(o.tensor.data.data(), outputData(i), o.tensor.data.size());
  }
  return Status::ok();
}

Status Session::run(const std::vector<NamedTensorView> &inputs,
                    std::vector<NamedTensor> &outputs) {
  return run(size_t(0), inputs, outputs);
}

static std::vector<NamedTensorView>
viewsOf(const std::vector<NamedTensor> &inputs) {
  std::vector<NamedTensorView> views;
  views.reserve(inputs.size());
  for (const NamedTensor &input : inputs)
    views.push_back({input.name, TensorView::of(input.tensor)});
  return views;
}

Status Session::run(const std::vector<NamedTensor> &inputs,
                    std::vector<NamedTensor> &outputs) {
  return run(size_t(0), viewsOf(inputs), outputs);
}

Status Session::run(std::string_view entry,
                    const std::vector<NamedTensor> &inputs,
                    std::vector<NamedTensor> &outputs) {
  outputs.clear();
  size_t index = 0;
  if (Status st = findEntry(entry, index); !st)
    return st;
  return run(index, viewsOf(inputs), outputs);
}

void Session::resetProfile() {
  auto lock = lockRuns();
  for (StepProfile &p : profile_) {
    p.calls = 0;
    p.seconds = 0;
  }
}
