//===- CudaStepChecker.h - Checking a plan step for the CUDA device -*- C++ -*-===//
//
// The CUDA step builders' helper to read a step's operands, results and
// attributes and to word their messages as the CPU's do ("bundle '<source>':
// <kind> step '<name>': <what is wrong>"), plus the checks every step shares
// (state views read densely unless readsStateAtCapacity says otherwise;
// results sharing no bytes with operands). The CPU's StepChecker is bound to
// its own context, hence this twin over StepBuildContext.
//
// Private to lib/Runtime/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_CUDASTEPCHECKER_H
#define LMOPT_LIB_RUNTIME_CUDA_CUDASTEPCHECKER_H

#include "lmopt/Runtime/Device.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace lmopt::runtime::cuda {

/// "'name' (f32 [2, 3])".
std::string describe(const PlanTensor &t);

class CudaStepChecker {
public:
  CudaStepChecker(const StepBuildContext &context, const PlanStep &step)
      : context(context), step(step) {}

  Status error(const std::string &what,
               StatusCode code = StatusCode::InvalidFormat) const;
  /// Re-labels a status that already names the step with the bundle.
  Status withSource(const Status &st) const;

  const PlanTensor &operand(size_t i) const {
    return context.plan.tensors[step.operands[i]];
  }
  const PlanTensor &result(size_t i) const {
    return context.plan.tensors[step.results[i]];
  }

  /// `operands` lists the operands' roles ("data, indices").
  Status expectCounts(size_t operandCount, const std::string &operands,
                      size_t resultCount) const;
  Status expectDType(const std::string &role, const PlanTensor &t,
                     DType dtype) const;
  Status expectDims(const std::string &role, const PlanTensor &t,
                    const std::vector<int64_t> &dims,
                    const std::string &why) const;
  Status expectRank(const std::string &role, const PlanTensor &t,
                    size_t rank) const;
  /// Refuses attributes outside `known` (Unsupported).
  Status expectAttrs(std::initializer_list<const char *> known) const;
  /// A 0/1 integer attribute; absent means 0.
  Status getFlag(const char *name, bool &out) const;
  Status getInt(const char *name, int64_t &out) const;

  /// State views touched densely are one dense block of their state, and
  /// results overlap no operand and no other result.
  Status checkTensors() const;

  const StepBuildContext &context;
  const PlanStep &step;
};

} // namespace lmopt::runtime::cuda

#endif // LMOPT_LIB_RUNTIME_CUDA_CUDASTEPCHECKER_H
