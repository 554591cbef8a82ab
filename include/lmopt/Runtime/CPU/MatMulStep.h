//===- MatMulStep.h - lmopt.matmul between activations ----------*- C++ -*-===//
//
// The library step for a bare `lmopt.matmul` (ONNX MatMul, numpy semantics)
// that the graph passes did not turn into a linear or an attention: f32,
// batch dims broadcast, a rank-1 operand promoted and its dim dropped from
// the result. Each batch is one dnnl_sgemm; batches are spread over the
// context's threads.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_MATMULSTEP_H
#define LMOPT_RUNTIME_CPU_MATMULSTEP_H

#include "lmopt/Format/Status.h"
#include "lmopt/Runtime/CPU/LinearStep.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lmopt::runtime {

struct MatMulStepDesc {
  std::string name;
  /// Ranks >= 1; `[..., M, K]` and `[..., K, N]` (rank 1: `[K]`).
  std::vector<int64_t> lhsDims;
  std::vector<int64_t> rhsDims;
};

class MatMulStep {
public:
  /// Validates the dims (matching K, broadcastable batch dims) and computes
  /// the result's dims.
  static Status create(const CpuContext &context, const MatMulStepDesc &desc,
                       std::unique_ptr<MatMulStep> &out);

  /// Dense row-major f32 buffers; `output` must not overlap the operands.
  Status run(const float *lhs, const float *rhs, float *output) const;

  const MatMulStepDesc &desc() const { return desc_; }
  /// numpy.matmul's result shape for the desc.
  const std::vector<int64_t> &outputDims() const { return outputDims_; }

private:
  explicit MatMulStep(const CpuContext &context) : context_(context) {}

  const CpuContext &context_;
  MatMulStepDesc desc_;
  std::vector<int64_t> outputDims_;
  int64_t m_ = 0, k_ = 0, n_ = 0;
  /// Per batch (in the broadcast batch shape's row-major order), the element
  /// offsets of its lhs and rhs matrices.
  std::vector<int64_t> lhsOffsets_, rhsOffsets_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_MATMULSTEP_H
