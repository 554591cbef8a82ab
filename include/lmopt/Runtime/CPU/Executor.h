//===- Executor.h - One plan step, ready to run -----------------*- C++ -*-===//
//
// The CPU device turns every step of a plan into a StepExecutor when a
// session is created: the step's operands, results and attributes are
// checked against what its kind needs (counts, dtypes, dims, aliasing) and
// the library step (LinearStep, AttentionStep, GatherStep) or kernel entry
// point is prepared, so that running the plan only passes pointers.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_EXECUTOR_H
#define LMOPT_RUNTIME_CPU_EXECUTOR_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"
#include "lmopt/Runtime/Device.h"

#include <cstdint>
#include <memory>
#include <string>

namespace lmopt::runtime {

class CpuContext;
class KernelLibrary;

/// Everything a CPU step needs from its session and device while it is
/// built.
struct CpuStepContext {
  /// The program (states: the capacity of a state tensor).
  const Program &program;
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

/// Validates `step` against `context.plan` and builds its executor. Messages
/// read "bundle '<source>': <kind> step '<name>': <what is wrong>".
Status createCpuStepExecutor(const CpuStepContext &context,
                             const PlanStep &step,
                             std::unique_ptr<StepExecutor> &out);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_EXECUTOR_H
