//===- AttentionSoftmax.h - Attention's softmax rows on the CPU -*- C++ -*-===//
//
// The masked, max-subtracted softmax over a block of score rows that the
// attention step (AttentionStep.cpp) and its backward (AttentionGradStep.cpp)
// share, so that the backward recomputes exactly the forward's
// probabilities: the same mask, causal and score-bias rules, the same exp
// polynomial, the same verdict on rows with every key hidden. Private to the
// CPU runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_ATTENTIONSOFTMAX_H
#define LMOPT_RUNTIME_CPU_ATTENTIONSOFTMAX_H

#include "lmopt/Runtime/CPU/AttentionStep.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

namespace lmopt::runtime {

/// Floats aligned to a cache line.
class AlignedFloats {
public:
  AlignedFloats() = default;
  AlignedFloats(const AlignedFloats &) = delete;
  AlignedFloats &operator=(const AlignedFloats &) = delete;
  ~AlignedFloats() {
    if (data_)
      ::operator delete[](data_, std::align_val_t(64));
  }
  /// False when the allocation fails.
  bool allocate(size_t count) {
    data_ = static_cast<float *>(::operator new[](
        count * sizeof(float), std::align_val_t(64), std::nothrow));
    return data_ != nullptr;
  }
  float *get() const { return data_; }

private:
  float *data_ = nullptr;
};

/// What a row's softmax left for the output.
enum class RowResult : uint8_t { Normal, Zero, NaN };

/// A block of query rows' scores for the softmax kernel.
struct RowBlock {
  float *scores;
  int64_t rows, keys;
  /// Keys the first row sees (past the causal limit they are hidden), and
  /// how many more each next row sees: 1 with causal masking, else 0.
  int64_t firstEnd, endStep;
  /// The first row's mask elements (null without a mask), and the bytes
  /// from one row's to the next's.
  const uint8_t *mask;
  int64_t maskRowBytes;
  /// The first row's score bias (null without one), and the floats from
  /// one row's to the next's (0 when the bias broadcasts over rows).
  const float *bias;
  int64_t biasRowStride;
  bool zeroMaskedRows;
  /// Per row: its result, and scratch for the kernel.
  RowResult *results;
  float *stats;
  /// False: Normal rows are left as exp(score - max), unnormalized, and
  /// stats[r] is 1 / their sum, for the caller to scale the row's output
  /// by (the bf16 products do; ScoreRowLayout::block sets true).
  bool normalize = true;
  /// With normalize false, where else the exponentials go: non-null, row r
  /// as bf16 at bf16Probs + r * keys (rounded to nearest even, the rows
  /// that are not Normal as zeros) instead of into the scores, for the
  /// bf16 product with V.
  uint16_t *bf16Probs = nullptr;
};

/// Where the rows of a (batch, head) pair's scores find their causal limit,
/// mask row and score-bias row; one per run, a RowBlock per block of rows.
struct ScoreRowLayout {
  int64_t queryLength = 0, keyLength = 0;
  bool causal = false, zeroMaskedRows = false;
  /// The mask's bytes (null without one), its element strides over
  /// [B, H, Sq, Sk] (0 where it broadcasts) and its element size.
  const uint8_t *mask = nullptr;
  const int64_t *maskStrides = nullptr;
  size_t maskElementSize = 1;
  /// The score bias (null without one) and its strides over [B, H, Sq].
  const float *bias = nullptr;
  const int64_t *biasStrides = nullptr;

  /// Rows [row0, row0 + rows) of pair (bi, hi), scores in `scores`.
  RowBlock block(int64_t bi, int64_t hi, int64_t row0, int64_t rows,
                 float *scores, RowResult *results, float *stats) const {
    RowBlock b;
    b.scores = scores;
    b.rows = rows;
    b.keys = keyLength;
    b.firstEnd = causal ? row0 + keyLength - queryLength + 1 : keyLength;
    b.endStep = causal ? 1 : 0;
    const int64_t *ms = maskStrides;
    b.mask = mask ? mask + size_t(bi * ms[0] + hi * ms[1] + row0 * ms[2]) *
                               maskElementSize
                  : nullptr;
    b.maskRowBytes = mask ? ms[2] * int64_t(maskElementSize) : 0;
    const int64_t *bs = biasStrides;
    b.bias = bias ? bias + bi * bs[0] + hi * bs[1] + row0 * bs[2] : nullptr;
    b.biasRowStride = bias ? bs[2] : 0;
    b.zeroMaskedRows = zeroMaskedRows;
    b.results = results;
    b.stats = stats;
    return b;
  }
};

/// The layout of `desc`'s scores with the run's mask and score bias (each
/// null when the desc has none) and the strides create() computed.
inline ScoreRowLayout scoreRowLayout(const AttentionStepDesc &desc,
                                     const void *mask,
                                     const int64_t *maskStrides,
                                     const float *bias,
                                     const int64_t *biasStrides) {
  ScoreRowLayout layout;
  layout.queryLength = desc.queryLength;
  layout.keyLength = desc.keyLength;
  layout.causal = desc.causal;
  layout.zeroMaskedRows = desc.zeroMaskedRows;
  layout.mask = static_cast<const uint8_t *>(mask);
  layout.maskStrides = maskStrides;
  layout.maskElementSize =
      desc.mask == AttentionMask::Additive ? sizeof(float) : 1;
  layout.bias = bias;
  layout.biasStrides = biasStrides;
  return layout;
}

using SoftmaxBlockFn = void (*)(const RowBlock &);

/// The block kernel for the mask kind (`broadcast`: one mask element for
/// every key) in the widest ISA the CPU has and oneDNN allows. Rows become
/// probabilities in place; a row whose result is Zero or NaN is left zero
/// (the caller writes its verdict).
SoftmaxBlockFn selectSoftmaxBlock(AttentionMask kind, bool broadcast);

/// Fails when `mask` is null but `desc` has a mask, or the other way round.
Status checkMaskPointer(const AttentionStepDesc &desc,
                        const std::string &prefix, const void *mask);

/// Bytes of the mask `desc` describes (0 without one).
size_t attentionMaskBytes(const AttentionStepDesc &desc);

/// The status of a failed dnnl_sgemm in an attention step, with the codes
/// LinearStep gives oneDNN's failures.
Status sgemmFailure(const std::string &prefix, int dnnlStatus);

/// True when [a, a + aBytes) and [b, b + bBytes) share a byte.
inline bool overlaps(const void *a, size_t aBytes, const void *b,
                     size_t bBytes) {
  auto begin = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
  return begin(a) < begin(b) + bBytes && begin(b) < begin(a) + aBytes;
}

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_ATTENTIONSOFTMAX_H
