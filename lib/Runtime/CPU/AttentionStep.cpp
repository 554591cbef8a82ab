//===- AttentionStep.cpp - lmopt.attention at run time --------------------===//
//
// Work items are (batch, head, block of query rows), spread over an OpenMP
// team. Per item: scores = scale * Q K^T with dnnl_sgemm into the thread's
// scratch block, one pass per row that adds the score bias, applies the
// mask and causal hiding
// and finds the maximum, one for exp and the sum, one that normalizes, then
// P V with a second dnnl_sgemm written straight into the packed output. Inside
// the team dnnl_sgemm runs single-threaded. Packed heads, and Q, K and V
// that are views into a wider buffer (a fused QKV projection), are read
// through the GEMMs' leading dimensions: nothing is copied or transposed.
//
// Rows follow the reference evaluator (lib/Reference/AttentionOps.cpp):
// hidden keys score -FLT_MAX, so a row with every key hidden averages the
// values uniformly, and a row whose maximum is not finite (every score -inf,
// or a +inf score) is NaN, as exp(-inf - -inf) makes it there.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/AttentionStep.h"

#include "AttentionStepDesc.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <tuple>

using namespace lmopt::runtime;

namespace {

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

} // namespace

namespace {
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
};
} // namespace

using SoftmaxBlockFn = void (*)(const RowBlock &);
static SoftmaxBlockFn selectSoftmaxBlock(AttentionMask kind, bool broadcast);

struct AttentionStep::Impl {
  /// Threads in the team, work items per (batch, head), rows per item.
  int teamSize = 1;
  int64_t blocksPerPair = 1;
  int64_t rowBlock = 1;
  /// Floats between two threads' score blocks (a cache-line multiple).
  int64_t blockStride = 0;
  /// Element strides of the mask over [B, H, Sq, Sk] (0 where it
  /// broadcasts).
  int64_t maskStrides[4] = {0, 0, 0, 0};
  /// Bytes the mask spans (its dims' product times the element size).
  size_t maskBytes = 0;
  /// Element strides of the score bias over [B, H, Sq] (0 where it
  /// broadcasts), and the bytes it spans.
  int64_t biasStrides[3] = {0, 0, 0};
  size_t biasBytes = 0;
  SoftmaxBlockFn softmax = nullptr;
  AlignedFloats scores;
  /// One RowResult and one float per row of each thread's block.
  std::vector<RowResult> rowResults;
  std::vector<float> rowStats;
};

AttentionStep::AttentionStep(const CpuContext &context) : context_(context) {}

AttentionStep::~AttentionStep() = default;

Status AttentionStep::create(const CpuContext &context,
                             const AttentionStepDesc &desc,
                             std::unique_ptr<AttentionStep> &out) {
  const std::string prefix = "attention step '" + desc.name + "': ";
  auto impl = std::make_unique<Impl>();
  if (Status st = validateAttentionDesc(desc, prefix, impl->maskStrides); !st)
    return st;
  size_t biasElements = 0;
  if (Status st =
          validateAttentionBias(desc, prefix, impl->biasStrides, biasElements);
      !st)
    return st;
  impl->biasBytes = biasElements * sizeof(float);

  const int64_t pairs = desc.batch * desc.numHeads;
  const int64_t sq = desc.queryLength, sk = desc.keyLength;
  int64_t team = context.threads() > 0 ? context.threads()
                                       : int64_t(omp_get_max_threads());
  team = std::max<int64_t>(1, std::min(team, pairs * sq));
  // Rows per item: enough that each thread has work, few enough that a
  // block of scores (at most 64 Ki floats unless one row is longer) stays in
  // the core's L2 between the two GEMMs.
  int64_t rowBlock =
      std::min(sq, std::max<int64_t>(1, (int64_t(1) << 16) / sk));
  if (pairs < team) {
    int64_t splits = (team + pairs - 1) / pairs;
    rowBlock = std::min(rowBlock, (sq + splits - 1) / splits);
  }
  impl->teamSize = int(team);
  impl->rowBlock = rowBlock;
  impl->blocksPerPair = (sq + rowBlock - 1) / rowBlock;
  impl->blockStride = (rowBlock * sk + 15) / 16 * 16;
  size_t floats = size_t(team) * size_t(impl->blockStride);
  if (!impl->scores.allocate(floats))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "cannot allocate " +
                             std::to_string(floats * sizeof(float)) +
                             " bytes of scratch for scores");
  impl->rowResults.assign(size_t(team * rowBlock), RowResult::Normal);
  impl->rowStats.assign(size_t(team * rowBlock), 0.0f);
  impl->softmax = selectSoftmaxBlock(desc.mask, impl->maskStrides[3] == 0);
  if (desc.mask != AttentionMask::None) {
    size_t count = 1;
    for (int64_t dim : desc.maskDims)
      count *= size_t(dim);
    impl->maskBytes =
        count * (desc.mask == AttentionMask::Additive ? sizeof(float) : 1);
  }

  std::unique_ptr<AttentionStep> step(new AttentionStep(context));
  step->desc_ = desc;
  step->impl_ = std::move(impl);
  out = std::move(step);
  return Status::ok();
}

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

