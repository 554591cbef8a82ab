//===- AmxAttention.cpp - Attention's products on AMX tiles ---------------===//
//
// See AmxAttention.h. The tile use is AmxGemm.cpp's: tiles 0-3 accumulate
// a 32 x 32 block (two 16-row halves by two 16-column panels), 4 and 5 hold
// the A operand's halves, 6 and 7 the two B panels; a block of fewer than
// 32 rows configures shorter tiles, so nothing past `rows` is read or
// written. Functions that touch the tiles or convert to bf16 carry their
// target attribute and run only after amxAttentionFits().
//
//===----------------------------------------------------------------------===//

#include "AmxAttention.h"
#include "AmxGemm.h"

#include <algorithm>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LMOPT_AMX_ATTENTION 1
#include <immintrin.h>
#define LMOPT_AMX_ATTENTION_TARGET                                             \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16")))
#endif

using namespace lmopt::runtime;
using namespace lmopt::runtime::quant;

// GCC 12 reports its own AVX-512 intrinsics' undefined-source operand as
// (maybe) uninitialized (AmxGemm.cpp does the same).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

/// Contraction values per tile row (bf16).
static constexpr int64_t kStep = 32;

/// Rows of the Q or P copy: whole 16-row tiles.
static int64_t tileRows(int64_t rows) { return (rows + 15) / 16 * 16; }

bool quant::amxAttentionFits(int64_t headDim, int64_t keys) {
#ifdef LMOPT_AMX_ATTENTION
  return avx512Bf16Usable() && amxBf16Usable() && headDim > 0 && keys > 0 &&
         headDim % kStep == 0 && keys % kStep == 0;
#else
  (void)headDim, (void)keys;
  return false;
#endif
}

size_t quant::amxAttentionScratch(int64_t rows, int64_t keys, int64_t headDim) {
  // Q or P row-major, then K or V packed.
  return size_t(tileRows(rows) * std::max(keys, headDim) + keys * headDim);
}

#ifdef LMOPT_AMX_ATTENTION
namespace {

/// 32 values of a row from `x` times `scale`, rounded to bf16 (round to
/// nearest even), in order: f32 values, or bf16 ones widened first.
LMOPT_AMX_ATTENTION_TARGET inline __m512i scaled32(const float *x,
                                                   __m512 scale) {
  __m512 lo = _mm512_mul_ps(_mm512_loadu_ps(x), scale);
  __m512 hi = _mm512_mul_ps(_mm512_loadu_ps(x + 16), scale);
  return __m512i(_mm512_cvtne2ps_pbh(hi, lo));
}

/// 16 bf16 values as f32.
LMOPT_AMX_ATTENTION_TARGET inline __m512 widen16(const uint16_t *p) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(
                            reinterpret_cast<const __m256i *>(p))),
                        16));
}

LMOPT_AMX_ATTENTION_TARGET inline __m512i scaled32(const uint16_t *x,
                                                   __m512 scale) {
  return __m512i(_mm512_cvtne2ps_pbh(_mm512_mul_ps(widen16(x + 16), scale),
                                     _mm512_mul_ps(widen16(x), scale)));
}

/// 32 values of a row from `x` as bf16: f32 values rounded, bf16 ones as
/// they are.
LMOPT_AMX_ATTENTION_TARGET inline __m512i bf16x32(const float *x) {
  return scaled32(x, _mm512_set1_ps(1.0f));
}

LMOPT_AMX_ATTENTION_TARGET inline __m512i bf16x32(const uint16_t *x) {
  return _mm512_loadu_si512(x);
}

/// 16 values of a row from `x` as bf16: f32 values rounded, bf16 ones as
/// they are.
LMOPT_AMX_ATTENTION_TARGET inline __m256i bf16x16(const float *x) {
  return __m256i(_mm512_cvtneps_pbh(_mm512_loadu_ps(x)));
}

LMOPT_AMX_ATTENTION_TARGET inline __m256i bf16x16(const uint16_t *x) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x));
}

/// 16 values of two rows as bf16 pairs: word 2i is `even`'s value i, word
/// 2i + 1 `odd`'s.
template <typename T>
LMOPT_AMX_ATTENTION_TARGET inline __m512i pairs16(const T *even, const T *odd) {
  return interleave16(bf16x16(even), bf16x16(odd));
}

/// dst[r, :] = bf16(scale * src[r, :]) for r < rows, `cols` (a multiple of
/// 32) per row, src (f32 or bf16) rows `stride` elements apart, dst dense.
template <typename T>
LMOPT_AMX_ATTENTION_TARGET void convertRows(const T *src, int64_t stride,
                                            int64_t rows, int64_t cols,
                                            float scale, uint16_t *dst) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; c += kStep)
      _mm512_storeu_si512(dst + r * cols + c,
                          scaled32(src + r * stride + c, s));
}

