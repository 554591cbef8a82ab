//===- StepChecker.h - Checking a plan step for the CPU device --*- C++ -*-===//
//
// Private to lib/Runtime/CPU: the helper every step builder uses (StepCheck
// with the CPU's context), and the builders that live outside Executor.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_STEPCHECKER_H
#define LMOPT_LIB_RUNTIME_CPU_STEPCHECKER_H

#include "lmopt/Runtime/CPU/Executor.h"
#include "lmopt/Runtime/StepCheck.h"

#include <memory>

namespace lmopt::runtime {

/// A CPU step under construction: the shared checks, and the CPU's context.
class StepChecker : public StepCheck {
public:
  StepChecker(const CpuStepContext &context, const PlanStep &step)
      : StepCheck(context.program, context.plan, context.source, step),
        context(context) {}

  const CpuStepContext &context;
};

/// The attention step's builder (AttentionExecutor.cpp).
Status buildAttentionExecutor(const StepChecker &c,
                              std::unique_ptr<StepExecutor> &out);
/// The attention_grad step's builder (AttentionExecutor.cpp).
Status buildAttentionGradExecutor(const StepChecker &c,
                                  std::unique_ptr<StepExecutor> &out);

} // namespace lmopt::runtime

#endif // LMOPT_LIB_RUNTIME_CPU_STEPCHECKER_H
