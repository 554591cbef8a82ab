//===- FuseAttentionMatch.h - attention matcher helpers ---------*- C++ -*-===//
//
// Helpers the attention matcher (FuseAttention.cpp) shares with the head
// split matching (FuseAttentionHeads.cpp) and the mask matching around the
// softmax (FuseAttentionMask.cpp). Private to LmoptTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_FUSEATTENTIONMATCH_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_FUSEATTENTIONMATCH_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::lmopt {

//===----------------------------------------------------------------------===//
// Heads (FuseAttentionHeads.cpp)
//===----------------------------------------------------------------------===//

/// A packed projection split into heads: `[B, S, H*D]`, or `[S, B, H*D]`
/// (nn.MultiheadAttention) when `batchFirst` is false. With `headsSplit`,
/// `source` is already `[B, H, S, D]`: a cache concatenated with new heads.
/// `repeats` > 1: each of the H heads was repeated that many times on the
/// head axis before the matmul (Llama's `repeat_kv`, grouped-query
/// attention), so the matmul saw H * repeats heads.
struct HeadSplit {
  Value source;
  bool batchFirst = true;
  int64_t numHeads = 0, headDim = 0;
  bool headsSplit = false;
  int64_t repeats = 1;
};

/// Walks from `heads` (an operand of a matmul) up through transposes,
/// reshapes and scalar scales to the packed projection the heads were split
/// from, expecting the heads to be `expectedPerm` of [B, S, H, D]. Each
/// rank-3 tensor on the way is a candidate; the nearest whose layout proves
/// out wins, and its scales fold into `scale`. With `allowCache`, a
/// head-split cache concat on the way is matched instead.
FailureOr<HeadSplit> matchHeadSplit(Value heads, StringRef role,
                                    ArrayRef<int64_t> expectedPerm,
                                    double &scale, std::string &reason,
                                    bool allowCache = true);

/// Peels `x * c` and `x / c` by scalar constants off `value`, folding them
/// into `scale`; stops at anything else. Fails with `reason` on a scale that
/// cannot be folded (not positive, not one element, computed at run time).
LogicalResult peelScale(Value &value, double &scale, std::string &reason);

/// Rotary embeddings applied to head-split heads move above the head
/// transpose, exposing the rotated projection packed (FuseAttentionRotary.cpp).
void populateHoistRotaryPatterns(RewritePatternSet &patterns);

/// Head layouts brought to the packed one that matchHeadSplit follows
/// (FuseAttentionHeads.cpp): Q, K and V taken from one [B, S, 3, H, D]
/// reshape of a projection, and Q, K and V interleaved per head
/// ([B, S, H, 3*D]) in a projection by constants, whose columns are
/// reordered; each part becomes a slice of the projection.
void populateHeadLayoutPatterns(RewritePatternSet &patterns);

/// Attention computed on heads flattened into the batch, `[B*H, S, D]`
/// (DeBERTa-v2's bmm), brought to rank-4 heads (FuseAttentionFlatHeads.cpp).
void populateFlatHeadsPatterns(RewritePatternSet &patterns);

/// Whether every user of `op`'s results is an lmopt op without a
/// same-type constraint: such users take an operand whose type knows more
/// (or less) of a dim as it is, so `op` may be replaced by a value of a
/// compatible type.
bool usersTakeAnyShape(Operation *op);

/// "'lmopt.op'" for the producer of `value`, or "a block argument".
std::string describeProducer(Value value);

//===----------------------------------------------------------------------===//
// Masks (FuseAttentionMask.cpp)
//===----------------------------------------------------------------------===//

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

/// True when `value` is a splat of -inf: a row of it makes softmax NaN.
bool isMinusInfFill(Value value);

/// A boolean mask spelled as an additive one, `where(cond, 0, fill)` (or
/// `where(cond, fill, 0)`) with `fill` a masked fill.
struct SelectedMask {
  Value condition;
  bool hiddenWhereTrue = false; // `where(cond, fill, 0)`
  bool minusInf = false;        // the fill is -inf, not the lowest float
};

/// `mask` as such a `where`, when it is one.
std::optional<SelectedMask> matchSelectedMask(Value mask);

/// Matches the guard that SDPA exports put on the probabilities,
/// `where(is_nan(probs), 0, probs)`, which turns the NaN rows of a softmax
/// over all -inf scores into zeros. Returns the guarded value when `probs`
/// feeds exactly that guard, null when `probs` has no `is_nan` user, and
/// fails with `reason` when the guard has any other form.
FailureOr<Value> matchNanGuard(Value probs, std::string &reason);

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_FUSEATTENTIONMATCH_H
