//===- AttentionSoftmax.cpp - Attention's softmax rows on the CPU ---------===//
//
// Split from AttentionStep.cpp so that the attention backward recomputes
// the forward's probabilities with the same code.
//
//===----------------------------------------------------------------------===//

#include "AttentionSoftmax.h"
#include "AttentionStepDesc.h"
#include "lmopt/Format/Float16.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

using namespace lmopt::runtime;

//===----------------------------------------------------------------------===//
// Softmax rows
//===----------------------------------------------------------------------===//
//
// A block of rows of scaled scores becomes probabilities in place: each
// row's mask row is added or applied (`Broadcast`: one mask element for
// every key), keys from the causal limit on are hidden, then a max-subtracted
// softmax. The passes (mask and maximum, exp and sum, normalization) are
// per ISA; the bookkeeping around them (each row's causal limit and mask
// row, its verdict) is shared.
//
// The passes exist twice with the same arithmetic: AVX-512 intrinsics
// (masked loads handle a row's tail), and portable loops for other CPUs.
// Both compute exp(x) for x <= 0 with Cephes' expf polynomial on
// x - n ln 2, scaled by 2^n, within 2 ulp, and flush values below e^-80 to
// zero (they are added to a row sum of at least 1): every intermediate
// stays a normal number, as a denormal costs a microcode assist per element
// on x86.

namespace {
/// Cephes' expf constants: ln 2 split in two, and the polynomial.
constexpr float kExpLowest = -80.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f,
                               8.3334519073e-3f, 4.1665795894e-2f,
                               1.6666665459e-1f, 5.0000001201e-1f};

/// What the first pass learns about a row.
struct RowStats {
  float max;
  /// Keys neither hidden nor masked by -inf.
  int64_t shown;
};

/// The portable passes.
struct PortablePasses {
  template <AttentionMask Kind, bool Broadcast>
  static RowStats mask(float *s, int64_t sk, int64_t end, const void *mask,
                       const float *bias);
  static float exp(float *s, int64_t sk, float max);
  static float expBf16(const float *s, int64_t sk, float max, uint16_t *out);
  static void scale(float *s, int64_t sk, float factor);
};
} // namespace

static inline float expNonPositive(float x) {
  float clamped = x > kExpLowest ? x : kExpLowest;
  // Round to nearest by adding and removing 1.5 * 2^23 (|v| < 2^22 here).
  const float magic = 12582912.0f;
  float n = (clamped * kLog2e + magic) - magic;
  float r = clamped - n * kLn2Hi - n * kLn2Lo;
  float p = kExpPoly[0];
  for (int i = 1; i < 6; ++i)
    p = p * r + kExpPoly[i];
  p = p * r * r + r + 1.0f;
  // 2^n from its exponent bits; n >= -116, a normal number.
  int32_t bits = (int32_t(n) + 127) << 23;
  float twoToN;
  std::memcpy(&twoToN, &bits, sizeof(twoToN));
  float scaled = p * twoToN;
  float y = x > kExpLowest ? scaled : 0.0f;
  return x != x ? x : y;
}

template <AttentionMask Kind, bool Broadcast>
RowStats PortablePasses::mask(float *s, int64_t sk, int64_t end,
                              const void *mask, const float *bias) {
  const float hidden = -FLT_MAX;
  const float minusInf = -std::numeric_limits<float>::infinity();
  const auto *additive = static_cast<const float *>(mask);
  const auto *keepBytes = static_cast<const uint8_t *>(mask);
  float max = minusInf;
  int64_t shownKeys = 0;
#pragma omp simd reduction(max : max) reduction(+ : shownKeys)
  for (int64_t j = 0; j < sk; ++j) {
    bool keep = j < end, shown = keep;
    float v = s[j];
    if (bias) {
      v += bias[j];
      shown = shown && bias[j] != minusInf;
    }
    if constexpr (Kind == AttentionMask::Additive) {
      float m = additive[Broadcast ? 0 : j];
      v += m;
      shown = shown && m != minusInf;
    } else if constexpr (Kind == AttentionMask::Bool) {
      keep = keep && keepBytes[Broadcast ? 0 : j] != 0;
      shown = shown && keep;
    }
    v = keep ? v : hidden;
    s[j] = v;
    max = std::max(max, v);
    shownKeys += shown;
  }
  return {max, shownKeys};
}

