//===- WeightOnlyGemm.cpp - f32 GEMM over int4 and f16 weights -----------===//
//
// Both GEMMs share one driver. The input is taken in blocks of at most
// 1 MiB of f32 (rows by up to 768 columns); each thread regroups a block
// into its own scratch as [row group][column][6] (six rows interleaved, the
// last group padded with zeros), so that it stays in that core's L2 and the
// micro-kernel reads one sequential stream. Then, per panel and per 128-row
// K chunk, the thread widens the chunk into a 32 KiB buffer (it stays in
// L1, 48 KiB on Sapphire Rapids) and runs the 6x64 micro-kernel over every
// row group of the block. Only the widening differs:
//
// - int4: w = (q - zp) * scale in f32, q - zp formed exactly as
//   float(2^23 + q) - (2^23 + zp) (the nibble or'ed into the mantissa of
//   2^23), so no integer-to-float conversion is needed;
// - f16: vcvtph2ps, exact.
//
// int4 products of one or two rows (a decoding step) skip both buffers:
// each thread takes whole panels, forms q - zp in registers and sums the
// rows' products per K block, applying the block's scales once at its end.
//
//===----------------------------------------------------------------------===//

#include "WeightOnlyGemm.h"

#include "OmpRegionSync.h"
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
/// The input block kept in L2: K columns at a time, and its bytes.
static constexpr int64_t kBlockMax = 768;
static constexpr int64_t kInputBlockBytes = int64_t(1) << 20;
/// Rows a thread needs before the threads split rows rather than panels
/// (the driver says why).
static constexpr int64_t kRowsPerThread = 48;
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
        zp = weightSigned ? int32_t(static_cast<const int8_t *>(
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

//===----------------------------------------------------------------------===//
// AVX-512 forms
//===----------------------------------------------------------------------===//

#ifdef LMOPT_WONLY_AVX512

/// q - zp of one K row of an int4 panel (the 32 bytes at `src`), lanes
/// [16 g, 16 g + 16) in q[g], exactly: the nibble or'ed into the mantissa of
/// 2^23 is 2^23 + q, and `z` holds 2^23 + zp.
LMOPT_AVX512 static inline void
int4RowMinusZero(const uint8_t *src, const __m512 z[4], __m512 q[4]) {
  const __m512i low = _mm512_set1_epi32(0xF);
  const __m512i magic = _mm512_set1_epi32(0x4B000000); // bits of 2^23
  __m512i v0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)src));
  __m512i v1 =
      _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(src + 16)));
  // (v & 0xF) | magic in one ternary-logic op; (v >> 4) | magic.
  __m512i bits[4] = {_mm512_ternarylogic_epi32(v0, low, magic, 0xEA),
                     _mm512_ternarylogic_epi32(v1, low, magic, 0xEA),
                     _mm512_or_si512(_mm512_srli_epi32(v0, 4), magic),
                     _mm512_or_si512(_mm512_srli_epi32(v1, 4), magic)};
  for (int g = 0; g < 4; ++g)
    q[g] = _mm512_sub_ps(_mm512_castsi512_ps(bits[g]), z[g]);
}

/// Widens rows [k0, k0 + kn) of int4 panel `p` into b ([kn][64] f32).
LMOPT_AVX512 static void widenInt4Avx512(const Int4Panels &w, int64_t p,
                                         int64_t k0, int64_t kn, float *b) {
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
      __m512 q[4];
      int4RowMinusZero(w.nibbles.data() + (p * w.k + k) * 32, z, q);
      float *dst = b + (k - k0) * kPanel;
      for (int g = 0; g < 4; ++g)
        _mm512_store_ps(dst + 16 * g, _mm512_mul_ps(q[g], s[g]));
    }
  }
}

