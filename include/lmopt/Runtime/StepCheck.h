//===- StepCheck.h - Checking a plan step for any device --------*- C++ -*-===//
//
// What every device's step builders share: reading a step's operands,
// results and attributes, wording messages ("bundle '<source>': <kind> step
// '<name>': <what is wrong>"), and the checks that hold for every kind on
// every device (state views, aliasing). A device's own checker derives from
// it and adds its context (the CPU's StepChecker).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_STEPCHECK_H
#define LMOPT_RUNTIME_STEPCHECK_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// "'name' (f32 [2, 3])".
std::string describe(const PlanTensor &t);

/// A step under construction: names it in messages and reads its tensors.
class StepCheck {
public:
  StepCheck(const Program &program, const Plan &plan, const std::string &source,
            const PlanStep &step)
      : program(program), plan(plan), source(source), step(step) {}

  Status error(const std::string &what,
               StatusCode code = StatusCode::InvalidFormat) const;
  /// Re-labels a status from a library step or an attribute lookup, which
  /// already names the step, with the bundle.
  Status withSource(const Status &st) const;

  const PlanTensor &operand(size_t i) const {
    return plan.tensors[step.operands[i]];
  }
  const PlanTensor &result(size_t i) const {
    return plan.tensors[step.results[i]];
  }

  /// `operands` lists the operands' roles ("input, weight, bias").
  Status expectCounts(size_t operandCount, const std::string &operands,
                      size_t resultCount) const;
  Status expectDType(const std::string &role, const PlanTensor &t,
                     DType dtype) const;
  Status expectDims(const std::string &role, const PlanTensor &t,
                    const std::vector<int64_t> &dims,
                    const std::string &why) const;
  Status expectRank(const std::string &role, const PlanTensor &t,
                    size_t rank) const;
  /// Refuses attributes outside `known`.
  Status expectAttrs(std::initializer_list<const char *> known) const;
  /// A 0/1 integer attribute; absent means 0.
  Status getFlag(const char *name, bool &out) const;
  Status getInt(const char *name, int64_t &out) const;

  /// A kernel step's optional `dims_only` attribute: a comma-separated list
  /// of its operand numbers (readsStateAtCapacity reads it).
  Status checkDimsOnly() const;

  /// Steps read and write state views as dense tensors, except where
  /// readsStateAtCapacity says they touch them at the state's capacity.
  Status checkStateViews() const;
  /// Results share no bytes with operands or each other; a linear step's
  /// residual (plain or quantized) may be exactly its output.
  Status checkAliasing() const;

  const Program &program;
  const Plan &plan;
  const std::string &source;
  const PlanStep &step;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_STEPCHECK_H