float PortablePasses::exp(float *s, int64_t sk, float max) {
  // Separate loops: the exp loop vectorizes, a float sum only does with
  // reassociation, which the OpenMP simd reduction allows.
#pragma omp simd
  for (int64_t j = 0; j < sk; ++j)
    s[j] = expNonPositive(s[j] - max);
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < sk; ++j)
    sum += s[j];
  return sum;
}

float PortablePasses::expBf16(const float *s, int64_t sk, float max,
                              uint16_t *out) {
  float sum = 0;
  for (int64_t j = 0; j < sk; ++j) {
    const float p = expNonPositive(s[j] - max);
    sum += p;
    out[j] = floatToBFloat16(p);
  }
  return sum;
}

void PortablePasses::scale(float *s, int64_t sk, float factor) {
#pragma omp simd
  for (int64_t j = 0; j < sk; ++j)
    s[j] *= factor;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LMOPT_ATTENTION_AVX512 1
#define LMOPT_AVX512                                                           \
  __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
// With AVX512-BF16's conversion: only where the CPU has it (the bf16
// products, which need it, are the only callers).
#define LMOPT_AVX512_BF16                                                      \
  __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx512bf16")))
// GCC 12 flags the deliberately undefined pass-through operand inside its
// own AVX-512 intrinsics (_mm512_undefined_ps) as maybe uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {
/// The AVX-512 passes.
struct Avx512Passes {
  template <AttentionMask Kind, bool Broadcast>
  LMOPT_AVX512 static RowStats mask(float *s, int64_t sk, int64_t end,
                                    const void *mask, const float *bias);
  static float exp(float *s, int64_t sk, float max);
  static float expBf16(const float *s, int64_t sk, float max, uint16_t *out);
  LMOPT_AVX512 static void scale(float *s, int64_t sk, float factor);
};
} // namespace

LMOPT_AVX512 static inline __m512 expNonPositive16(__m512 x) {
  const __m512 lowest = _mm512_set1_ps(kExpLowest);
  __mmask16 inRange = _mm512_cmp_ps_mask(x, lowest, _CMP_GT_OQ);
  __m512 clamped = _mm512_mask_blend_ps(inRange, lowest, x);
  __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(kLog2e)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), clamped);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i)
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpPoly[i]));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r),
                      _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  __m512 y = _mm512_maskz_mov_ps(inRange, _mm512_scalef_ps(p, n));
  __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(nan, y, x);
}

// Horizontal reductions through AVX-512DQ's extract, whose pass-through
// operand is zero: _mm512_reduce_*_ps and even _mm512_castps512_ps256 use an
// undefined one, which GCC 12 reports as used uninitialized wherever they
// are inlined.
LMOPT_AVX512 static inline float reduceMax(__m512 v) {
  __m256 a =
      _mm256_max_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  __m128 b = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  b = _mm_max_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_max_ss(b, _mm_movehdup_ps(b)));
}

LMOPT_AVX512 static inline float reduceAdd(__m512 v) {
  __m256 a =
      _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}

/// The first `count` lanes (0 <= count <= 16).
LMOPT_AVX512 static inline __mmask16 firstLanes(int64_t count) {
  return __mmask16((uint32_t(1) << count) - 1);
}

