//===- QuantKernels.cpp - Loops behind the quantized linear step ---------===//
//
// Every AVX-512 function has a portable twin below it that computes the same
// formula; rounding is round-half-to-even in both (the default rounding mode
// for std::nearbyint, _MM_FROUND_TO_NEAREST_INT for the vector converts).
//
//===----------------------------------------------------------------------===//

#include "QuantKernels.h"

#include "OmpRegionSync.h"
#include "lmopt/Format/Float16.h"

#include <oneapi/dnnl/dnnl.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define LMOPT_QUANT_AVX512 1
#define LMOPT_AVX512 __attribute__((target("avx512f,avx512bw")))
// The epilogue's loops: AVX-512 F, BW, DQ and VL (useAvx512 checks them), and
// BF16 for the one form that stores with vcvtneps2bf16 (OutForm::Bf16Native,
// picked only where the CPU has it; the other forms use no BF16 instruction).
#define LMOPT_AVX512_EPILOGUE                                                  \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")))
#endif

using namespace lmopt::runtime;
using namespace lmopt::runtime::quant;

bool quant::useAvx512() {
#ifdef LMOPT_QUANT_AVX512
  unsigned isa = unsigned(dnnl_get_effective_cpu_isa());
  unsigned avx512 = unsigned(dnnl_cpu_isa_avx512_core);
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && (isa & avx512) == avx512;
#else
  return false;
#endif
}

bool quant::avx512Bf16Usable() {
#ifdef LMOPT_QUANT_AVX512
  static const bool has = [] {
    unsigned eax, ebx, ecx, edx;
    return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) &&
           (eax & (1u << 5)) != 0;
  }();
  return has;
#else
  return false;
#endif
}

#ifdef LMOPT_QUANT_AVX512
LMOPT_AVX512 static size_t widenF16Avx512(const uint16_t *bits, size_t count,
                                          float *out) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16)
    _mm512_storeu_ps(out + i,
                     _mm512_cvtph_ps(_mm256_loadu_si256(
                         reinterpret_cast<const __m256i *>(bits + i))));
  return i;
}
#endif

void quant::widenF16(const uint16_t *bits, size_t count, float *out) {
  size_t i = 0;
#ifdef LMOPT_QUANT_AVX512
  if (__builtin_cpu_supports("avx512f"))
    i = widenF16Avx512(bits, count, out);
#endif
  for (; i < count; ++i)
    out[i] = halfToFloat(bits[i]);
}

static int teamSize(int threads) {
  return threads > 0 ? threads : omp_get_max_threads();
}

/// sqrt(1/2) and sqrt(2/pi), for the two GELUs.
static constexpr float kRsqrt2 = 0.70710678118654752f;
static constexpr float kSqrt2OverPi = 0.79788456080286536f;

static float activate(float v, LinearActivation act) {
  switch (act) {
  case LinearActivation::None:
    return v;
  case LinearActivation::Relu:
    return v > 0 ? v : 0.0f;
  case LinearActivation::Gelu:
    return 0.5f * v * (1.0f + std::erf(v * kRsqrt2));
  case LinearActivation::GeluTanh:
    return 0.5f * v *
           (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
  }
  return v;
}

//===----------------------------------------------------------------------===//
// AVX-512 forms
//===----------------------------------------------------------------------===//

#ifdef LMOPT_QUANT_AVX512
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports the undefined pass-through operand inside its own AVX-512
// intrinsics as maybe uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

LMOPT_AVX512 static inline __mmask16 laneMask(int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1);
}

/// The largest (or, with `Min`, the smallest) of the 16 lanes.
template <bool Min = false>
LMOPT_AVX512 static inline float horizontalMax(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float m = lanes[0];
  for (int i = 1; i < 16; ++i)
    m = Min ? std::min(m, lanes[i]) : std::max(m, lanes[i]);
  return m;
}

/// e^x: x = n ln2 + r with |r| <= ln2/2, e^r by its degree-6 Taylor
/// polynomial (relative error below 1e-6 in f32), scaled by 2^n.
LMOPT_AVX512 static inline __m512 vexp(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)),
                    _mm512_set1_ps(88.0f));
  __m512 n = _mm512_roundscale_ps(
      _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145752f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860677e-6f), r);
  static const float kTaylor[] = {1.0f / 720, 1.0f / 120, 1.0f / 24,
                                  1.0f / 6,   0.5f,       1.0f,
                                  1.0f};
  __m512 p = _mm512_set1_ps(kTaylor[0]);
  for (int i = 1; i < 7; ++i)
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kTaylor[i]));
  return _mm512_scalef_ps(p, n);
}

