//===- WeightOnlyGemm.cpp - f32 GEMM over int4 and f16 weights -----------===//
//
// Both GEMMs share one driver: the team regroups the input into
// [ceil(rows / 6)][K][6] f32 (six rows interleaved, the last group padded
// with zeros), then each thread takes a contiguous range of panels and, per
// panel and per 128-row K chunk, widens the chunk into a 32 KiB buffer (it
// stays in L1, 48 KiB on Sapphire Rapids) and runs the 6x64 micro-kernel
// over every row group. Only the widening differs:
//
// - int4: w = (q - zp) * scale in f32, q - zp formed exactly as
//   float(2^23 + q) - (2^23 + zp) (the nibble or'ed into the mantissa of
//   2^23), so no integer-to-float conversion is needed;
// - f16: vcvtph2ps, exact.
//
//===----------------------------------------------------------------------===//

#include "WeightOnlyGemm.h"

#include "QuantKernels.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LMOPT_WONLY_AVX512 1
#define LMOPT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#endif

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports the undefined pass-through operand inside its own AVX-512
// intrinsics as maybe uninitialized (where the templates below are
// instantiated, so for the whole file).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

using namespace lmopt::runtime;
using namespace lmopt::runtime::quant;

/// Rows per micro-kernel tile, and the K chunk widened at a time.
static constexpr int64_t kRows = 6;
static constexpr int64_t kChunk = 128;
static constexpr float kMagic = 8388608.0f; // 2^23

//===----------------------------------------------------------------------===//
// Packing (once, when the step is created)
//===----------------------------------------------------------------------===//

void quant::packInt4(const uint8_t *weight, const float *scales,
                     const void *zeroPoints, bool weightSigned, int64_t k,
                     int64_t n, int64_t blockSize, Int4Panels &out) {
  const int64_t P = kPanel;
  out.k = k;
  out.n = n;
  out.blockSize = blockSize;
  out.panels = (n + P - 1) / P;
  out.blocks = k / blockSize;
  out.nibbles.assign(size_t(out.panels * k * 32), 0);
  out.scales.assign(size_t(out.panels * out.blocks * P), 0.0f);
  out.zeroPoints.assign(size_t(out.panels * out.blocks * P), kMagic);
  // Signed nibbles are stored as value + 8 (nibble ^ 8), their zero points
  // shifted alike, so that dequantization is one unsigned form.
  const int32_t shift = weightSigned ? 8 : 0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t p = col / P, lane = col % P;
    const uint8_t *row = weight + col * (k / 2);
    for (int64_t kk = 0; kk < k; ++kk) {
      uint8_t nib = (row[kk / 2] >> (kk % 2 ? 4 : 0)) & 0xF;
      if (weightSigned)
        nib ^= 8;
      uint8_t &dst = out.nibbles[size_t((p * k + kk) * 32 + lane % 32)];
      dst |= uint8_t(nib << (lane < 32 ? 0 : 4));
    }
    for (int64_t b = 0; b < out.blocks; ++b) {
      size_t at = size_t((p * out.blocks + b) * P + lane);
      out.scales[at] = scales[col * out.blocks + b];
      int32_t zp = 0;
      if (zeroPoints)
        zp = weightSigned
                 ? int32_t(static_cast<const int8_t *>(
                       zeroPoints)[col * out.blocks + b])
                 : int32_t(static_cast<const uint8_t *>(
                       zeroPoints)[col * out.blocks + b]);
      out.zeroPoints[at] = kMagic + float(zp + shift);
    }
  }
  // Padding columns: nibble 0, zero point 0, scale 0, so they stay 0.
}

void quant::packF16(const uint16_t *weight, bool transposed, int64_t k,
                    int64_t n, F16Panels &out) {
  const int64_t P = kPanel;
  out.k = k;
  out.n = n;
  out.panels = (n + P - 1) / P;
  out.halves.assign(size_t(out.panels * k * P), 0); // +0.0 padding
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t col = 0; col < n; ++col)
      out.halves[size_t(((col / P) * k + kk) * P + col % P)] =
          transposed ? weight[col * k + kk] : weight[kk * n + col];
}

