//===- CudaExecutors.h - The CUDA device's own step builders ----*- C++ -*-===//
//
// The builders CudaDevice.cpp dispatches to: generated kernels, copies and
// appends (CudaExecutors.cpp), matrix products on cuBLASLt (CudaMatmul.cpp),
// attention (AttentionStep.cpp) and gather (GatherStep.cpp).
// Every executor only enqueues on the device's stream: no synchronization,
// no allocation and no host-side wait in run(), so that a run can be
// captured as a CUDA graph.
//
// Private to lib/Runtime/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_CUDAEXECUTORS_H
#define LMOPT_LIB_RUNTIME_CUDA_CUDAEXECUTORS_H

#include "CudaStep.h"

#include "lmopt/Format/CudaKernels.h"
#include "lmopt/Runtime/StepCheck.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace lmopt::runtime::cuda {

/// A kernel of the bundle's payload, looked up in its module.
struct LoadedKernel {
  CudaKernelInfo info;
  CUfunction function = nullptr;
};

/// cuBLASLt algorithms chosen by its heuristic, per problem (every attribute
/// that went into the query, as a key); a step rebuilt for new dims asks
/// again only for a shape it has not seen.
class MatmulAlgoCache {
public:
  bool find(const std::string &key, cublasLtMatmulAlgo_t &algo) const;
  void insert(const std::string &key, const cublasLtMatmulAlgo_t &algo);

private:
  mutable std::mutex mutex_;
  std::map<std::string, cublasLtMatmulAlgo_t> algos_;
};

/// What the device gives its builders besides the shared environment.
struct CudaBuildEnv {
  const CudaStepEnv &env;
  /// For memory a step needs besides its tensors (allocated when built).
  Device &device;
  /// The bundle's kernels by name (empty without a payload).
  const std::map<std::string, LoadedKernel> &kernels;
  bool hasKernelPayload = false;
  /// cuBLASLt's workspace, shared by every matrix product (the steps run
  /// one after another on the one stream).
  CUdeviceptr matmulWorkspace = 0;
  size_t matmulWorkspaceBytes = 0;
  MatmulAlgoCache &matmulAlgos;
};

/// A CUDA step under construction.
class CudaCheck : public StepCheck {
public:
  CudaCheck(const CudaBuildEnv &build, const StepBuildContext &context,
            const PlanStep &step)
      : StepCheck(context.program, context.plan, context.source, step),
        context(context), build(build), env(build.env), api(build.env.api) {}

  /// "bundle '<source>': <kind> step '<name>': <what> failed: ..." for a
  /// driver or cuBLASLt failure while the step is built.
  Status deviceError(const Status &st) const {
    return error(st.message(), st.code());
  }
  /// "bundle '<source>': <kind> step '<name>'", for errors at run time.
  std::string label() const {
    return "bundle '" + source + "': " + stepKindName(step.kind) + " step '" +
           step.name + "'";
  }
  /// Looks up one of the runtime's own kernels (Kernels/).
  Status runtimeKernel(const std::string &name, CUfunction &out) const;

  const StepBuildContext &context;
  const CudaBuildEnv &build;
  const CudaStepEnv &env;
  const CudaApi &api;
};

using CudaStepBuilder = Status (*)(const CudaCheck &,
                                   std::unique_ptr<StepExecutor> &);

Status buildKernelStep(const CudaCheck &c, std::unique_ptr<StepExecutor> &out);
Status buildCopyStep(const CudaCheck &c, std::unique_ptr<StepExecutor> &out);
Status buildAppendStep(const CudaCheck &c, std::unique_ptr<StepExecutor> &out);
Status buildLinearStep(const CudaCheck &c, std::unique_ptr<StepExecutor> &out);
Status buildMatMulStep(const CudaCheck &c, std::unique_ptr<StepExecutor> &out);
/// Attention (the CPU's AttentionStep semantics: the attributes
/// AttentionPlan.cpp writes, masks, causal, zero_masked_rows, key/value
/// read at a state's capacity) as one fused kernel.
Status buildAttentionStep(const CudaCheck &c,
                          std::unique_ptr<StepExecutor> &out);
/// ONNX Gather with bounds-checked indices (an index out of range is a
/// run-time error reported at the next synchronize, naming the step).
Status buildGatherStep(const CudaCheck &c, std::unique_ptr<StepExecutor> &out);

} // namespace lmopt::runtime::cuda

#endif // LMOPT_LIB_RUNTIME_CUDA_CUDAEXECUTORS_H