/// 1 / d for d >= 1: the 14-bit estimate and one Newton step (relative
/// error ~1e-7), several times cheaper than a division.
LMOPT_AVX512 static inline __m512 vrcp(__m512 d) {
  __m512 r = _mm512_rcp14_ps(d);
  return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
}

namespace {
/// Phi(x), the standard normal CDF, on [-6, 6) in 32 pieces of width 3/8:
/// in piece i, Phi(-6 + (i + 1/2 + s) * 3/8) = sum over d of c[d][i] * s^d
/// for s in [-1/2, 1/2], the degree-4 polynomial through Phi at the 5
/// Chebyshev nodes of the piece (solved in double at load time).
struct PhiTable {
  static constexpr int kDegree = 4, kPieces = 32;
  static constexpr double kLow = -6.0, kWidth = 12.0 / kPieces;
  alignas(64) float c[kDegree + 1][kPieces];
  PhiTable() {
    constexpr int n = kDegree + 1;
    for (int i = 0; i < kPieces; ++i) {
      // Gauss-Jordan on the Vandermonde system of the nodes.
      double a[n][n + 1];
      for (int j = 0; j < n; ++j) {
        const double s = -0.5 * std::cos(M_PI * (j + 0.5) / n);
        const double x = kLow + (i + 0.5 + s) * kWidth;
        for (int d = 0; d < n; ++d)
          a[j][d] = std::pow(s, d);
        a[j][n] = 0.5 * std::erfc(-x / std::sqrt(2.0));
      }
      for (int col = 0; col < n; ++col) {
        int pivot = col;
        for (int r = col + 1; r < n; ++r)
          if (std::fabs(a[r][col]) > std::fabs(a[pivot][col]))
            pivot = r;
        for (int d = 0; d <= n; ++d)
          std::swap(a[col][d], a[pivot][d]);
        for (int r = 0; r < n; ++r) {
          if (r == col)
            continue;
          const double f = a[r][col] / a[col][col];
          for (int d = col; d <= n; ++d)
            a[r][d] -= f * a[col][d];
        }
      }
      for (int d = 0; d < n; ++d)
        c[d][i] = float(a[d][n] / a[d][d]);
    }
  }
};
const PhiTable kPhi;
} // namespace

/// Coefficient `d` of each lane's piece.
LMOPT_AVX512 static inline __m512 phiCoefficient(int d, __m512i index) {
  return _mm512_permutex2var_ps(_mm512_load_ps(kPhi.c[d]), index,
                                _mm512_load_ps(kPhi.c[d] + 16));
}

/// GELU (erf form) as x Phi(x) with Phi from kPhi: each lane's piece index
/// picks its 5 coefficients from the 32-entry tables (vpermt2ps, two
/// registers per table, which read the index's low 5 bits). The piece is
/// the nearest integer to the piece coordinate less 1/2, found by adding
/// and subtracting 1.5 * 2^23 (the sum's low mantissa bits are the index),
/// and s the coordinate's offset from the piece's middle. Within 6.6e-7 of
/// 0.5 x erfc(-x / sqrt 2) in double on a grid of 0.2 M points in [-10, 10]
/// (a few f32 ulps where |x| is near 4-6, closer below). Past the table,
/// Phi is 1 (x >= 6) or 0 (x < -6, where |GELU| < 6e-9); NaN stays NaN, and
/// the infinities give what the formula gives in f32 (+inf and NaN).
LMOPT_AVX512 static inline __m512 vgelu(__m512 x) {
  constexpr float inverseWidth = float(1.0 / PhiTable::kWidth);
  constexpr float offset = float(-PhiTable::kLow / PhiTable::kWidth - 0.5);
  constexpr float shift = 12582912.0f; // 1.5 * 2^23
  // The piece coordinate less 1/2, clamped to the table.
  __m512 u =
      _mm512_fmadd_ps(x, _mm512_set1_ps(inverseWidth), _mm512_set1_ps(offset));
  u = _mm512_min_ps(_mm512_set1_ps(PhiTable::kPieces - 0.5001f),
                    _mm512_max_ps(_mm512_set1_ps(-0.5f), u));
  const __m512 shifted = _mm512_add_ps(u, _mm512_set1_ps(shift));
  const __m512i index = _mm512_castps_si512(shifted);
  const __m512 s =
      _mm512_sub_ps(u, _mm512_sub_ps(shifted, _mm512_set1_ps(shift)));
  // Phi is 0 below -6, so that -inf gives NaN as the formula does (NaN
  // compares unordered and keeps its polynomial).
  const __mmask16 inside =
      _mm512_cmp_ps_mask(x, _mm512_set1_ps(float(PhiTable::kLow)), _CMP_NLT_UQ);
  __m512 p = phiCoefficient(PhiTable::kDegree, index);
  for (int d = PhiTable::kDegree - 1; d > 0; --d)
    p = _mm512_fmadd_ps(p, s, phiCoefficient(d, index));
  p = _mm512_maskz_fmadd_ps(inside, p, s, phiCoefficient(0, index));
  return _mm512_mul_ps(x, p);
}