size_t quant::gemmScratchFloats(int64_t rows, int64_t k) {
  return size_t((rows + kRows - 1) / kRows * kRows * k);
}

//===----------------------------------------------------------------------===//
// AVX-512 forms
//===----------------------------------------------------------------------===//

#ifdef LMOPT_WONLY_AVX512

/// Widens rows [k0, k0 + kn) of int4 panel `p` into b ([kn][64] f32).
LMOPT_AVX512 static void widenInt4Avx512(const Int4Panels &w, int64_t p,
                                         int64_t k0, int64_t kn, float *b) {
  const __m512i low = _mm512_set1_epi32(0xF);
  const __m512i magic = _mm512_set1_epi32(0x4B000000); // bits of 2^23
  for (int64_t k = k0; k < k0 + kn;) {
    int64_t block = k / w.blockSize;
    int64_t blockEnd = std::min(k0 + kn, (block + 1) * w.blockSize);
    const float *sc = w.scales.data() + (p * w.blocks + block) * kPanel;
    const float *zp = w.zeroPoints.data() + (p * w.blocks + block) * kPanel;
    __m512 s[4], z[4];
    for (int g = 0; g < 4; ++g) {
      s[g] = _mm512_loadu_ps(sc + 16 * g);
      z[g] = _mm512_loadu_ps(zp + 16 * g);
    }
    for (; k < blockEnd; ++k) {
      const uint8_t *src = w.nibbles.data() + (p * w.k + k) * 32;
      __m512i v0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)src));
      __m512i v1 =
          _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(src + 16)));
      // (v & 0xF) | magic in one ternary-logic op; (v >> 4) | magic.
      __m512i q[4] = {_mm512_ternarylogic_epi32(v0, low, magic, 0xEA),
                      _mm512_ternarylogic_epi32(v1, low, magic, 0xEA),
                      _mm512_or_si512(_mm512_srli_epi32(v0, 4), magic),
                      _mm512_or_si512(_mm512_srli_epi32(v1, 4), magic)};
      float *dst = b + (k - k0) * kPanel;
      for (int g = 0; g < 4; ++g)
        _mm512_store_ps(dst + 16 * g,
                        _mm512_mul_ps(_mm512_sub_ps(_mm512_castsi512_ps(q[g]),
                                                    z[g]),
                                      s[g]));
    }
  }
}

/// Widens rows [k0, k0 + kn) of f16 panel `p` into b ([kn][64] f32).
LMOPT_AVX512 static void widenF16PanelAvx512(const F16Panels &w, int64_t p,
                                             int64_t k0, int64_t kn,
                                             float *b) {
  const uint16_t *src = w.halves.data() + (p * w.k + k0) * kPanel;
  for (int64_t i = 0; i < kn * kPanel; i += 16)
    _mm512_store_ps(b + i, _mm512_cvtph_ps(_mm256_loadu_si256(
                               reinterpret_cast<const __m256i *>(src + i))));
}

