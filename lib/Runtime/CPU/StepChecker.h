//===- StepChecker.h - Checking a plan step for the CPU device ---*- C++
//-*-===//
//
// Private to lib/Runtime/CPU: the helper every step builder uses to read its
// step's operands, results and attributes and to word its messages, and the
// builders that live outside Executor.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_STEPCHECKER_H
#define LMOPT_LIB_RUNTIME_CPU_STEPCHECKER_H

#include "lmopt/Runtime/CPU/Executor.h"

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace lmopt::runtime {

inline std::string describe(const PlanTensor &t) {
  return "'" + t.name + "' (" + dtypeName(t.dtype) + " " + formatDims(t.dims) +
         ")";
}

/// A step under construction: names it in messages and reads its tensors.
class StepChecker {
public:
  StepChecker(const CpuStepContext &context, const PlanStep &step)
      : context(context), step(step) {}

  Status error(const std::string &what,
               StatusCode code = StatusCode::InvalidFormat) const {
    return Status::error(code, "bundle '" + context.source +
                                   "': " + stepKindName(step.kind) + " step '" +
                                   step.name + "': " + what);
  }
  /// Re-labels a status from a library step or an attribute lookup, which
  /// already names the step, with the bundle.
  Status withSource(const Status &st) const {
    return Status::error(st.code(),
                         "bundle '" + context.source + "': " + st.message());
  }

  const PlanTensor &operand(size_t i) const {
    return context.plan.tensors[step.operands[i]];
  }
  const PlanTensor &result(size_t i) const {
    return context.plan.tensors[step.results[i]];
  }

  /// `operands` lists the operands' roles ("input, weight, bias").
  Status expectCounts(size_t operandCount, const std::string &operands,
                      size_t resultCount) const {
    if (step.operands.size() != operandCount)
      return error("has " + std::to_string(step.operands.size()) +
                   " operands; expected " + std::to_string(operandCount) +
                   " (" + operands + ")");
    if (step.results.size() != resultCount)
      return error("has " + std::to_string(step.results.size()) +
                   " results; expected " + std::to_string(resultCount));
    return Status::ok();
  }

  Status expectDType(const std::string &role, const PlanTensor &t,
                     DType dtype) const {
    if (t.dtype == dtype)
      return Status::ok();
    return error(role + " " + describe(t) + " has dtype " + dtypeName(t.dtype) +
                 "; expected " + dtypeName(dtype));
  }

  Status expectDims(const std::string &role, const PlanTensor &t,
                    const std::vector<int64_t> &dims,
                    const std::string &why) const {
    if (t.dims == dims)
      return Status::ok();
    return error(role + " " + describe(t) + " should have dims " +
                 formatDims(dims) + " (" + why + ")");
  }

  Status expectRank(const std::string &role, const PlanTensor &t,
                    size_t rank) const {
    if (t.dims.size() == rank)
      return Status::ok();
    return error(role + " " + describe(t) + " has rank " +
                 std::to_string(t.dims.size()) + "; expected " +
                 std::to_string(rank));
  }

  /// Refuses attributes outside `known`.
  Status expectAttrs(std::initializer_list<const char *> known) const {
    for (const PlanAttr &attr : step.attrs)
      if (std::none_of(known.begin(), known.end(),
                       [&](const char *name) { return attr.name == name; }))
        return error("has attribute '" + attr.name +
                         "', which this runtime does not know",
                     StatusCode::Unsupported);
    return Status::ok();
  }

  /// A 0/1 integer attribute; absent means 0.
  Status getFlag(const char *name, bool &out) const {
    int64_t value = 0;
    if (Status st = step.getInt(name, 0, value); !st)
      return withSource(st);
    if (value != 0 && value != 1)
      return error("attribute '" + std::string(name) + "' is " +
                   std::to_string(value) + "; expected 0 or 1");
    out = value == 1;
    return Status::ok();
  }

  Status getInt(const char *name, int64_t &out) const {
    if (Status st = step.getInt(name, out); !st)
      return withSource(st);
    return Status::ok();
  }

  const CpuStepContext &context;
  const PlanStep &step;
};

/// The attention step's builder (AttentionExecutor.cpp).
Status buildAttentionExecutor(const StepChecker &c,
                              std::unique_ptr<StepExecutor> &out);

} // namespace lmopt::runtime

#endif // LMOPT_LIB_RUNTIME_CPU_STEPCHECKER_H