LMOPT_AVX512 static inline __m512 vactivate(__m512 v, LinearActivation act) {
  switch (act) {
  case LinearActivation::None:
    return v;
  case LinearActivation::Relu:
    return _mm512_max_ps(v, _mm512_setzero_ps());
  case LinearActivation::Gelu:
    return vgelu(v);
  case LinearActivation::GeluTanh: {
    // 0.5 v (1 + tanh(u)) = v / (1 + e^(-2u)).
    __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
    __m512 u = _mm512_mul_ps(_mm512_fmadd_ps(v3, _mm512_set1_ps(0.044715f), v),
                             _mm512_set1_ps(-2.0f * kSqrt2OverPi));
    return _mm512_mul_ps(v, vrcp(_mm512_add_ps(_mm512_set1_ps(1.0f), vexp(u))));
  }
  }
  return v;
}

/// x / s rounded to nearest, as a division would give it, without the
/// division: q = x * (1/s) is within an ulp of the quotient, the FMA
/// computes its remainder exactly, and one more FMA rounds q + rem / s
/// correctly (Markstein's theorem, given the reciprocal rounded to
/// nearest). `exact` says whether the reciprocal is finite and normal;
/// when it is not, the division runs.
LMOPT_AVX512 static inline __m512 vquotient(__m512 x, __m512 s, __m512 r,
                                            bool exact) {
  if (!exact)
    return _mm512_div_ps(x, s);
  __m512 q = _mm512_mul_ps(x, r);
  return _mm512_fmadd_ps(_mm512_fnmadd_ps(q, s, x), r, q);
}

/// Whether 1/s is a normal float, so that vquotient may skip the division.
static bool reciprocalIsNormal(float s) {
  float r = 1.0f / s;
  return std::isnormal(s) && std::isnormal(r);
}

/// round(x / s) for 16 lanes (the quotient as vquotient gives it, with
/// Exact its reciprocal form), as i32.
template <bool Exact>
LMOPT_AVX512 static inline __m512i quotientLanes(__m512 x, __m512 vs,
                                                 __m512 vr) {
  return _mm512_cvt_roundps_epi32(vquotient(x, vs, vr, Exact),
                                  _MM_FROUND_TO_NEAREST_INT |
                                      _MM_FROUND_NO_EXC);
}

/// One row of k values over the scale s, rounded half to even and
/// saturated to i8, into q. 64 values at a time are packed with two rounds
/// of saturating packs (i32 to i16 to i8, the saturation of vpmovsdb) and
/// one permute of their dwords back into order: 4 shuffles where 4
/// vpmovsdb stores took 8 and 4 stores; the tail goes 16 at a time.
/// quantizeRowsS8 on a 256 x 768 block in L2, one thread: 8.3 cycles per
/// 16 values before, 7.4 with the packs, 5.9 with the four maxima too;
/// BERT-base int8-dynamic batch 8, 6 rounds of `lmopt-run --bench 10`
/// alternating: 85.4 -> 82.3 ms.
template <bool Exact>
LMOPT_AVX512 static void quantizeRowAvx512(const float *row, int64_t k, float s,
                                           int8_t *q) {
  const __m512 vs = _mm512_set1_ps(s), vr = _mm512_set1_ps(1.0f / s);
  // After the packs, 128-bit lane L holds dwords a[L], b[L], c[L], d[L]
  // (4 bytes each of the four vectors); dword i of the result is vector
  // i / 4's lane i % 4.
  const __m512i order =
      _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  int64_t j = 0;
  for (; j + 64 <= k; j += 64) {
    const __m512i a = quotientLanes<Exact>(_mm512_loadu_ps(row + j), vs, vr);
    const __m512i b =
        quotientLanes<Exact>(_mm512_loadu_ps(row + j + 16), vs, vr);
    const __m512i c =
        quotientLanes<Exact>(_mm512_loadu_ps(row + j + 32), vs, vr);
    const __m512i d =
        quotientLanes<Exact>(_mm512_loadu_ps(row + j + 48), vs, vr);
    const __m512i bytes =
        _mm512_packs_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, d));
    _mm512_storeu_si512(q + j, _mm512_permutexvar_epi32(order, bytes));
  }
  for (; j < k; j += 16) {
    const __mmask16 lanes = laneMask(k - j);
    _mm512_mask_cvtsepi32_storeu_epi8(
        q + j, lanes,
        quotientLanes<Exact>(_mm512_maskz_loadu_ps(lanes, row + j), vs, vr));
  }
}

