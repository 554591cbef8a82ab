//===- FuseAttentionMatch.h - attention matcher helpers ---------*- C++ -*-===//
//
// Helpers the attention matcher (FuseAttention.cpp) shares with the scores-side
// mask matching (FuseAttentionMask.cpp). Private to LmoptTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_FUSEATTENTIONMATCH_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_FUSEATTENTIONMATCH_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::lmopt {

/// Whether `cond` is a constant-bound slice of a constant lower-triangular
/// buffer selecting rows [Sk-Sq, Sk) and cols [0, Sk): a causal mask. Fails
/// with `reason` when it is such a buffer but the slice cannot be proven.
FailureOr<bool> isCausalCondition(Value cond, int64_t sq, int64_t sk,
                                  std::string &reason);

/// True when `value`'s producers reach a rank-4 matmul through the ops
/// that may stand between Q x K^T and softmax.
bool reachesScoresMatMul(Value value);

/// True when `value` is a splat of -inf or the lowest finite float, which
/// softmax turns into an exact zero.
bool isMaskedFill(Value value);

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_FUSEATTENTIONMATCH_H