/// out[c * 16 + j] = r[j][c]: a 16 x 16 matrix of dwords transposed
/// (pairs, then 64-bit pairs inside each 128-bit lane, then the lanes).
LMOPT_AMX_ATTENTION_TARGET void transpose16(const __m512i r[16],
                                            uint32_t *out) {
  __m512i t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4)
    for (int j = 0; j < 2; ++j) {
      u[i + j] = _mm512_unpacklo_epi64(t[i + j], t[i + j + 2]);
      u[i + j + 2] = _mm512_unpackhi_epi64(t[i + j], t[i + j + 2]);
    }
  // Lane L of u[4g + p] now holds rows 4g..4g+3 of column 4L + m, where
  // m = 0, 1, 2, 3 has p = 0, 2, 1, 3; gather the four groups per lane.
  static constexpr int kPerm[4] = {0, 2, 1, 3};
  for (int m = 0; m < 4; ++m) {
    const int p = kPerm[m];
    __m512i x0 = _mm512_shuffle_i32x4(u[p], u[4 + p], 0x44);
    __m512i x1 = _mm512_shuffle_i32x4(u[p], u[4 + p], 0xEE);
    __m512i y0 = _mm512_shuffle_i32x4(u[8 + p], u[12 + p], 0x44);
    __m512i y1 = _mm512_shuffle_i32x4(u[8 + p], u[12 + p], 0xEE);
    _mm512_store_si512(out + m * 16, _mm512_shuffle_i32x4(x0, y0, 0x88));
    _mm512_store_si512(out + (4 + m) * 16, _mm512_shuffle_i32x4(x0, y0, 0xDD));
    _mm512_store_si512(out + (8 + m) * 16, _mm512_shuffle_i32x4(x1, y1, 0x88));
    _mm512_store_si512(out + (12 + m) * 16, _mm512_shuffle_i32x4(x1, y1, 0xDD));
  }
}

/// K [keys, d] (f32 or bf16, rows `stride` elements apart) as the B
/// operand of Q K^T: for key panel p (16 keys) and step s (32 values of d),
/// a 1 KiB tile whose row i holds, for each of the panel's keys, its values
/// 2i and 2i + 1 of the step: each key's step as bf16 is a column of the
/// tile.
template <typename T>
LMOPT_AMX_ATTENTION_TARGET void
packKeys(const T *k, int64_t stride, int64_t keys, int64_t d, uint16_t *out) {
  const int64_t steps = d / kStep;
  __m512i columns[16];
  for (int64_t panel = 0; panel < keys / 16; ++panel)
    for (int64_t s = 0; s < steps; ++s) {
      for (int64_t j = 0; j < 16; ++j)
        columns[j] = bf16x32(k + (panel * 16 + j) * stride + s * kStep);
      transpose16(columns, reinterpret_cast<uint32_t *>(
                               out + (panel * steps + s) * 512));
    }
}

/// V [keys, d] (f32 or bf16, rows `stride` elements apart) as the B operand
/// of P V: for value panel p (16 columns of d) and step s (32 keys), a 1
/// KiB tile whose row i holds, for each of the panel's columns, keys 2i and
/// 2i + 1 of the step.
template <typename T>
LMOPT_AMX_ATTENTION_TARGET void
packValues(const T *v, int64_t stride, int64_t keys, int64_t d, uint16_t *out) {
  const int64_t steps = keys / kStep;
  for (int64_t j = 0; j < keys; j += 2) {
    const int64_t s = j / kStep, row = (j % kStep) / 2;
    const T *even = v + j * stride, *odd = even + stride;
    for (int64_t panel = 0; panel < d / 16; ++panel)
      _mm512_store_si512(out + (panel * steps + s) * 512 + row * 32,
                         pairs16(even + panel * 16, odd + panel * 16));
  }
}

/// x[r, :] *= scales[r] for r < rows, `cols` (a multiple of 16) per row,
/// rows `stride` floats apart.
LMOPT_AMX_ATTENTION_TARGET void scaleRows(float *x, int64_t stride,
                                          int64_t rows, int64_t cols,
                                          const float *scales) {
  for (int64_t r = 0; r < rows; ++r) {
    const __m512 f = _mm512_set1_ps(scales[r]);
    for (int64_t c = 0; c < cols; c += 16)
      _mm512_storeu_ps(x + r * stride + c,
                       _mm512_mul_ps(_mm512_loadu_ps(x + r * stride + c), f));
  }
}