template <AttentionMask Kind, bool Broadcast>
LMOPT_AVX512 RowStats Avx512Passes::mask(float *s, int64_t sk, int64_t end,
                                         const void *mask, const float *bias) {
  const __m512 hidden = _mm512_set1_ps(-FLT_MAX);
  const __m512 minusInf =
      _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const auto *additive = static_cast<const float *>(mask);
  const auto *keepBytes = static_cast<const uint8_t *>(mask);
  __m512 maxes = minusInf;
  int64_t shownKeys = 0;
  for (int64_t j = 0; j < sk; j += 16) {
    __mmask16 valid = firstLanes(std::min<int64_t>(16, sk - j));
    __mmask16 keep = firstLanes(std::clamp<int64_t>(end - j, 0, 16));
    // Lanes past the row load -inf: they never win the maximum.
    __m512 v = _mm512_mask_loadu_ps(minusInf, valid, s + j);
    __mmask16 shown = keep;
    if (bias) {
      __m512 b = _mm512_maskz_loadu_ps(valid, bias + j);
      v = _mm512_add_ps(v, b);
      shown &= _mm512_cmp_ps_mask(b, minusInf, _CMP_NEQ_UQ);
    }
    if constexpr (Kind == AttentionMask::Additive) {
      __m512 m = Broadcast ? _mm512_set1_ps(additive[0])
                           : _mm512_maskz_loadu_ps(valid, additive + j);
      v = _mm512_add_ps(v, m);
      shown &= _mm512_cmp_ps_mask(m, minusInf, _CMP_NEQ_UQ);
    } else if constexpr (Kind == AttentionMask::Bool) {
      if constexpr (Broadcast) {
        keep = keepBytes[0] != 0 ? keep : __mmask16(0);
      } else {
        __m128i bytes = _mm_maskz_loadu_epi8(valid, keepBytes + j);
        keep &= _mm_test_epi8_mask(bytes, bytes);
      }
      shown &= keep;
    }
    v = _mm512_mask_blend_ps(keep & valid,
                             _mm512_mask_blend_ps(valid, minusInf, hidden), v);
    maxes = _mm512_max_ps(maxes, v);
    shownKeys += __builtin_popcount(unsigned(shown & valid));
    _mm512_mask_storeu_ps(s + j, valid, v);
  }
  return {reduceMax(maxes), shownKeys};
}

/// exp(s[j] - max) for j < sk and their sum, the values stored back into
/// `s`, or with ToBf16 into `out` as bf16 (vcvtneps2bf16: round to nearest
/// even; the values are 0 or normal, which it converts exactly as
/// floatToBFloat16 does). Compiled for AVX512-BF16, whose instruction only
/// the ToBf16 form uses (and runs only where the CPU has it).
template <bool ToBf16>
LMOPT_AVX512_BF16 static float expPass(const float *s, int64_t sk, float max,
                                       float *out, uint16_t *outBf16) {
  const __m512 maxVec = _mm512_set1_ps(max);
  const __m512 minusInf =
      _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 sums = _mm512_setzero_ps();
  for (int64_t j = 0; j < sk; j += 16) {
    __mmask16 valid = firstLanes(std::min<int64_t>(16, sk - j));
    __m512 x = _mm512_mask_loadu_ps(minusInf, valid, s + j);
    __m512 p = expNonPositive16(_mm512_sub_ps(x, maxVec));
    sums = _mm512_add_ps(sums, p);
    if constexpr (ToBf16)
      _mm256_mask_storeu_epi16(outBf16 + j, valid,
                               __m256i(_mm512_cvtneps_pbh(p)));
    else
      _mm512_mask_storeu_ps(out + j, valid, p);
  }
  return reduceAdd(sums);
}

float Avx512Passes::exp(float *s, int64_t sk, float max) {
  return expPass<false>(s, sk, max, s, nullptr);
}

float Avx512Passes::expBf16(const float *s, int64_t sk, float max,
                            uint16_t *out) {
  return expPass<true>(s, sk, max, nullptr, out);
}

LMOPT_AVX512 void Avx512Passes::scale(float *s, int64_t sk, float factor) {
  const __m512 f = _mm512_set1_ps(factor);
  for (int64_t j = 0; j < sk; j += 16) {
    __mmask16 valid = firstLanes(std::min<int64_t>(16, sk - j));
    _mm512_mask_storeu_ps(
        s + j, valid, _mm512_mul_ps(_mm512_maskz_loadu_ps(valid, s + j), f));
  }
}