/// acc[R][64] = x[R, k] x dequantize(int4 panel p), for R <= 2 rows (a
/// decoding step): no input regrouping and no widened buffer. Each row of
/// the panel becomes q - zp in registers (int4RowMinusZero), which every
/// input row multiplies into per-block sums; a block's sums
/// take its scales once at its end, so the scales cost one multiply per 32
/// K rows instead of one per weight.
template <int R>
LMOPT_AVX512 static void gemvInt4Panel(const float *x, const Int4Panels &w,
                                       int64_t p, float *acc, int64_t ldc) {
  __m512 out[R][4];
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < 4; ++g)
      out[r][g] = _mm512_setzero_ps();
  const int64_t k = w.k;
  const uint8_t *nibbles = w.nibbles.data() + p * k * 32;
  for (int64_t block = 0; block < w.blocks; ++block) {
    const float *sc = w.scales.data() + (p * w.blocks + block) * kPanel;
    const float *zp = w.zeroPoints.data() + (p * w.blocks + block) * kPanel;
    __m512 z[4], sum[R][4];
    for (int g = 0; g < 4; ++g) {
      z[g] = _mm512_loadu_ps(zp + 16 * g);
      for (int r = 0; r < R; ++r)
        sum[r][g] = _mm512_setzero_ps();
    }
    for (int64_t kk = block * w.blockSize; kk < (block + 1) * w.blockSize;
         ++kk) {
      __m512 q[4];
      int4RowMinusZero(nibbles + kk * 32, z, q);
      for (int r = 0; r < R; ++r) {
        __m512 xv = _mm512_set1_ps(x[r * k + kk]);
        for (int g = 0; g < 4; ++g)
          sum[r][g] = _mm512_fmadd_ps(xv, q[g], sum[r][g]);
      }
    }
    for (int g = 0; g < 4; ++g) {
      __m512 scale = _mm512_loadu_ps(sc + 16 * g);
      for (int r = 0; r < R; ++r)
        out[r][g] = _mm512_fmadd_ps(scale, sum[r][g], out[r][g]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < 4; ++g)
      _mm512_storeu_ps(acc + r * ldc + p * kPanel + 16 * g, out[r][g]);
}

/// Widens rows [k0, k0 + kn) of f16 panel `p` into b ([kn][64] f32).
LMOPT_AVX512 static void widenF16PanelAvx512(const F16Panels &w, int64_t p,
                                             int64_t k0, int64_t kn, float *b) {
  const uint16_t *src = w.halves.data() + (p * w.k + k0) * kPanel;
  for (int64_t i = 0; i < kn * kPanel; i += 16)
    _mm512_store_ps(b + i, _mm512_cvtph_ps(_mm256_loadu_si256(
                               reinterpret_cast<const __m256i *>(src + i))));
}

/// c[mr][64] (+)= a[kn][6] x b[kn][64] for the first mr <= 6 rows of the
/// interleaved group `a`; `first` starts from zero.
LMOPT_AVX512 static void microAvx512(const float *a, const float *b, int64_t kn,
                                     float *c, int64_t ldc, int64_t mr,
                                     bool first) {
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

/// For output vector j of interleave16, lane l holds flat element
/// f = 16 j + l, that is row f % 6, column f / 6: `index` picks it from a
/// pair of rows (column + 16 for the odd row), `pair23` and `pair45` say
/// which pair.
struct InterleaveTables {
  int32_t index[kRows][16];
  __mmask16 pair23[kRows], pair45[kRows];
  InterleaveTables() {
    for (int j = 0; j < kRows; ++j) {
      pair23[j] = pair45[j] = 0;
      for (int l = 0; l < 16; ++l) {
        int f = 16 * j + l, row = f % kRows, col = f / kRows;
        index[j][l] = col + 16 * (row % 2);
        if (row / 2 == 1)
          pair23[j] |= __mmask16(1u << l);
        if (row / 2 == 2)
          pair45[j] |= __mmask16(1u << l);
      }
    }
  }
};

/// Regroups 16 columns of six rows into dst ([16][6]): three two-source
/// permutes and two blends per output vector.
LMOPT_AVX512 static void interleave16(const __m512 *rows, float *dst) {
  static const InterleaveTables tables;
  for (int j = 0; j < kRows; ++j) {
    __m512i index = _mm512_loadu_si512(tables.index[j]);
    __m512 v = _mm512_permutex2var_ps(rows[0], index, rows[1]);
    v = _mm512_mask_blend_ps(tables.pair23[j], v,
                             _mm512_permutex2var_ps(rows[2], index, rows[3]));
    v = _mm512_mask_blend_ps(tables.pair45[j], v,
                             _mm512_permutex2var_ps(rows[4], index, rows[5]));
    _mm512_storeu_ps(dst + 16 * j, v);
  }
}

/// Regroups columns [k0, k0 + kn) of rows [g*6, g*6 + 6) of x ([rows, k],
/// f32 or, with `Half`, f16 bits; missing rows are zero) into dst ([kn][6]).
template <bool Half>
LMOPT_AVX512 static void packGroupAvx512(const void *x, int64_t rows, int64_t k,
                                         int64_t g, int64_t k0, int64_t kn,
                                         float *dst) {
  int64_t mr = std::min(kRows, rows - g * kRows);
  for (int64_t kk = 0; kk < kn; kk += 16) {
    __mmask16 lanes =
        kn - kk >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (kn - kk)) - 1);
    __m512 v[kRows];
    for (int64_t i = 0; i < kRows; ++i) {
      int64_t at = (g * kRows + i) * k + k0 + kk;
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
      std::memcpy(dst + kk * kRows, tail, size_t((kn - kk) * kRows) * 4);
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
static void packGroupPortable(const void *x, int64_t rows, int64_t k, int64_t g,
                              int64_t k0, int64_t kn, float *dst) {
  std::vector<float> row{};
  row.resize(size_t(kn));
  for (int64_t i = 0; i < kRows; ++i) {
    int64_t r = g * kRows + i;
    if (r >= rows)
      std::fill(row.begin(), row.end(), 0.0f);
    else if (Half)
      widenF16(static_cast<const uint16_t *>(x) + r * k + k0, size_t(kn),
               row.data());
    else
      std::memcpy(row.data(), static_cast<const float *>(x) + r * k + k0,
                  size_t(kn) * 4);
    for (int64_t kk = 0; kk < kn; ++kk)
      dst[kk * kRows + i] = row[size_t(kk)];
  }
}

static void microPortable(const float *a, const float *b, int64_t kn, float *c,
                          int64_t ldc, int64_t mr, bool first) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t lane = 0; lane < kPanel; ++lane) {
      float sum = first ? 0.0f : c[i * ldc + lane];
      for (int64_t k = 0; k < kn; ++k)
        sum += a[k * kRows + i] * b[k * kPanel + lane];
      c[i * ldc + lane] = sum;
    }
}

/// How the driver blocks the input: blocks of blockGroups row groups by
/// kBlock columns, at most ~1 MiB of f32, so that the block stays in L2
/// (2 MiB a core) while every panel of the thread passes over it; each
/// extra row block costs one more widening of the weight, so the blocks
/// are as few as that allows.
struct Blocking {
  int64_t groups, kBlock, blockGroups;
  Blocking(int64_t rows, int64_t k) {
    groups = (rows + kRows - 1) / kRows;
    kBlock = std::min(k, kBlockMax);
    int64_t rowBlocks =
        (groups * kRows * kBlock * 4 + kInputBlockBytes - 1) / kInputBlockBytes;
    blockGroups = (groups + rowBlocks - 1) / rowBlocks;
  }
  int64_t blockFloats() const { return blockGroups * kRows * kBlock; }
};

static int teamOf(int threads) {
  return threads > 0 ? threads : omp_get_max_threads();
}

size_t quant::gemmScratchFloats(int64_t rows, int64_t k, int threads) {
  return size_t(teamOf(threads) * Blocking(rows, k).blockFloats());
}

/// acc = x x W, W widened chunk by chunk by `widen(p, k0, kn, buffer)`;
/// `done(r0, r1)` (when set) is called on each thread for rows of acc that
/// are final.
///
/// Per row block and K block, each thread regroups the input block into its
/// own part of `scratch` (both threads read it, so each keeps a copy in its
/// own L2), then passes its panels over it.
template <bool Half, typename Widen, typename WidenPortable>
static void gemmPanels(const void *x, int64_t rows, int64_t k, int64_t panels,
                       Widen widen, WidenPortable widenPortable, float *scratch,
                       float *acc, int threads, bool avx512,
                       const RowsDone &done) {
  const int64_t kc = std::min(k, kChunk);
  const int64_t ldc = panels * kPanel;
  const Blocking blocking(rows, k);
  const int64_t groups = blocking.groups, kBlock = blocking.kBlock,
                blockGroups = blocking.blockGroups;
  int team = teamOf(threads);
  // With 48 rows a thread or more, the threads split the rows: each widens
  // the whole weight for its own row blocks, regroups only its rows and
  // finishes them without waiting for the others (no barrier, no block
  // regrouped twice). At 64 rows a thread that measured 1-2% faster than
  // splitting the panels, though the weight is widened twice; at 256 rows a
  // thread it costs no extra widening at all. Fewer rows split the panels,
  // so that each part of the weight is widened once, and the row blocks'
  // epilogue waits for both threads.
  const bool splitRows = groups >= int64_t(team) * kRowsPerThread / kRows;
  if (!splitRows)
    team = int(std::min<int64_t>(team, panels));
  // Small products are not worth waking the team for.
  if (rows * k * panels * kPanel < (int64_t(1) << 18))
    team = 1;
  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(team)
  {
    ompSync.enter();
    int t = omp_get_thread_num(), count = omp_get_num_threads();
    float *a = scratch + t * blocking.blockFloats();
    alignas(64) float b[kChunk * kPanel];
    int64_t rowsBegin = 0, rowsEnd = groups, p0 = 0, p1 = panels;
    if (splitRows) {
      rowsBegin = groups * t / count;
      rowsEnd = groups * (t + 1) / count;
    } else {
      p0 = panels * t / count;
      p1 = panels * (t + 1) / count;
    }
    for (int64_t g0 = rowsBegin; g0 < rowsEnd; g0 += blockGroups) {
      int64_t g1 = std::min(rowsEnd, g0 + blockGroups);
      for (int64_t kb = 0; kb < k; kb += kBlock) {
        int64_t kbn = std::min(kBlock, k - kb);
        for (int64_t g = g0; g < g1; ++g) {
#ifdef LMOPT_WONLY_AVX512
          if (avx512) {
            packGroupAvx512<Half>(x, rows, k, g, kb, kbn,
                                  a + (g - g0) * kRows * kbn);
            continue;
          }
#endif
          packGroupPortable<Half>(x, rows, k, g, kb, kbn,
                                  a + (g - g0) * kRows * kbn);
        }
        for (int64_t p = p0; p < p1; ++p)
          for (int64_t k0 = kb; k0 < kb + kbn; k0 += kc) {
            int64_t kn = std::min(kc, kb + kbn - k0);
            float *c = acc + p * kPanel;
            const float *ak = a + (k0 - kb) * kRows;
#ifdef LMOPT_WONLY_AVX512
            if (avx512) {
              widen(p, k0, kn, b);
              for (int64_t g = g0; g < g1; ++g)
                microAvx512(ak + (g - g0) * kRows * kbn, b, kn,
                            c + g * kRows * ldc, ldc,
                            std::min(kRows, rows - g * kRows), k0 == 0);
              continue;
            }
#endif
            widenPortable(p, k0, kn, b);
            for (int64_t g = g0; g < g1; ++g)
              microPortable(ak + (g - g0) * kRows * kbn, b, kn,
                            c + g * kRows * ldc, ldc,
                            std::min(kRows, rows - g * kRows), k0 == 0);
          }
      }
      // The block's rows are complete (when the threads split the panels,
      // once every thread has passed); the caller finishes them while they
      // are still in cache.
      int64_t r0 = g0 * kRows, r1 = std::min(rows, g1 * kRows);
      if (done && splitRows) {
        done(r0, r1);
      } else if (done) {
#pragma omp barrier
        done(r0 + (r1 - r0) * t / count, r0 + (r1 - r0) * (t + 1) / count);
      }
    }
    ompSync.leave();
  }
  ompSync.join();
  (void)avx512;
  (void)widen;
}

/// gemmInt4 for one or two rows: the threads split the panels.
static void gemvInt4(const float *x, int64_t rows, const Int4Panels &w,
                     float *acc, int threads, const RowsDone &done) {
  int team = int(std::min<int64_t>(teamOf(threads), w.panels));
  if (rows * w.k * w.panels * kPanel < (int64_t(1) << 18))
    team = 1;
  const int64_t ldc = w.panels * kPanel;
  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(team)
  {
    ompSync.enter();
    int t = omp_get_thread_num(), count = omp_get_num_threads();
    for (int64_t p = w.panels * t / count; p < w.panels * (t + 1) / count;
         ++p) {
#ifdef LMOPT_WONLY_AVX512
      if (rows == 1)
        gemvInt4Panel<1>(x, w, p, acc, ldc);
      else
        gemvInt4Panel<2>(x, w, p, acc, ldc);
#endif
    }
    if (done) {
#pragma omp barrier
      done(rows * t / count, rows * (t + 1) / count);
    }
    ompSync.leave();
  }
  ompSync.join();
}

void quant::gemmInt4(const float *x, int64_t rows, const Int4Panels &w,
                     float *scratch, float *acc, int threads, bool avx512,
                     const RowsDone &done) {
  // One or two rows (decoding): 5/6 of the 6-row micro-kernel's products
  // would be padding, and widening each weight into a buffer costs more
  // than the product itself.
  if (avx512 && rows <= 2) {
    gemvInt4(x, rows, w, acc, threads, done);
    return;
  }
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
      scratch, acc, threads, avx512, done);
}

void quant::gemmF16(const uint16_t *x, int64_t rows, const F16Panels &w,
                    float *scratch, float *acc, int threads, bool avx512,
                    const RowsDone &done) {
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
      scratch, acc, threads, avx512, done);
}
