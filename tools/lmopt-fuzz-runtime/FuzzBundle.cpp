//===- FuzzBundle.cpp - libFuzzer target for bundles and sessions ---------===//
//
// Each input is a bundle: opened with every section checksummed, its plan
// decoded, and, when what it asks for is small, a session created on the
// CPU device and every entry run once with zero inputs at the inputs'
// largest dims. Everything must fail with a Status; any crash, sanitizer
// report or leak is a bug.
//
// Two things are left out on purpose. A bundle's CPU kernels are native
// code that the session dlopens: a bundle is trusted as much as a shared
// library, so bundles whose kernel steps have a kernels section stop before
// the session. And memory is capped (kMaxBytes for arenas, states, inputs
// and random weights together), so that a plan asking for gigabytes is
// skipped rather than reported as an out-of-memory.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/OmittedWeights.h"
#include "lmopt/Format/Plan.h"
#include "lmopt/Format/SparseWeights.h"
#include "lmopt/Runtime/Session.h"

#include <algorithm>
#include <memory>

using namespace lmopt::runtime;

static constexpr uint64_t kMaxBytes = uint64_t(16) << 20;

/// Adds `value` to `total`, saturating at kMaxBytes + 1.
static void addCapped(uint64_t &total, uint64_t value) {
  total = value > kMaxBytes - std::min(total, kMaxBytes) ? kMaxBytes + 1
                                                         : total + value;
}

static uint64_t valueBytes(DType dtype, const std::vector<int64_t> &dims) {
  uint64_t bytes = dtypeSize(dtype);
  for (int64_t dim : dims) {
    if (dim < 0 || (dim && bytes > kMaxBytes / uint64_t(dim)))
      return kMaxBytes + 1;
    bytes *= uint64_t(dim);
  }
  return bytes;
}

/// What a session of `program` allocates, capped.
static uint64_t sessionBytes(const Program &program) {
  uint64_t total = 0;
  std::vector<uint64_t> arenas(program.devices.size(), 0);
  for (const Plan &plan : program.entries)
    for (size_t d = 0; d < plan.arenaSizes.size() && d < arenas.size(); ++d)
      arenas[d] = std::max(arenas[d], plan.arenaSizes[d]);
  for (uint64_t arena : arenas)
    addCapped(total, arena);
  for (const PlanState &state : program.states)
    addCapped(total, valueBytes(state.dtype, state.dims));
  for (const Plan &plan : program.entries)
    for (const PlanValue &input : plan.inputs)
      if (input.tensor < plan.tensors.size())
        addCapped(total, plan.tensors[input.tensor].byteSize());
  return total;
}

/// True when a kernel step would make the session dlopen the bundle's code.
static bool loadsKernels(const Program &program, const BundleReader &reader) {
  for (const Plan &plan : program.entries)
    for (const PlanStep &step : plan.steps)
      if (step.kind == StepKind::Kernel &&
          step.device < program.devices.size() &&
          !program.devices[step.device].kernels.empty() &&
          reader.findSection(program.devices[step.device].kernels) >= 0)
        return true;
  return false;
}

static void runEntries(Session &session) {
  for (size_t e = 0; e < session.entries().size(); ++e) {
    const EntryInfo &entry = session.entries()[e];
    std::vector<Tensor> tensors(entry.inputs.size());
    std::vector<NamedTensorView> views;
    for (size_t i = 0; i < entry.inputs.size(); ++i) {
      const ValueInfo &input = entry.inputs[i];
      tensors[i].dtype = input.dtype;
      tensors[i].shape = input.maxDims;
      uint64_t bytes = valueBytes(input.dtype, input.maxDims);
      if (bytes > kMaxBytes)
        return;
      tensors[i].data.assign(bytes, 0);
      views.push_back({input.name, TensorView::of(tensors[i])});
    }
    std::vector<NamedTensor> outputs;
    (void)session.run(e, views, outputs);
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = lmopt::fuzz::writeInputFile(data, size, ".lmopt");
  std::unique_ptr<BundleReader> reader;
  BundleReader::Options readerOptions;
  readerOptions.verifyAll = true;
  if (!BundleReader::open(path, readerOptions, reader))
    return 0;
  for (size_t i = 0; i < reader->sectionCount(); ++i) {
    SectionView view;
    if (!reader->section(i, view))
      return 0;
  }

  SectionView weights, plan;
  if (reader->findSection("weights") >= 0)
    (void)reader->section("weights", weights);
  if (reader->findSection("plan") < 0 || !reader->section("plan", plan))
    return 0;
  Program program;
  if (!parsePlan(plan.data, plan.size, weights.size, path, program))
    return 0;

  uint64_t bytes = sessionBytes(program);
  SessionOptions options;
  options.threads = 1;
  if (reader->findSection("omitted-weights") >= 0) {
    SectionView view;
    OmittedWeights omitted;
    if (!reader->section("omitted-weights", view) ||
        !parseOmittedWeights(view.data, view.size, weights.size, path,
                             omitted))
      return 0;
    addCapped(bytes, omitted.fullSize);
    options.randomWeightsSeed = 1;
  }
  if (reader->findSection("sparse-weights") >= 0) {
    SectionView view;
    SparseWeights sparse;
    if (!reader->section("sparse-weights", view) ||
        !parseSparseWeights(view.data, view.size, weights.size, path, sparse))
      return 0;
    addCapped(bytes, sparse.fullSize);
  }
  if (bytes > kMaxBytes || loadsKernels(program, *reader))
    return 0;
  reader.reset();

  std::unique_ptr<Session> session;
  if (Session::create(path, options, session))
    runEntries(*session);
  return 0;
}