LMOPT_AVX512 static void quantizeRowsAvx512(const float *x, int64_t begin,
                                            int64_t end, int64_t k, int8_t *q,
                                            float *scales) {
  for (int64_t r = begin; r < end; ++r) {
    const float *row = x + r * k;
    // Four running maxima, 64 values a step: one chain waited out vmaxps'
    // latency for every 16 values. (The maximum is the same in any order;
    // with a NaN in the row, which lane keeps it may differ.)
    __m512 amax[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(),
                      _mm512_setzero_ps(), _mm512_setzero_ps()};
    int64_t j = 0;
    for (; j + 64 <= k; j += 64)
      for (int u = 0; u < 4; ++u)
        amax[u] = _mm512_max_ps(
            amax[u], _mm512_abs_ps(_mm512_loadu_ps(row + j + 16 * u)));
    for (; j < k; j += 16) {
      __m512 v = _mm512_maskz_loadu_ps(laneMask(k - j), row + j);
      amax[0] = _mm512_max_ps(amax[0], _mm512_abs_ps(v));
    }
    float m = horizontalMax(_mm512_max_ps(_mm512_max_ps(amax[0], amax[1]),
                                          _mm512_max_ps(amax[2], amax[3])));
    float s = m > 0 ? m / 127.0f : 1.0f;
    scales[r] = s;
    if (reciprocalIsNormal(s))
      quantizeRowAvx512<true>(row, k, s, q + r * k);
    else
      quantizeRowAvx512<false>(row, k, s, q + r * k);
  }
}

LMOPT_AVX512 static void minMaxAvx512(const float *x, int64_t count,
                                      float &lo, float &hi) {
  __m512 vmin = _mm512_setzero_ps(), vmax = _mm512_setzero_ps();
  for (int64_t j = 0; j < count; j += 16) {
    __m512 v = _mm512_maskz_loadu_ps(laneMask(count - j), x + j);
    vmin = _mm512_min_ps(vmin, v);
    vmax = _mm512_max_ps(vmax, v);
  }
  lo = horizontalMax</*Min=*/true>(vmin);
  hi = horizontalMax(vmax);
}

/// A static QuantizeLinear, 16 lanes at a time: the value clamped to
/// +-65536 steps (beyond them it saturates anyway, and the quotient stays
/// finite and in i32 range; NaN becomes the low bound and is zeroed), the
/// quotient as vquotient gives it, rounded half to even by the conversion,
/// then the zero point and the saturation to u8 (or i8) in i32: the bytes
/// lmopt.quantize's kernels write, as i32 lanes whose low byte is the value.
struct ByteQuantizer {
  bool exact;
  __m512 scale, reciprocal, low, high;
  __m512i zeroPoint, min, max;

  LMOPT_AVX512 ByteQuantizer(float s, int32_t zp, bool isSigned)
      : exact(reciprocalIsNormal(s)), scale(_mm512_set1_ps(s)),
        reciprocal(_mm512_set1_ps(1.0f / s)),
        low(_mm512_set1_ps(-65536.0f * s)), high(_mm512_set1_ps(65536.0f * s)),
        zeroPoint(_mm512_set1_epi32(zp)),
        min(_mm512_set1_epi32(isSigned ? -128 : 0)),
        max(_mm512_set1_epi32(isSigned ? 127 : 255)) {}

  LMOPT_AVX512 __m512i operator()(__m512 v) const {
    const __m512 x = _mm512_min_ps(_mm512_max_ps(v, low), high);
    __m512i i =
        _mm512_cvt_roundps_epi32(vquotient(x, scale, reciprocal, exact),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    i = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(i, zeroPoint), min),
                         max);
    return _mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), i);
  }
};