void PortablePasses::scale(float *s, int64_t sk, float factor) {
#pragma omp simd
  for (int64_t j = 0; j < sk; ++j)
    s[j] *= factor;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LMOPT_ATTENTION_AVX512 1
#define LMOPT_AVX512                                                           \
  __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
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
  LMOPT_AVX512 static float exp(float *s, int64_t sk, float max);
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

LMOPT_AVX512 float Avx512Passes::exp(float *s, int64_t sk, float max) {
  const __m512 maxVec = _mm512_set1_ps(max);
  const __m512 minusInf =
      _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 sums = _mm512_setzero_ps();
  for (int64_t j = 0; j < sk; j += 16) {
    __mmask16 valid = firstLanes(std::min<int64_t>(16, sk - j));
    __m512 x = _mm512_mask_loadu_ps(minusInf, valid, s + j);
    __m512 p = expNonPositive16(_mm512_sub_ps(x, maxVec));
    sums = _mm512_add_ps(sums, p);
    _mm512_mask_storeu_ps(s + j, valid, p);
  }
  return reduceAdd(sums);
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
  for (int64_t r = 0; r < block.rows; ++r)
    if (block.results[r] == RowResult::Normal)
      block.stats[r] =
          1.0f / Passes::exp(block.scores + r * sk, sk, block.stats[r]);
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
static SoftmaxBlockFn selectSoftmaxBlock(AttentionMask kind, bool broadcast) {
#ifdef LMOPT_ATTENTION_AVX512
  if (useAvx512())
    return pickKernel<Avx512Passes>(kind, broadcast);
#endif
  return pickKernel<PortablePasses>(kind, broadcast);
}

//===----------------------------------------------------------------------===//
// Run
//===----------------------------------------------------------------------===//

/// True when [a, a + aBytes) and [b, b + bBytes) share a byte.
static bool overlaps(const void *a, size_t aBytes, const void *b,
                     size_t bBytes) {
  auto begin = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
  return begin(a) < begin(b) + bBytes && begin(b) < begin(a) + aBytes;
}

Status AttentionStep::run(const float *query, const float *key,
                          const float *value, const void *mask, float *output,
                          const float *bias) const {
  const std::string prefix = "attention step '" + desc_.name + "': ";
  if (!query || !key || !value || !output)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "null " +
                             (!query   ? "query"
                              : !key   ? "key"
                              : !value ? "value"
                                       : "output") +
                             " pointer");
  bool hasMask = desc_.mask != AttentionMask::None;
  if (hasMask != (mask != nullptr))
    return Status::error(
        StatusCode::InvalidArgument,
        prefix + (hasMask
                      ? "has a " + std::string(attentionMaskName(desc_.mask)) +
                            " mask but none was passed"
                      : std::string("has no mask but "
                                    "one was passed")));

  const int64_t b = desc_.batch, h = desc_.numHeads, sq = desc_.queryLength,
                sk = desc_.keyLength, d = desc_.headDim, width = h * d;
  // The operands' spans: a view's buffer from its start to its last row's
  // end (with kv_heads_split, key and value are dense rows of D), at their
  // capacity.
  const int64_t kCapacity = desc_.keyCapacity ? desc_.keyCapacity : sk;
  const int64_t vCapacity = desc_.valueCapacity ? desc_.valueCapacity : sk;
  // Grouped-query attention: query head hi reads key/value head hi / group.
  const int64_t g = desc_.numKvHeads ? desc_.numKvHeads : h, group = h / g;
  const int64_t kvSequences = desc_.kvHeadsSplit ? b * g : b;
  const int64_t kvWidth = desc_.kvHeadsSplit ? d : g * d;
  const size_t outBytes = size_t(b * sq * width) * sizeof(float);
  const struct {
    const char *role;
    const void *data;
    size_t bytes;
  } spans[] = {
      {"query", query,
       size_t(viewSpan(desc_.queryView, b * sq, width)) * sizeof(float)},
      {"key", key,
       size_t(viewSpan(desc_.keyView, kvSequences * kCapacity, kvWidth)) *
           sizeof(float)},
      {"value", value,
       size_t(viewSpan(desc_.valueView, kvSequences * vCapacity, kvWidth)) *
           sizeof(float)},
  };
  for (const auto &span : spans)
    if (overlaps(output, outBytes, span.data, span.bytes))
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "output overlaps " + span.role);

  Impl &impl = *impl_;
  if (mask && overlaps(output, outBytes, mask, impl.maskBytes))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "output overlaps mask");
  if (desc_.scoreBias != (bias != nullptr))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + (desc_.scoreBias
                                       ? "has a score bias but none was passed"
                                       : "has no score bias but one was "
                                         "passed"));
  if (bias && overlaps(output, outBytes, bias, impl.biasBytes))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "output overlaps the score bias");
  const int64_t *bs = impl.biasStrides;
  const int64_t *ms = impl.maskStrides;
  const SoftmaxBlockFn softmax = impl.softmax;
  const size_t maskElementSize =
      desc_.mask == AttentionMask::Additive ? sizeof(float) : 1;
  // Rows of Q, K and V are read through the GEMMs' leading dimensions, so a
  // view costs nothing over the dense layout.
  const int64_t qRowStride = rowStride(desc_.queryView, width);
  const float *qBase = query + desc_.queryView.offset;
  const int64_t kRowStride = rowStride(desc_.keyView, kvWidth);
  const int64_t vRowStride = rowStride(desc_.valueView, kvWidth);
  const float *kBase = key + desc_.keyView.offset;
  const float *vBase = value + desc_.valueView.offset;
  // With kv_heads_split a head is Sk dense rows of D (of its capacity);
  // otherwise head hi of row r starts hi * D into that row.
  const int64_t kHeadStride = desc_.kvHeadsSplit ? kCapacity * d : d;
  const int64_t vHeadStride = desc_.kvHeadsSplit ? vCapacity * d : d;
  const int64_t kBatchStride =
      desc_.kvHeadsSplit ? g * kCapacity * d : kCapacity * kRowStride;
  const int64_t vBatchStride =
      desc_.kvHeadsSplit ? g * vCapacity * d : vCapacity * vRowStride;
  const float scale = desc_.scale;
  const bool causal = desc_.causal, zeroMaskedRows = desc_.zeroMaskedRows;
  const int64_t items = b * h * impl.blocksPerPair;
  std::atomic<int> failure{int(dnnl_success)};

