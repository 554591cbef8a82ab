//===- AttentionGradStep.h - lmopt.attention_grad at run time ---*- C++ -*-===//
//
// The runtime's library step for `lmopt.attention_grad`, the fused backward
// of `lmopt.attention` (flash attention's): per batch and head, blocks of
// query rows recompute their probabilities with the forward step's softmax
// (AttentionSoftmax.h), then dV += P^T dO, dP = dO V^T,
// dS = scale * P (dP - rowsum(dP P)), dQ = dS K, dK += dS^T Q, the products
// on oneDNN's sgemm. Nothing of the scores' size lives between forward and
// backward. f32 only; dense packed operands (no views, key/value caches,
// grouped-query heads or score bias). docs/cpu-backend.md describes the
// step.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_ATTENTIONGRADSTEP_H
#define LMOPT_RUNTIME_CPU_ATTENTIONGRADSTEP_H

#include "lmopt/Runtime/CPU/AttentionStep.h"

#include <memory>

namespace lmopt::runtime {

class AttentionGradStep {
public:
  AttentionGradStep(const AttentionGradStep &) = delete;
  AttentionGradStep &operator=(const AttentionGradStep &) = delete;
  ~AttentionGradStep();

  /// Validates `desc` as AttentionStep::create does, refusing what the
  /// backward does not take (views, capacities, num_kv_heads,
  /// kv_heads_split, a score bias), and allocates the scratch.
  static Status create(const CpuContext &context, const AttentionStepDesc &desc,
                       std::unique_ptr<AttentionGradStep> &out);

  /// `query`, `outputGrad`, `queryGrad` [B, Sq, H*D]; `key`, `value`,
  /// `keyGrad`, `valueGrad` [B, Sk, H*D]; `mask` as the desc says (null
  /// when None). Row-major and dense; the gradients overlap no operand and
  /// no other gradient.
  Status run(const float *query, const float *key, const float *value,
             const float *outputGrad, const void *mask, float *queryGrad,
             float *keyGrad, float *valueGrad) const;

  const AttentionStepDesc &desc() const { return desc_; }

private:
  explicit AttentionGradStep(const CpuContext &context);

  const CpuContext &context_;
  AttentionStepDesc desc_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_ATTENTIONGRADSTEP_H