/// True when the CPU has the kernel's instructions and oneDNN may use them
/// (DNNL_MAX_CPU_ISA caps both, which is how the portable kernel is tested).
static bool useAvx512() {
  unsigned isa = unsigned(dnnl_get_effective_cpu_isa());
  unsigned avx512 = unsigned(dnnl_cpu_isa_avx512_core);
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && (isa & avx512) == avx512;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

/// The three passes over a block of rows; `Passes` holds one ISA's.
template <class Passes, AttentionMask Kind, bool Broadcast>
static void softmaxBlock(const RowBlock &block) {
  const int64_t sk = block.keys;
  for (int64_t r = 0; r < block.rows; ++r) {
    float *s = block.scores + r * sk;
    int64_t end =
        std::clamp<int64_t>(block.firstEnd + r * block.endStep, 0, sk);
    const void *mask =
        block.mask ? block.mask + r * block.maskRowBytes : nullptr;
    const float *bias =
        block.bias ? block.bias + r * block.biasRowStride : nullptr;
    RowStats stats =
        Passes::template mask<Kind, Broadcast>(s, sk, end, mask, bias);
    RowResult &result = block.results[r];
    if (block.zeroMaskedRows && stats.shown == 0)
      result = RowResult::Zero;
    else if (!std::isfinite(stats.max))
      result = RowResult::NaN;
    else
      result = RowResult::Normal;
    block.stats[r] = stats.max;
    if (result != RowResult::Normal)
      std::fill(s, s + sk, 0.0f);
  }
  if (block.bf16Probs && !block.normalize) {
    for (int64_t r = 0; r < block.rows; ++r) {
      uint16_t *p = block.bf16Probs + r * sk;
      if (block.results[r] == RowResult::Normal)
        block.stats[r] = 1.0f / Passes::expBf16(block.scores + r * sk, sk,
                                                block.stats[r], p);
      else
        std::fill(p, p + sk, uint16_t(0));
    }
    return;
  }
  for (int64_t r = 0; r < block.rows; ++r)
    if (block.results[r] == RowResult::Normal)
      block.stats[r] =
          1.0f / Passes::exp(block.scores + r * sk, sk, block.stats[r]);
  if (!block.normalize)
    return;
  for (int64_t r = 0; r < block.rows; ++r)
    if (block.results[r] == RowResult::Normal)
      Passes::scale(block.scores + r * sk, sk, block.stats[r]);
}

/// The block kernel for the mask kind and layout.
template <class Passes>
static SoftmaxBlockFn pickKernel(AttentionMask kind, bool broadcast) {
  switch (kind) {
  case AttentionMask::None:
    return softmaxBlock<Passes, AttentionMask::None, false>;
  case AttentionMask::Additive:
    return broadcast ? softmaxBlock<Passes, AttentionMask::Additive, true>
                     : softmaxBlock<Passes, AttentionMask::Additive, false>;
  case AttentionMask::Bool:
    return broadcast ? softmaxBlock<Passes, AttentionMask::Bool, true>
                     : softmaxBlock<Passes, AttentionMask::Bool, false>;
  }
  return nullptr;
}

/// The kernel in the widest ISA the CPU has and oneDNN allows.
SoftmaxBlockFn lmopt::runtime::selectSoftmaxBlock(AttentionMask kind,
                                                  bool broadcast) {
#ifdef LMOPT_ATTENTION_AVX512
  if (useAvx512())
    return pickKernel<Avx512Passes>(kind, broadcast);
#endif
  return pickKernel<PortablePasses>(kind, broadcast);
}

size_t lmopt::runtime::attentionMaskBytes(const AttentionStepDesc &desc) {
  if (desc.mask == AttentionMask::None)
    return 0;
  size_t count = 1;
  for (int64_t dim : desc.maskDims)
    count *= size_t(dim);
  return count * (desc.mask == AttentionMask::Additive ? sizeof(float) : 1);
}

Status lmopt::runtime::sgemmFailure(const std::string &prefix,
                                    int dnnlStatus) {
  auto st = dnnl_status_t(dnnlStatus);
  StatusCode code = st == dnnl_unimplemented       ? StatusCode::Unsupported
                    : st == dnnl_invalid_arguments ? StatusCode::InvalidArgument
                                                   : StatusCode::InvalidFormat;
  return Status::error(code,
                       prefix + "oneDNN sgemm failed: " + dnnl_status2str(st));
}

Status lmopt::runtime::checkMaskPointer(const AttentionStepDesc &desc,
                                        const std::string &prefix,
                                        const void *mask) {
  bool hasMask = desc.mask != AttentionMask::None;
  if (hasMask == (mask != nullptr))
    return Status::ok();
  return Status::error(
      StatusCode::InvalidArgument,
      prefix + (hasMask ? "has a " + std::string(attentionMaskName(desc.mask)) +
                              " mask but none was passed"
                        : std::string("has no mask but one was passed")));
}
