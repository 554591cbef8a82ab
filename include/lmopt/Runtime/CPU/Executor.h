//===- Executor.h - One plan step, ready to run -----------------*- C++ -*-===//
//
// A session turns every step of a plan into a StepExecutor when it is
// created: the step's operands, results and attributes are checked against
// what its kind needs (counts, dtypes, dims, aliasing) and the library step
// (LinearStep, AttentionStep, GatherStep) or kernel entry point is prepared,
// so that running the plan only passes pointers.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_EXECUTOR_H
#define LMOPT_RUNTIME_CPU_EXECUTOR_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace lmopt::runtime {

class CpuContext;
class KernelLibrary;

/// Everything a step needs from its session while it is built.
struct StepBuildContext {
  const Plan &plan;
  const CpuContext &cpu;
  /// Null when the bundle has no kernels (then a kernel step is an error).
  const KernelLibrary *kernels = nullptr;
  /// Names the bundle in messages.
  std::string source;
  /// The weights section (verified), for steps that copy a weight when they
  /// are built; null when the bundle has none.
  const uint8_t *weights = nullptr;
  /// Build linear steps whose weight is in the weights section with that
  /// weight packed (LinearStep::createPacked) for their static row count.
  bool packLinearWeights = true;
};

class StepExecutor {
public:
  virtual ~StepExecutor();
  /// Runs the step. `tensors[i]` is the data pointer of plan tensor `i`
  /// (inputs bound, weights mapped, arena tensors in the arena); results are
  /// written through them.
  virtual Status run(void *const *tensors) const = 0;
  /// The plan tensor (a weight) whose bytes the executor copied when it was
  /// built and does not read again, or -1.
  virtual int64_t copiedWeight() const { return -1; }
};

/// Validates `step` against `context.plan` and builds its executor. Messages
/// read "bundle '<source>': <kind> step '<name>': <what is wrong>".
Status createStepExecutor(const StepBuildContext &context, const PlanStep &step,
                          std::unique_ptr<StepExecutor> &out);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_EXECUTOR_H