#pragma omp parallel num_threads(impl.teamSize)
  {
    // A nested oneDNN call sizes its own parallelism from this thread's
    // setting, which stays inside this region.
    omp_set_num_threads(1);
    const int64_t thread = omp_get_thread_num();
    float *scores = impl.scores.get() + thread * impl.blockStride;
    RowResult *results = impl.rowResults.data() + thread * impl.rowBlock;
    float *stats = impl.rowStats.data() + thread * impl.rowBlock;
#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      if (failure.load(std::memory_order_relaxed) != int(dnnl_success))
        continue;
      const int64_t pair = item / impl.blocksPerPair;
      const int64_t bi = pair / h, hi = pair % h;
      const int64_t row0 = (item % impl.blocksPerPair) * impl.rowBlock;
      const int64_t rows = std::min(impl.rowBlock, sq - row0);
      const float *q = qBase + (bi * sq + row0) * qRowStride + hi * d;
      const float *k = kBase + bi * kBatchStride + hi / group * kHeadStride;
      const float *v = vBase + bi * vBatchStride + hi / group * vHeadStride;
      float *o = output + (bi * sq + row0) * width + hi * d;

      dnnl_status_t st = dnnl_sgemm('N', 'T', rows, sk, d, scale, q, qRowStride,
                                    k, kRowStride, 0.0f, scores, sk);
      if (st != dnnl_success) {
        int expected = int(dnnl_success);
        failure.compare_exchange_strong(expected, int(st));
        continue;
      }
      RowBlock block;
      block.scores = scores;
      block.rows = rows;
      block.keys = sk;
      block.firstEnd = causal ? row0 + sk - sq + 1 : sk;
      block.endStep = causal ? 1 : 0;
      block.mask = hasMask
                       ? static_cast<const uint8_t *>(mask) +
                             size_t(bi * ms[0] + hi * ms[1] + row0 * ms[2]) *
                                 maskElementSize
                       : nullptr;
      block.maskRowBytes = ms[2] * int64_t(maskElementSize);
      block.bias =
          bias ? bias + bi * bs[0] + hi * bs[1] + row0 * bs[2] : nullptr;
      block.biasRowStride = bs[2];
      block.zeroMaskedRows = zeroMaskedRows;
      block.results = results;
      block.stats = stats;
      softmax(block);
      bool special = false;
      for (int64_t r = 0; r < rows; ++r)
        special |= results[r] != RowResult::Normal;
      st = dnnl_sgemm('N', 'N', rows, d, sk, 1.0f, scores, sk, v, vRowStride,
                      0.0f, o, width);
      if (st != dnnl_success) {
        int expected = int(dnnl_success);
        failure.compare_exchange_strong(expected, int(st));
        continue;
      }
      if (!special)
        continue;
      for (int64_t r = 0; r < rows; ++r)
        if (results[r] != RowResult::Normal)
          std::fill(o + r * width, o + r * width + d,
                    results[r] == RowResult::Zero
                        ? 0.0f
                        : std::numeric_limits<float>::quiet_NaN());
    }
  }

  auto st = dnnl_status_t(failure.load());
  if (st == dnnl_success)
    return Status::ok();
  // The same codes as LinearStep gives oneDNN's failures.
  StatusCode code = st == dnnl_unimplemented       ? StatusCode::Unsupported
                    : st == dnnl_invalid_arguments ? StatusCode::InvalidArgument
                                                   : StatusCode::InvalidFormat;
  return Status::error(code,
                       prefix + "oneDNN sgemm failed: " + dnnl_status2str(st));
}