/// c[mr][64] (+)= a[kn][6] x b[kn][64] for the first mr <= 6 rows of the
/// interleaved group `a`; `first` starts from zero.
LMOPT_AVX512 static void microAvx512(const float *a, const float *b,
                                     int64_t kn, float *c, int64_t ldc,
                                     int64_t mr, bool first) {
  __m512 acc[kRows][4];
#pragma GCC unroll 6
  for (int i = 0; i < kRows; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      acc[i][j] = first || i >= mr ? _mm512_setzero_ps()
                                   : _mm512_loadu_ps(c + i * ldc + 16 * j);
  for (int64_t k = 0; k < kn; ++k) {
    const float *bk = b + k * kPanel;
    const float *ak = a + k * kRows;
    __m512 b0 = _mm512_load_ps(bk), b1 = _mm512_load_ps(bk + 16),
           b2 = _mm512_load_ps(bk + 32), b3 = _mm512_load_ps(bk + 48);
#pragma GCC unroll 6
    for (int i = 0; i < kRows; ++i) {
      __m512 av = _mm512_set1_ps(ak[i]);
      acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_ps(av, b2, acc[i][2]);
      acc[i][3] = _mm512_fmadd_ps(av, b3, acc[i][3]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kRows; ++i)
    if (i < mr)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        _mm512_storeu_ps(c + i * ldc + 16 * j, acc[i][j]);
}

/// Regroups 16 columns of six rows (rows past `mr` are zero) into dst
/// ([16][6]).
LMOPT_AVX512 static void interleave16(const __m512 *rows, float *dst) {
  alignas(64) float t[kRows][16];
  for (int i = 0; i < kRows; ++i)
    _mm512_store_ps(t[i], rows[i]);
  for (int k = 0; k < 16; ++k)
    for (int i = 0; i < kRows; ++i)
      dst[k * kRows + i] = t[i][k];
}

/// Regroups rows [g*6, g*6 + 6) of x (f32, or f16 bits with `Half`) into
/// dst ([k][6]).
template <bool Half>
LMOPT_AVX512 static void packGroupAvx512(const void *x, int64_t rows,
                                         int64_t k, int64_t g, float *dst) {
  int64_t mr = std::min(kRows, rows - g * kRows);
  for (int64_t kk = 0; kk < k; kk += 16) {
    __mmask16 lanes =
        k - kk >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (k - kk)) - 1);
    __m512 v[kRows];
    for (int64_t i = 0; i < kRows; ++i) {
      int64_t at = (g * kRows + i) * k + kk;
      if (i >= mr)
        v[i] = _mm512_setzero_ps();
      else if (Half)
        v[i] = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(
            lanes, static_cast<const uint16_t *>(x) + at));
      else
        v[i] = _mm512_maskz_loadu_ps(lanes, static_cast<const float *>(x) + at);
    }
    if (lanes == 0xFFFF) {
      interleave16(v, dst + kk * kRows);
    } else {
      alignas(64) float tail[16 * kRows];
      interleave16(v, tail);
      std::memcpy(dst + kk * kRows, tail, size_t((k - kk) * kRows) * 4);
    }
  }
}

#endif // LMOPT_WONLY_AVX512

//===----------------------------------------------------------------------===//
// Portable forms and the driver
//===----------------------------------------------------------------------===//

static void widenInt4Portable(const Int4Panels &w, int64_t p, int64_t k0,
                              int64_t kn, float *b) {
  for (int64_t k = k0; k < k0 + kn; ++k) {
    int64_t block = k / w.blockSize;
    const float *sc = w.scales.data() + (p * w.blocks + block) * kPanel;
    const float *zp = w.zeroPoints.data() + (p * w.blocks + block) * kPanel;
    const uint8_t *src = w.nibbles.data() + (p * w.k + k) * 32;
    for (int lane = 0; lane < kPanel; ++lane) {
      int32_t q = (src[lane % 32] >> (lane < 32 ? 0 : 4)) & 0xF;
      b[(k - k0) * kPanel + lane] = (float(q) + kMagic - zp[lane]) * sc[lane];
    }
  }
}

static void widenF16PanelPortable(const F16Panels &w, int64_t p, int64_t k0,
                                  int64_t kn, float *b) {
  widenF16(w.halves.data() + (p * w.k + k0) * kPanel, size_t(kn * kPanel), b);
}

template <bool Half>
static void packGroupPortable(const void *x, int64_t rows, int64_t k,
                              int64_t g, float *dst) {
  std::vector<float> row{};
  row.resize(size_t(k));
  for (int64_t i = 0; i < kRows; ++i) {
    int64_t r = g * kRows + i;
    if (r >= rows)
      std::fill(row.begin(), row.end(), 0.0f);
    else if (Half)
      widenF16(static_cast<const uint16_t *>(x) + r * k, size_t(k),
               row.data());
    else
      std::memcpy(row.data(), static_cast<const float *>(x) + r * k,
                  size_t(k) * 4);
    for (int64_t kk = 0; kk < k; ++kk)
      dst[kk * kRows + i] = row[size_t(kk)];
  }
}

