//===- MemoryPlan.cpp - Static activation arena for a plan ----------------===//

#include "lmopt/Target/Common/MemoryPlan.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <numeric>

using namespace ::lmopt::runtime;
using namespace mlir::lmopt;

static constexpr uint64_t kAlignment = 64;
static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

static uint64_t alignUp(uint64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

namespace {
/// A buffer: a root tensor and its aliases, alive over [first, last].
struct LiveRange {
  int64_t first = kNever;
  int64_t last = -1;
  uint64_t size = 0;
};
} // namespace

static uint32_t findRoot(std::vector<uint32_t> &aliasRoot, uint32_t tensor) {
  while (aliasRoot[tensor] != tensor)
    tensor = aliasRoot[tensor];
  return tensor;
}

/// Index of the residual operand of a linear or quant_linear step, or -1.
static int64_t residualOperand(const PlanStep &step) {
  int64_t hasBias = 0, hasResidual = 0;
  if (!step.getInt("has_bias", 0, hasBias).isOk() ||
      !step.getInt("has_residual", 0, hasResidual).isOk() || !hasResidual)
    return -1;
  // A quant_linear step's scales and zero points sit between the weight and
  // the bias; its residual is always the last operand.
  int64_t index = step.kind == StepKind::QuantLinear
                      ? int64_t(step.operands.size()) - 1
                      : 2 + hasBias;
  return index >= 2 && index < int64_t(step.operands.size()) ? index : -1;
}

/// Points a linear's (or quant_linear's) output at its residual's buffer where the residual's
/// buffer is read for the last time by that step.
static unsigned assignInPlaceResiduals(Plan &plan,
                                       std::vector<uint32_t> &aliasRoot,
                                       std::vector<LiveRange> &ranges) {
  unsigned count = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep &step = plan.steps[s];
    if ((step.kind != StepKind::Linear && step.kind != StepKind::QuantLinear) ||
        step.results.size() != 1)
      continue;
    int64_t operand = residualOperand(step);
    if (operand < 0)
      continue;
    uint32_t residual = step.operands[operand];
    uint32_t output = step.results[0];
    const PlanTensor &r = plan.tensors[residual];
    const PlanTensor &o = plan.tensors[output];
    if (r.storage != TensorStorage::Arena || r.byteSize() != o.byteSize())
      continue;
    uint32_t from = findRoot(aliasRoot, output);
    uint32_t into = findRoot(aliasRoot, residual);
    // The residual's buffer must die here, and the output must be a fresh
    // buffer of the same size (not already sharing with something else).
    // The step must not read the residual's bytes as another operand while
    // it writes them.
    bool readElsewhere = false;
    for (size_t i = 0; i < step.operands.size(); ++i)
      if (int64_t(i) != operand &&
          findRoot(aliasRoot, step.operands[i]) == into)
        readElsewhere = true;
    if (readElsewhere || from == into || ranges[into].last != int64_t(s) ||
        ranges[from].first != int64_t(s) || ranges[into].size != o.byteSize())
      continue;
    aliasRoot[from] = into;
    ranges[into].last = std::max(ranges[into].last, ranges[from].last);
    ranges[from] = LiveRange();
    ++count;
  }
  return count;
}

MemoryPlanStats mlir::lmopt::planMemory(Plan &plan,
                                        std::vector<uint32_t> &aliasRoot,
                                        const MemoryPlanOptions &options) {
  const size_t numTensors = plan.tensors.size();
  assert(aliasRoot.size() == numTensors && "one alias root per tensor");
  MemoryPlanStats stats;

  // Live ranges per buffer, over the tensors that share it.
  std::vector<LiveRange> ranges(numTensors);
  auto touch = [&](uint32_t tensor, int64_t step) {
    LiveRange &range = ranges[findRoot(aliasRoot, tensor)];
    range.first = std::min(range.first, step);
    range.last = std::max(range.last, step);
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (uint32_t t : plan.steps[s].operands)
      touch(t, int64_t(s));
    for (uint32_t t : plan.steps[s].results)
      touch(t, int64_t(s));
  }
  for (const PlanValue &output : plan.outputs)
    touch(output.tensor, int64_t(plan.steps.size()));
  for (uint32_t t = 0; t < numTensors; ++t) {
    if (plan.tensors[t].storage != TensorStorage::Arena)
      continue;
    uint32_t root = findRoot(aliasRoot, t);
    ranges[root].size = std::max(ranges[root].size, plan.tensors[t].byteSize());
  }
  for (uint32_t t = 0; t < numTensors; ++t)
    if (plan.tensors[t].storage == TensorStorage::Arena && aliasRoot[t] == t)
      stats.naiveSize += alignUp(ranges[t].size);

  if (options.inPlaceResidual)
    stats.inPlaceLinears = assignInPlaceResiduals(plan, aliasRoot, ranges);

  // Greedy best fit: largest buffers first, each at the lowest aligned
  // offset that no buffer alive at the same time occupies.
  std::vector<uint32_t> roots;
  for (uint32_t t = 0; t < numTensors; ++t)
    if (plan.tensors[t].storage == TensorStorage::Arena &&
        findRoot(aliasRoot, t) == t && ranges[t].size > 0)
      roots.push_back(t);
  std::stable_sort(roots.begin(), roots.end(), [&](uint32_t a, uint32_t b) {
    if (ranges[a].size != ranges[b].size)
      return ranges[a].size > ranges[b].size;
    return ranges[a].first < ranges[b].first;
  });
  std::vector<uint64_t> offsets(numTensors, 0);
  std::vector<uint32_t> placed;
  std::vector<uint64_t> arenaSizes(1, 0);
  for (const PlanTensor &t : plan.tensors)
    if (t.device >= arenaSizes.size())
      arenaSizes.resize(t.device + 1, 0);
  for (uint32_t root : roots) {
    const LiveRange &range = ranges[root];
    // Each device has its own arena: buffers on different devices never
    // conflict.
    uint32_t device = plan.tensors[root].device;
    std::vector<uint32_t> conflicts;
    for (uint32_t other : placed)
      if (plan.tensors[other].device == device &&
          ranges[other].first <= range.last &&
          range.first <= ranges[other].last)
        conflicts.push_back(other);
    std::sort(conflicts.begin(), conflicts.end(),
              [&](uint32_t a, uint32_t b) { return offsets[a] < offsets[b]; });
    uint64_t offset = 0;
    for (uint32_t other : conflicts) {
      if (offset + range.size <= offsets[other])
        break;
      offset = std::max(offset, alignUp(offsets[other] + ranges[other].size));
    }
    offsets[root] = offset;
    placed.push_back(root);
    if (arenaSizes.size() <= device)
      arenaSizes.resize(device + 1, 0);
    arenaSizes[device] =
        std::max(arenaSizes[device], alignUp(offset + range.size));
  }

  for (uint32_t t = 0; t < numTensors; ++t) {
    if (plan.tensors[t].storage != TensorStorage::Arena)
      continue;
    aliasRoot[t] = findRoot(aliasRoot, t);
    plan.tensors[t].offset = offsets[aliasRoot[t]];
  }
  for (uint64_t size : arenaSizes)
    stats.arenaSize += size;
  plan.arenaSizes = std::move(arenaSizes);
  return stats;
}
