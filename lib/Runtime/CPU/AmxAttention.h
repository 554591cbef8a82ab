//===- AmxAttention.h - Attention's products on AMX tiles -------*- C++ -*-===//
//
// The two products of one attention work item (a block of query rows of
// one batch and head) in bf16 on AMX tiles with f32 accumulation, for an
// attention step whose plan asks for bf16 products (`--quantize=bf16`):
// scores = scale * Q K^T and output = P V, the softmax between them staying
// f32 (AttentionSoftmax.h). Internal to the runtime; AttentionStep.cpp
// calls them only where amxAttentionFits().
//
// Each call puts its operands into the thread's scratch as bf16: Q (times
// the scale) row-major, K and V in the tile products' B layout (panels of
// 16 columns, each 32-value step of the contraction one contiguous 1 KiB
// tile of value pairs, as AmxGemm.h packs weights), converting f32 ones, so
// a work item reads its operands once; the softmax writes P there as bf16
// itself.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_AMXATTENTION_H
#define LMOPT_LIB_RUNTIME_CPU_AMXATTENTION_H

#include <cstddef>
#include <cstdint>

namespace lmopt::runtime::quant {

/// True when this CPU runs bf16 tile products (amxBf16Usable) and AVX-512
/// BF16 conversions, and a head of `headDim` values over `keys` keys fits
/// the tiles: both multiples of 32.
bool amxAttentionFits(int64_t headDim, int64_t keys);

/// bf16 elements of scratch one thread needs for items of up to `rows`
/// query rows.
size_t amxAttentionScratch(int64_t rows, int64_t keys, int64_t headDim);

/// scores[r, j] = scale * (Q[r, :] . K[j, :]) for r < rows, j < keys, with
/// Q's rows `qStride` elements apart, K's `kStride` apart, scores dense
/// [rows, keys]. `T` is float, or uint16_t for bf16 Q and K: Q's values
/// widened and times the scale are rounded to bf16 again, K goes to the
/// tiles as it is (the bits of the f32 form given the values widened).
/// `scratch` holds amxAttentionScratch(rows, keys, headDim) elements,
/// 64-byte aligned.
template <typename T>
void amxAttentionScores(const T *q, int64_t qStride, int64_t rows, const T *k,
                        int64_t kStride, int64_t keys, int64_t headDim,
                        float scale, uint16_t *scratch, float *scores);

/// out[r, :] = rowScales[r] * (P[r, :] x V) for r < rows, with P dense bf16
/// [rows, keys] at the start of `scratch` (a softmax's unnormalized
/// exponentials, written there through RowBlock::bf16Probs; rowScales the
/// inverse sums), V (f32, or bf16 as uint16_t) rows `vStride` elements
/// apart and out's `outStride` floats apart.
template <typename T>
void amxAttentionValues(int64_t rows, const T *v, int64_t vStride, int64_t keys,
                        int64_t headDim, uint16_t *scratch, float *out,
                        int64_t outStride, const float *rowScales);

} // namespace lmopt::runtime::quant

#endif // LMOPT_LIB_RUNTIME_CPU_AMXATTENTION_H