LMOPT_AVX512 static void quantizeU8Avx512(const float *x, int64_t count,
                                          uint8_t *q, float scale,
                                          int32_t zeroPoint) {
  const ByteQuantizer quantize(scale, zeroPoint, /*isSigned=*/false);
  for (int64_t j = 0; j < count; j += 16) {
    __mmask16 lanes = laneMask(count - j);
    _mm512_mask_cvtepi32_storeu_epi8(
        q + j, lanes, quantize(_mm512_maskz_loadu_ps(lanes, x + j)));
  }
}

/// The bf16 bits nearest each lane (ties to even), a NaN quieted with the
/// top of its payload, in the low half of each 32-bit lane:
/// floatToBFloat16, 16 lanes at a time.
LMOPT_AVX512 static inline __m512i toBf16(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i odd =
      _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))),
      16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  rounded = _mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(bits, 16),
                                 _mm512_set1_epi32(0x40));
  return rounded;
}

/// Where an epilogue's values go: f32 `out`, `bf16Out` or `q8Out`. bf16
/// values are rounded by toBf16, or with Bf16Native by vcvtneps2bf16 (the
/// same bits, but that it takes and gives subnormals as zeros: a vector
/// with a subnormal lane goes through toBf16). On BERT-base's FFN up
/// projection (GELU, bf16 output) the native form took the epilogue from
/// 6.4 to 5.6 ns per 16 lanes on this machine (one thread, in L1).
enum class OutForm { F32, Bf16, Bf16Native, Q8 };

/// The epilogue of one vector: row r's columns [c, c + 16) (`lanes` of
/// them), `s` the row's scale and `b` the columns' bias.
template <LinearActivation Act, bool Shift, bool Residual, OutForm Out>
LMOPT_AVX512_EPILOGUE static inline void
epilogueVector(const float *accRow, int64_t r, int64_t c, __mmask16 lanes,
               __m512 s, __m512 b, const Epilogue &e, float *outRow,
               int64_t outStride, const ByteQuantizer &quantize) {
  __m512 v = _mm512_maskz_loadu_ps(lanes, accRow + c);
  if constexpr (Shift)
    v = _mm512_fnmadd_ps(_mm512_maskz_loadu_ps(lanes, e.columnShift + c),
                         _mm512_set1_ps(e.rowSums[r]), v);
  v = vactivate(_mm512_fmadd_ps(v, s, b), Act);
  if constexpr (Residual)
    v = _mm512_add_ps(
        v, _mm512_maskz_loadu_ps(lanes, e.residual + r * outStride + c));
  if constexpr (Out == OutForm::Q8) {
    _mm512_mask_cvtepi32_storeu_epi8(e.q8Out + r * outStride + c, lanes,
                                     quantize(v));
  } else if constexpr (Out == OutForm::Bf16Native) {
    // Subnormal lanes (exponent 0, mantissa not) are rare: their
    // vector takes toBf16.
    if (_mm512_fpclass_ps_mask(v, 0x20) == 0)
      _mm256_mask_storeu_epi16(e.bf16Out + r * outStride + c, lanes,
                               __m256i(_mm512_cvtneps_pbh(v)));
    else
      _mm512_mask_cvtepi32_storeu_epi16(e.bf16Out + r * outStride + c, lanes,
                                        toBf16(v));
  } else if constexpr (Out == OutForm::Bf16) {
    _mm512_mask_cvtepi32_storeu_epi16(e.bf16Out + r * outStride + c, lanes,
                                      toBf16(v));
  } else {
    _mm512_mask_storeu_ps(outRow + c, lanes, v);
  }
}

/// The epilogue with its options fixed at compile time, so that each row's
/// vectors carry no branches and the activation's arithmetic interleaves
/// across them. A whole AMX block (32 columns) takes its bias once and no
/// lane masks.
template <LinearActivation Act, bool Shift, bool Bias, bool Residual,
          OutForm Out>
