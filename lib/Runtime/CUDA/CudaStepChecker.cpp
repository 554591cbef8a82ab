//===- CudaStepChecker.cpp - Checking a plan step for the CUDA device -----===//

#include "CudaStepChecker.h"

#include <algorithm>

using namespace lmopt::runtime;
using namespace lmopt::runtime::cuda;

std::string lmopt::runtime::cuda::describe(const PlanTensor &t) {
  return "'" + t.name + "' (" + dtypeName(t.dtype) + " " + formatDims(t.dims) +
         ")";
}

Status CudaStepChecker::error(const std::string &what, StatusCode code) const {
  return Status::error(code, "bundle '" + context.source + "': " +
                                 stepKindName(step.kind) + " step '" +
                                 step.name + "': " + what);
}

Status CudaStepChecker::withSource(const Status &st) const {
  return Status::error(st.code(),
                       "bundle '" + context.source + "': " + st.message());
}

Status CudaStepChecker::expectCounts(size_t operandCount,
                                     const std::string &operands,
                                     size_t resultCount) const {
  if (step.operands.size() != operandCount)
    return error("has " + std::to_string(step.operands.size()) +
                 " operands; expected " + std::to_string(operandCount) + " (" +
                 operands + ")");
  if (step.results.size() != resultCount)
    return error("has " + std::to_string(step.results.size()) +
                 " results; expected " + std::to_string(resultCount));
  return Status::ok();
}

Status CudaStepChecker::expectDType(const std::string &role,
                                    const PlanTensor &t, DType dtype) const {
  if (t.dtype == dtype)
    return Status::ok();
  return error(role + " " + describe(t) + " has dtype " + dtypeName(t.dtype) +
               "; expected " + dtypeName(dtype));
}

Status CudaStepChecker::expectDims(const std::string &role,
                                   const PlanTensor &t,
                                   const std::vector<int64_t> &dims,
                                   const std::string &why) const {
  if (t.dims == dims)
    return Status::ok();
  return error(role + " " + describe(t) + " should have dims " +
               formatDims(dims) + " (" + why + ")");
}

Status CudaStepChecker::expectRank(const std::string &role,
                                   const PlanTensor &t, size_t rank) const {
  if (t.dims.size() == rank)
    return Status::ok();
  return error(role + " " + describe(t) + " has rank " +
               std::to_string(t.dims.size()) + "; expected " +
               std::to_string(rank));
}

Status
CudaStepChecker::expectAttrs(std::initializer_list<const char *> known) const {
  for (const PlanAttr &attr : step.attrs)
    if (std::none_of(known.begin(), known.end(),
                     [&](const char *name) { return attr.name == name; }))
      return error("has attribute '" + attr.name +
                       "', which this runtime does not know",
                   StatusCode::Unsupported);
  return Status::ok();
}

Status CudaStepChecker::getFlag(const char *name, bool &out) const {
  int64_t value = 0;
  if (Status st = step.getInt(name, 0, value); !st)
    return withSource(st);
  if (value != 0 && value != 1)
    return error("attribute '" + std::string(name) + "' is " +
                 std::to_string(value) + "; expected 0 or 1");
  out = value == 1;
  return Status::ok();
}

Status CudaStepChecker::getInt(const char *name, int64_t &out) const {
  if (Status st = step.getInt(name, out); !st)
    return withSource(st);
  return Status::ok();
}

/// True when two arena tensors share a byte, or two views of one state hold
/// elements (as the CPU's check).
static bool overlap(const PlanTensor &a, const PlanTensor &b) {
  if (a.storage == TensorStorage::State && b.storage == TensorStorage::State)
    return a.offset == b.offset && a.elementCount() && b.elementCount();
  if (a.storage != TensorStorage::Arena || b.storage != TensorStorage::Arena ||
      a.device != b.device)
    return false;
  uint64_t aSize = a.byteSize(), bSize = b.byteSize();
  return aSize && bSize && a.offset < b.offset + bSize &&
         b.offset < a.offset + aSize;
}

Status CudaStepChecker::checkTensors() const {
  const Plan &plan = context.plan;
  for (const auto *ids : {&step.operands, &step.results})
    for (size_t i = 0; i < ids->size(); ++i) {
      const PlanTensor &t = plan.tensors[(*ids)[i]];
      bool isResult = ids == &step.results;
      if (t.storage != TensorStorage::State ||
          readsStateAtCapacity(step, isResult, i))
        continue;
      const PlanState &state = context.program.states[size_t(t.offset)];
      if (!isDenseStateView(t.dims, state.dims))
        return error(std::string(isResult ? "result " : "operand ") +
                     std::to_string(i) + " " + describe(t) +
                     " is a view of state '" + state.name + "' " +
                     formatDims(state.dims) +
                     " that is not one dense block, which this step "
                     "cannot read");
    }
  for (size_t r = 0; r < step.results.size(); ++r) {
    const PlanTensor &result = plan.tensors[step.results[r]];
    for (size_t o = 0; o < step.operands.size(); ++o) {
      const PlanTensor &operand = plan.tensors[step.operands[o]];
      if (overlap(result, operand))
        return error("result " + std::to_string(r) + " " + describe(result) +
                     " overlaps operand " + std::to_string(o) + " " +
                     describe(operand));
    }
    for (size_t other = 0; other < r; ++other)
      if (overlap(result, plan.tensors[step.results[other]]))
        return error("results " + std::to_string(other) + " and " +
                     std::to_string(r) + " overlap");
  }
  return Status::ok();
}
