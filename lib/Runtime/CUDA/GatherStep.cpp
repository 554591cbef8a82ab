// TEMPORARY placeholder: another engineer implements the CUDA gather step;
// this file is replaced when that work is merged.
#include "CudaStep.h"

namespace lmopt::runtime::cuda {

Status createGatherStep(const CudaStepEnv &, const StepBuildContext &,
                        const PlanStep &, std::unique_ptr<StepExecutor> &) {
  return Status::error(StatusCode::Unsupported,
                       "the cuda device's gather step is not built yet");
}

} // namespace lmopt::runtime::cuda