LMOPT_AVX512_EPILOGUE static void
epilogueRowsAvx512(const float *acc, int64_t accStride, int64_t begin,
                   int64_t end, int64_t n, const Epilogue &e, float *out,
                   int64_t outStride) {
  const ByteQuantizer quantize(Out == OutForm::Q8 ? e.q8Scale : 1.0f,
                               e.q8ZeroPoint, e.q8Signed);
  auto rowScale = [&e](int64_t r) {
    return e.rowScales ? e.rowScales[r] : e.uniformScale;
  };
  constexpr auto vector = epilogueVector<Act, Shift, Residual, Out>;
  if (n == 32) {
    const __mmask16 all = 0xFFFF;
    const __m512 b0 = Bias ? _mm512_loadu_ps(e.bias) : _mm512_setzero_ps();
    const __m512 b1 = Bias ? _mm512_loadu_ps(e.bias + 16) : _mm512_setzero_ps();
    for (int64_t r = begin; r < end; ++r) {
      const __m512 s = _mm512_set1_ps(rowScale(r));
      const float *accRow = acc + r * accStride;
      float *outRow = Out == OutForm::F32 ? out + r * outStride : nullptr;
      vector(accRow, r, 0, all, s, b0, e, outRow, outStride, quantize);
      vector(accRow, r, 16, all, s, b1, e, outRow, outStride, quantize);
    }
    return;
  }
  for (int64_t r = begin; r < end; ++r) {
    const __m512 s = _mm512_set1_ps(rowScale(r));
    const float *accRow = acc + r * accStride;
    float *outRow = Out == OutForm::F32 ? out + r * outStride : nullptr;
    for (int64_t c = 0; c < n; c += 16) {
      const __mmask16 lanes = laneMask(n - c);
      const __m512 b =
          Bias ? _mm512_maskz_loadu_ps(lanes, e.bias + c) : _mm512_setzero_ps();
      vector(accRow, r, c, lanes, s, b, e, outRow, outStride, quantize);
    }
  }
}

using EpilogueRowsFn = void (*)(const float *, int64_t, int64_t, int64_t,
                                int64_t, const Epilogue &, float *, int64_t);

template <LinearActivation Act>
static EpilogueRowsFn pickEpilogueRows(const Epilogue &e) {
  // A bf16 or quantized output has no residual (the step refuses the
  // pair).
  if (e.bf16Out || e.q8Out) {
    const int flags = (e.columnShift ? 2 : 0) | (e.bias ? 1 : 0);
    constexpr OutForm B = OutForm::Bf16, N = OutForm::Bf16Native,
                      Q = OutForm::Q8;
    static constexpr EpilogueRowsFn kNarrowTable[3][4] = {
        {epilogueRowsAvx512<Act, false, false, false, B>,
         epilogueRowsAvx512<Act, false, true, false, B>,
         epilogueRowsAvx512<Act, true, false, false, B>,
         epilogueRowsAvx512<Act, true, true, false, B>},
        {epilogueRowsAvx512<Act, false, false, false, N>,
         epilogueRowsAvx512<Act, false, true, false, N>,
         epilogueRowsAvx512<Act, true, false, false, N>,
         epilogueRowsAvx512<Act, true, true, false, N>},
        {epilogueRowsAvx512<Act, false, false, false, Q>,
         epilogueRowsAvx512<Act, false, true, false, Q>,
         epilogueRowsAvx512<Act, true, false, false, Q>,
         epilogueRowsAvx512<Act, true, true, false, Q>}};
    return kNarrowTable[e.q8Out ? 2 : avx512Bf16Usable() ? 1 : 0][flags];
  }
  const int flags =
      (e.columnShift ? 4 : 0) | (e.bias ? 2 : 0) | (e.residual ? 1 : 0);
  constexpr OutForm F = OutForm::F32;
  static constexpr EpilogueRowsFn kTable[8] = {
      epilogueRowsAvx512<Act, false, false, false, F>,
      epilogueRowsAvx512<Act, false, false, true, F>,
      epilogueRowsAvx512<Act, false, true, false, F>,
      epilogueRowsAvx512<Act, false, true, true, F>,
      epilogueRowsAvx512<Act, true, false, false, F>,
      epilogueRowsAvx512<Act, true, false, true, F>,
      epilogueRowsAvx512<Act, true, true, false, F>,
      epilogueRowsAvx512<Act, true, true, true, F>};
  return kTable[flags];
}