/// out[r, c] = A[r, :] . B[:, c] for r < rows, c < cols, with A bf16 dense
/// [rows, depth], B packed (panels of 16 columns, depth / 32 tiles each)
/// and out's rows `outStride` floats apart.
LMOPT_AMX_ATTENTION_TARGET void product(const uint16_t *a, int64_t rows,
                                        const uint16_t *b, int64_t depth,
                                        int64_t cols, float *out,
                                        int64_t outStride) {
  const int64_t steps = depth / kStep, lda = depth * 2;
  const int64_t ldc = outStride * int64_t(sizeof(float));
  int64_t configured = -1;
  for (int64_t r0 = 0; r0 < rows; r0 += 32) {
    const int64_t blockRows = std::min<int64_t>(32, rows - r0);
    if (blockRows != configured) {
      configureAmxTiles(blockRows);
      configured = blockRows;
    }
    const bool twoHalves = blockRows > 16;
    const uint16_t *a0 = a + r0 * depth, *a1 = a0 + 16 * depth;
    for (int64_t c = 0; c < cols; c += 32) {
      const uint16_t *b0 = b + (c / 16) * steps * 512, *b1 = b0 + steps * 512;
      _tile_zero(0);
      _tile_zero(1);
      if (twoHalves) {
        _tile_zero(2);
        _tile_zero(3);
      }
      for (int64_t s = 0; s < steps; ++s) {
        _tile_loadd(4, a0 + s * kStep, lda);
        _tile_loadd(6, b0 + s * 512, 64);
        _tile_loadd(7, b1 + s * 512, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        if (twoHalves) {
          _tile_loadd(5, a1 + s * kStep, lda);
          _tile_dpbf16ps(2, 5, 6);
          _tile_dpbf16ps(3, 5, 7);
        }
      }
      float *o = out + r0 * outStride + c;
      _tile_stored(0, o, ldc);
      _tile_stored(1, o + 16, ldc);
      if (twoHalves) {
        _tile_stored(2, o + 16 * outStride, ldc);
        _tile_stored(3, o + 16 * outStride + 16, ldc);
      }
    }
  }
  _tile_release();
}

} // namespace
#endif // LMOPT_AMX_ATTENTION

template <typename T>
void quant::amxAttentionScores(const T *q, int64_t qStride, int64_t rows,
                               const T *k, int64_t kStride, int64_t keys,
                               int64_t headDim, float scale, uint16_t *scratch,
                               float *scores) {
#ifdef LMOPT_AMX_ATTENTION
  uint16_t *packed = scratch + tileRows(rows) * std::max(keys, headDim);
  convertRows(q, qStride, rows, headDim, scale, scratch);
  packKeys(k, kStride, keys, headDim, packed);
  product(scratch, rows, packed, headDim, keys, scores, keys);
#else
  (void)q, (void)qStride, (void)rows, (void)k, (void)kStride, (void)keys,
      (void)headDim, (void)scale, (void)scratch, (void)scores;
#endif
}

template <typename T>
void quant::amxAttentionValues(int64_t rows, const T *v, int64_t vStride,
                               int64_t keys, int64_t headDim, uint16_t *scratch,
                               float *out, int64_t outStride,
                               const float *rowScales) {
#ifdef LMOPT_AMX_ATTENTION
  uint16_t *packed = scratch + tileRows(rows) * std::max(keys, headDim);
  packValues(v, vStride, keys, headDim, packed);
  product(scratch, rows, packed, keys, headDim, out, outStride);
  scaleRows(out, outStride, rows, headDim, rowScales);
#else
  (void)rows, (void)v, (void)vStride, (void)keys, (void)headDim, (void)scratch,
      (void)out, (void)outStride, (void)rowScales;
#endif
}

// f32 operands, and bf16 ones (AttentionStepDesc::inputBf16).
template void quant::amxAttentionScores<float>(const float *, int64_t, int64_t,
                                               const float *, int64_t, int64_t,
                                               int64_t, float, uint16_t *,
                                               float *);
template void quant::amxAttentionScores<uint16_t>(const uint16_t *, int64_t,
                                                  int64_t, const uint16_t *,
                                                  int64_t, int64_t, int64_t,
                                                  float, uint16_t *, float *);
template void quant::amxAttentionValues<float>(int64_t, const float *, int64_t,
                                               int64_t, int64_t, uint16_t *,
                                               float *, int64_t, const float *);
template void quant::amxAttentionValues<uint16_t>(int64_t, const uint16_t *,
                                                  int64_t, int64_t, int64_t,
                                                  uint16_t *, float *, int64_t,
                                                  const float *);