static void microPortable(const float *a, const float *b, int64_t kn,
                          float *c, int64_t ldc, int64_t mr, bool first) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t lane = 0; lane < kPanel; ++lane) {
      float sum = first ? 0.0f : c[i * ldc + lane];
      for (int64_t k = 0; k < kn; ++k)
        sum += a[k * kRows + i] * b[k * kPanel + lane];
      c[i * ldc + lane] = sum;
    }
}

/// acc = x x W, W widened chunk by chunk by `widen(p, k0, kn, buffer)`.
template <bool Half, typename Widen, typename WidenPortable>
static void gemmPanels(const void *x, int64_t rows, int64_t k,
                       int64_t panels, Widen widen,
                       WidenPortable widenPortable, float *scratch,
                       float *acc, int threads, bool avx512) {
  const int64_t kc = std::min(k, kChunk);
  const int64_t ldc = panels * kPanel;
  const int64_t groups = (rows + kRows - 1) / kRows;
  int team = threads > 0 ? threads : omp_get_max_threads();
  // Small products are not worth waking the team for.
  if (rows * k * panels * kPanel < (int64_t(1) << 18))
    team = 1;
#pragma omp parallel num_threads(team)
  {
    int t = omp_get_thread_num(), count = omp_get_num_threads();
    for (int64_t g = groups * t / count; g < groups * (t + 1) / count; ++g) {
#ifdef LMOPT_WONLY_AVX512
      if (avx512) {
        packGroupAvx512<Half>(x, rows, k, g, scratch + g * kRows * k);
        continue;
      }
#endif
      packGroupPortable<Half>(x, rows, k, g, scratch + g * kRows * k);
    }
#pragma omp barrier
    alignas(64) float b[kChunk * kPanel];
    for (int64_t p = panels * t / count; p < panels * (t + 1) / count; ++p)
      for (int64_t k0 = 0; k0 < k; k0 += kc) {
        int64_t kn = std::min(kc, k - k0);
        float *c = acc + p * kPanel;
#ifdef LMOPT_WONLY_AVX512
        if (avx512) {
          widen(p, k0, kn, b);
          for (int64_t g = 0; g < groups; ++g)
            microAvx512(scratch + (g * k + k0) * kRows, b, kn,
                        c + g * kRows * ldc, ldc,
                        std::min(kRows, rows - g * kRows), k0 == 0);
          continue;
        }
#endif
        widenPortable(p, k0, kn, b);
        for (int64_t g = 0; g < groups; ++g)
          microPortable(scratch + (g * k + k0) * kRows, b, kn,
                        c + g * kRows * ldc, ldc,
                        std::min(kRows, rows - g * kRows), k0 == 0);
      }
  }
  (void)avx512;
  (void)widen;
}

void quant::gemmInt4(const float *x, int64_t rows, const Int4Panels &w,
                     float *scratch, float *acc, int threads, bool avx512) {
  gemmPanels</*Half=*/false>(
      x, rows, w.k, w.panels,
      [&](int64_t p, int64_t k0, int64_t kn, float *b) {
#ifdef LMOPT_WONLY_AVX512
        widenInt4Avx512(w, p, k0, kn, b);
#endif
        (void)p, (void)k0, (void)kn, (void)b;
      },
      [&](int64_t p, int64_t k0, int64_t kn, float *b) {
        widenInt4Portable(w, p, k0, kn, b);
      },
      scratch, acc, threads, avx512);
}

void quant::gemmF16(const uint16_t *x, int64_t rows, const F16Panels &w,
                    float *scratch, float *acc, int threads, bool avx512) {
  gemmPanels</*Half=*/true>(
      x, rows, w.k, w.panels,
      [&](int64_t p, int64_t k0, int64_t kn, float *b) {
#ifdef LMOPT_WONLY_AVX512
        widenF16PanelAvx512(w, p, k0, kn, b);
#endif
        (void)p, (void)k0, (void)kn, (void)b;
      },
      [&](int64_t p, int64_t k0, int64_t kn, float *b) {
        widenF16PanelPortable(w, p, k0, kn, b);
      },
      scratch, acc, threads, avx512);
}