static void epilogueRowsAvx512(const float *acc, int64_t accStride,
                               int64_t begin, int64_t end, int64_t n,
                               const Epilogue &e, float *out,
                               int64_t outStride) {
  EpilogueRowsFn fn = nullptr;
  switch (e.activation) {
  case LinearActivation::None:
    fn = pickEpilogueRows<LinearActivation::None>(e);
    break;
  case LinearActivation::Relu:
    fn = pickEpilogueRows<LinearActivation::Relu>(e);
    break;
  case LinearActivation::Gelu:
    fn = pickEpilogueRows<LinearActivation::Gelu>(e);
    break;
  case LinearActivation::GeluTanh:
    fn = pickEpilogueRows<LinearActivation::GeluTanh>(e);
    break;
  }
  fn(acc, accStride, begin, end, n, e, out, outStride);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif // LMOPT_QUANT_AVX512

//===----------------------------------------------------------------------===//
// Portable forms and dispatch
//===----------------------------------------------------------------------===//

/// Splits [0, count) into one contiguous range per thread and calls
/// fn(begin, end) for each: the whole team when the pass touches enough
/// values (`elements`) to pay for waking it, else one thread.
template <typename Fn>
static void forRanges(int64_t count, int64_t elements, int threads, Fn fn) {
  int team = elements >= (1 << 15) ? teamSize(threads) : 1;
  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(team)
  {
    ompSync.enter();
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    fn(count * t / n, count * (t + 1) / n);
    ompSync.leave();
  }
  ompSync.join();
}

// Portable forms of the per-range loops, the AVX-512 ones' twins.

static void quantizeRowsPortable(const float *x, int64_t begin, int64_t end,
                                 int64_t k, int8_t *q, float *scales) {
  for (int64_t r = begin; r < end; ++r) {
    const float *row = x + r * k;
    float m = 0;
    for (int64_t j = 0; j < k; ++j)
      m = std::max(m, std::fabs(row[j]));
    float s = m > 0 ? m / 127.0f : 1.0f;
    scales[r] = s;
    for (int64_t j = 0; j < k; ++j) {
      float v = std::nearbyint(row[j] / s);
      q[r * k + j] = int8_t(std::min(127.0f, std::max(-128.0f, v)));
    }
  }
}

/// The byte a static QuantizeLinear (lmopt.quantize's kernel) writes for
/// `v`: ByteQuantizer's, one value.
static uint8_t quantizeByte(float v, float scale, int32_t zeroPoint,
                            bool isSigned) {
  if (v != v)
    return 0;
  float q = std::nearbyint(v / scale) + float(zeroPoint);
  q = std::min(isSigned ? 127.0f : 255.0f,
               std::max(isSigned ? -128.0f : 0.0f, q));
  return uint8_t(int32_t(q));
}

static void epilogueRowsPortable(const float *acc, int64_t accStride,
                                 int64_t begin, int64_t end, int64_t n,
                                 const quant::Epilogue &e, float *out,
                                 int64_t outStride) {
  for (int64_t r = begin; r < end; ++r) {
    float s = e.rowScales ? e.rowScales[r] : e.uniformScale;
    for (int64_t c = 0; c < n; ++c) {
      float a = acc[r * accStride + c];
      if (e.columnShift)
        a -= e.columnShift[c] * e.rowSums[r];
      float v = a * s + (e.bias ? e.bias[c] : 0.0f);
      v = activate(v, e.activation);
      if (e.residual)
        v += e.residual[r * outStride + c];
      if (e.q8Out)
        e.q8Out[r * outStride + c] =
            quantizeByte(v, e.q8Scale, e.q8ZeroPoint, e.q8Signed);
      else if (e.bf16Out)
        e.bf16Out[r * outStride + c] = floatToBFloat16(v);
      else
        out[r * outStride + c] = v;
    }
  }
}

static void quantizeRows(const float *x, int64_t begin, int64_t end,
                         int64_t k, int8_t *q, float *scales, bool avx512) {
#ifdef LMOPT_QUANT_AVX512
  if (avx512)
    return quantizeRowsAvx512(x, begin, end, k, q, scales);
#endif
  (void)avx512;
  quantizeRowsPortable(x, begin, end, k, q, scales);
}

static void epilogueRows(const float *acc, int64_t accStride, int64_t begin,
                         int64_t end, int64_t n, const quant::Epilogue &e,
                         float *out, bool avx512, int64_t outStride = -1) {
  if (outStride < 0)
    outStride = n;
#ifdef LMOPT_QUANT_AVX512
  if (avx512)
    return epilogueRowsAvx512(acc, accStride, begin, end, n, e, out, outStride);
#endif
  (void)avx512;
  epilogueRowsPortable(acc, accStride, begin, end, n, e, out, outStride);
}

void quant::quantizeRowsS8(const float *x, int64_t rows, int64_t k, int8_t *q,
                           float *scales, int threads, bool avx512) {
  forRanges(rows, rows * k, threads, [&](int64_t begin, int64_t end) {
    quantizeRows(x, begin, end, k, q, scales, avx512);
  });
}

void quant::quantizeTensorU8(const float *x, int64_t count, uint8_t *q,
                             float &scale, int32_t &zeroPoint, int threads,
                             bool avx512) {
  // The range (with 0 in it), each thread's share first.
  float lo = 0, hi = 0;
  forRanges(count, count, threads, [&](int64_t begin, int64_t end) {
    float shareLo = 0, shareHi = 0;
#ifdef LMOPT_QUANT_AVX512
    if (avx512)
      minMaxAvx512(x + begin, end - begin, shareLo, shareHi);
    else
#endif
      for (int64_t j = begin; j < end; ++j) {
        shareLo = std::min(shareLo, x[j]);
        shareHi = std::max(shareHi, x[j]);
      }
#pragma omp critical(lmopt_quant_range)
    {
      lo = std::min(lo, shareLo);
      hi = std::max(hi, shareHi);
    }
  });
  // ONNX DynamicQuantizeLinear, in f32 as the operator defines it.
  scale = (hi - lo) / 255.0f;
  if (!(scale > 0)) {
    scale = 0;
    zeroPoint = 0;
    std::memset(q, 0, size_t(count));
    return;
  }
  float initial = std::min(255.0f, std::max(0.0f, 0.0f - lo / scale));
  zeroPoint = int32_t(std::nearbyint(initial));
  const float s = scale;
  const int32_t zp = zeroPoint;
  forRanges(count, count, threads, [&](int64_t begin, int64_t end) {
#ifdef LMOPT_QUANT_AVX512
    if (avx512)
      return quantizeU8Avx512(x + begin, end - begin, q + begin, s, zp);
#endif
    for (int64_t j = begin; j < end; ++j)
      q[j] = quantizeByte(x[j], s, zp, /*isSigned=*/false);
  });
  (void)avx512;
}

std::string quant::staticQuantProblem(const std::string &role, float scale,
                                      int32_t zeroPoint, bool isSigned) {
  if (!std::isfinite(scale) || !(scale > 0))
    return role + " scale " + std::to_string(scale) +
           " is not a positive finite number";
  if (zeroPoint < (isSigned ? -128 : 0) || zeroPoint > (isSigned ? 127 : 255))
    return role + " zero point " + std::to_string(zeroPoint) +
           " is outside the " + (isSigned ? "i8" : "u8") + " range";
  return "";
}

void quant::applyEpilogue(const float *acc, int64_t accStride, int64_t rows,
                          int64_t n, const Epilogue &e, float *out,
                          int threads, bool avx512) {
  forRanges(rows, rows * n, threads, [&](int64_t begin, int64_t end) {
    epilogueRows(acc, accStride, begin, end, n, e, out, avx512);
  });
}

void quant::applyEpilogueBlock(const float *acc, int64_t accStride,
                               int64_t rows, int64_t n, const Epilogue &e,
                               float *out, int64_t outStride, bool avx512) {
  epilogueRows(acc, accStride, 0, rows, n, e, out, avx512, outStride);
}

void quant::applyEpilogueQuantized(float *acc, int64_t rows, int64_t n,
                                   const Epilogue &e, int8_t *q,
                                   float *scales, int threads, bool avx512) {
  // Row by row, so that each finished row is still in L1 when it is
  // quantized.
  forRanges(rows, rows * n, threads, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      epilogueRows(acc, n, r, r + 1, n, e, acc, avx512);
      quantizeRows(acc, r, r + 1, n, q, scales, avx512);
    }
  });
}

void quant::sumRows(const void *q, bool isSigned, int64_t rows, int64_t k,
                    int32_t zeroPoint, float *rowSums) {
  for (int64_t r = 0; r < rows; ++r) {
    int32_t sum = 0;
    if (isSigned) {
      const int8_t *row = static_cast<const int8_t *>(q) + r * k;
      for (int64_t j = 0; j < k; ++j)
        sum += row[j];
    } else {
      const uint8_t *row = static_cast<const uint8_t *>(q) + r * k;
      for (int64_t j = 0; j < k; ++j)
        sum += row[j];
    }
    rowSums[r] = float(int64_t(sum) - int64_t(zeroPoint) * k);
  }
}
