//===- AttentionStep.cpp - lmopt.attention at run time --------------------===//
//
// Work items are (batch, head, block of query rows), spread over an OpenMP
// team. Per item: scores = scale * Q K^T with dnnl_sgemm into the thread's
// scratch block, one pass per row that applies the mask and causal hiding
// and finds the maximum, one pass for exp and the sum, then P V with a
// second dnnl_sgemm written straight into the packed output. Inside the
// team dnnl_sgemm runs single-threaded. Packed heads are read through the
// GEMMs' leading dimensions: nothing is copied or transposed.
//
// Rows follow the reference evaluator (lib/Reference/AttentionOps.cpp):
// hidden keys score -FLT_MAX, so a row with every key hidden averages the
// values uniformly, and a row whose maximum is not finite (every score -inf,
// or a +inf score) is NaN, as exp(-inf - -inf) makes it there.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/AttentionStep.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>

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
  AlignedFloats scores;
  /// One RowResult per row of each thread's block.
  std::vector<RowResult> rowResults;
};

AttentionStep::AttentionStep(const CpuContext &context) : context_(context) {}

AttentionStep::~AttentionStep() = default;

static std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

static const char *maskName(AttentionMask mask) {
  switch (mask) {
  case AttentionMask::None:
    return "none";
  case AttentionMask::Additive:
    return "additive";
  case AttentionMask::Bool:
    return "bool";
  }
  return "invalid";
}

/// Checks sizes, the scale and the mask; fills the mask strides.
static Status validateDesc(const AttentionStepDesc &desc,
                           const std::string &prefix, int64_t maskStrides[4]) {
  const int64_t b = desc.batch, h = desc.numHeads, sq = desc.queryLength,
                sk = desc.keyLength, d = desc.headDim;
  if (b <= 0 || h <= 0 || sq <= 0 || sk <= 0 || d <= 0)
    return Status::error(
        StatusCode::InvalidArgument,
        prefix + "sizes must be positive, got batch " + std::to_string(b) +
            ", heads " + std::to_string(h) + ", query length " +
            std::to_string(sq) + ", key length " + std::to_string(sk) +
            ", head dim " + std::to_string(d));
  // Every operand's and the scores' element counts must fit in int64 bytes.
  int64_t width = 0, q = 0, k = 0, s = 0;
  if (__builtin_mul_overflow(h, d, &width) ||
      __builtin_mul_overflow(b, sq, &q) ||
      __builtin_mul_overflow(q, width, &q) || q > INT64_MAX / 4 ||
      __builtin_mul_overflow(b, sk, &k) ||
      __builtin_mul_overflow(k, width, &k) || k > INT64_MAX / 4 ||
      __builtin_mul_overflow(b, h, &s) || __builtin_mul_overflow(s, sq, &s) ||
      __builtin_mul_overflow(s, sk, &s) || s > INT64_MAX / 4)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "sizes overflow: batch " + std::to_string(b) +
                             ", heads " + std::to_string(h) +
                             ", query length " + std::to_string(sq) +
                             ", key length " + std::to_string(sk) +
                             ", head dim " + std::to_string(d));
  if (!std::isfinite(desc.scale))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "scale must be finite, got " +
                             std::to_string(desc.scale));
  int maskKind = static_cast<int>(desc.mask);
  if (maskKind < 0 || maskKind > 2)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "unknown mask kind " +
                             std::to_string(maskKind));
  const std::vector<int64_t> &dims = desc.maskDims;
  if (desc.mask == AttentionMask::None) {
    if (!dims.empty())
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "mask dims " + shapeString(dims) +
                               " given without a mask");
    return Status::ok();
  }
  const std::vector<int64_t> target = {b, h, sq, sk};
  bool fits = dims.size() <= 4;
  for (size_t i = 0; fits && i < dims.size(); ++i) {
    int64_t dim = dims[dims.size() - 1 - i], want = target[3 - i];
    fits = dim == 1 || dim == want;
  }
  if (!fits)
    return Status::error(
        StatusCode::InvalidArgument,
        prefix + std::string(maskName(desc.mask)) + " mask dims " +
            shapeString(dims) +
            " do not broadcast to [B, H, Sq, Sk] = " + shapeString(target));
  int64_t stride = 1;
  for (size_t i = 0; i < 4; ++i) {
    size_t axis = 3 - i;
    bool present = i < dims.size();
    int64_t dim = present ? dims[dims.size() - 1 - i] : 1;
    maskStrides[axis] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return Status::ok();
}

Status AttentionStep::create(const CpuContext &context,
                             const AttentionStepDesc &desc,
                             std::unique_ptr<AttentionStep> &out) {
  const std::string prefix = "attention step '" + desc.name + "': ";
  auto impl = std::make_unique<Impl>();
  if (Status st = validateDesc(desc, prefix, impl->maskStrides); !st)
    return st;

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

  std::unique_ptr<AttentionStep> step(new AttentionStep(context));
  step->desc_ = desc;
  step->impl_ = std::move(impl);
  out = std::move(step);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Softmax rows
//===----------------------------------------------------------------------===//

/// exp(x) for x <= 0 (or NaN), within 2 ulp, in operations that vectorize:
/// Cephes' expf polynomial on x - n ln 2 times 2^n built from the exponent
/// bits. Values below e^-87 (the f32 normal range) flush to zero: they are
/// added to a row sum of at least 1.
static inline float expNonPositive(float x) {
  const float lowest = -87.0f;
  float clamped = x > lowest ? x : lowest;
  // Round to nearest through the 1.5 * 2^23 trick: exact for |v| < 2^22.
  const float magic = 12582912.0f;
  float n = (clamped * 1.44269504088896341f + magic) - magic;
  float r = clamped - n * 0.693359375f - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = (int32_t(n) + 127) << 23;
  float scaleBits;
  std::memcpy(&scaleBits, &bits, sizeof(float));
  float y = x > lowest ? p * scaleBits : 0.0f;
  return x != x ? x : y;
}

namespace {
/// A mask row: the element for key j is at `data[j * stride]`, stride 0 or 1.
template <typename T, bool Broadcast> struct MaskRow {
  const T *data;
  T at(int64_t j) const { return data[Broadcast ? 0 : j]; }
};
} // namespace

/// Applies the mask to keys [0, end) of `s` and hides the rest; returns the
/// maximum and counts the keys neither hidden nor masked by -inf.
template <AttentionMask Kind, bool Broadcast>
static float maskRow(float *s, int64_t sk, int64_t end, const void *mask,
                     int64_t &visible) {
  const float hidden = -FLT_MAX;
  float max = -std::numeric_limits<float>::infinity();
  int64_t count = 0;
  if constexpr (Kind == AttentionMask::None) {
#pragma omp simd reduction(max : max)
    for (int64_t j = 0; j < end; ++j)
      max = std::max(max, s[j]);
    count = end;
  } else if constexpr (Kind == AttentionMask::Additive) {
    MaskRow<float, Broadcast> m{static_cast<const float *>(mask)};
    const float minusInf = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : max) reduction(+ : count)
    for (int64_t j = 0; j < end; ++j) {
      float v = s[j] + m.at(j);
      s[j] = v;
      max = std::max(max, v);
      count += m.at(j) != minusInf;
    }
  } else {
    MaskRow<uint8_t, Broadcast> m{static_cast<const uint8_t *>(mask)};
#pragma omp simd reduction(max : max) reduction(+ : count)
    for (int64_t j = 0; j < end; ++j) {
      bool keep = m.at(j) != 0;
      float v = keep ? s[j] : hidden;
      s[j] = v;
      max = std::max(max, v);
      count += keep;
    }
  }
  for (int64_t j = end; j < sk; ++j)
    s[j] = hidden;
  if (end < sk)
    max = std::max(max, hidden);
  visible = count;
  return max;
}

/// Turns the scores `s` of one query row into probabilities in place.
/// `end` is the first key causal masking hides (sk without it).
template <AttentionMask Kind, bool Broadcast>
static RowResult softmaxRow(float *s, int64_t sk, int64_t end, const void *mask,
                            bool zeroMaskedRows) {
  int64_t visible = 0;
  float max = maskRow<Kind, Broadcast>(s, sk, end, mask, visible);
  RowResult result = RowResult::Normal;
  if (zeroMaskedRows && visible == 0)
    result = RowResult::Zero;
  else if (!std::isfinite(max))
    result = RowResult::NaN;
  if (result != RowResult::Normal) {
    std::fill(s, s + sk, 0.0f);
    return result;
  }
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < sk; ++j) {
    float p = expNonPositive(s[j] - max);
    s[j] = p;
    sum += p;
  }
  float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t j = 0; j < sk; ++j)
    s[j] *= inv;
  return RowResult::Normal;
}

using SoftmaxRowFn = RowResult (*)(float *, int64_t, int64_t, const void *,
                                   bool);

static SoftmaxRowFn selectSoftmaxRow(AttentionMask kind, bool broadcast) {
  switch (kind) {
  case AttentionMask::None:
    return softmaxRow<AttentionMask::None, false>;
  case AttentionMask::Additive:
    return broadcast ? softmaxRow<AttentionMask::Additive, true>
                     : softmaxRow<AttentionMask::Additive, false>;
  case AttentionMask::Bool:
    return broadcast ? softmaxRow<AttentionMask::Bool, true>
                     : softmaxRow<AttentionMask::Bool, false>;
  }
  return nullptr;
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
                          const float *value, const void *mask,
                          float *output) const {
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
        prefix + (hasMask ? "has a " + std::string(maskName(desc_.mask)) +
                                " mask but none was passed"
                          : std::string("has no mask but "
                                        "one was passed")));

  const int64_t b = desc_.batch, h = desc_.numHeads, sq = desc_.queryLength,
                sk = desc_.keyLength, d = desc_.headDim, width = h * d;
  const size_t qBytes = size_t(b * sq * width) * sizeof(float);
  const size_t kvBytes = size_t(b * sk * width) * sizeof(float);
  if (overlaps(output, qBytes, query, qBytes) ||
      overlaps(output, qBytes, key, kvBytes) ||
      overlaps(output, qBytes, value, kvBytes))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "output overlaps " +
                             (overlaps(output, qBytes, query, qBytes) ? "query"
                              : overlaps(output, qBytes, key, kvBytes)
                                  ? "key"
                                  : "value"));

  Impl &impl = *impl_;
  const int64_t *ms = impl.maskStrides;
  SoftmaxRowFn softmax = selectSoftmaxRow(desc_.mask, ms[3] == 0);
  const size_t maskElementSize =
      desc_.mask == AttentionMask::Additive ? sizeof(float) : 1;
  const int64_t kvHeadStride = desc_.kvHeadsSplit ? sk * d : d;
  const int64_t kvBatchStride = sk * width;
  const int64_t kvRowStride = desc_.kvHeadsSplit ? d : width;
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
#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      if (failure.load(std::memory_order_relaxed) != int(dnnl_success))
        continue;
      const int64_t pair = item / impl.blocksPerPair;
      const int64_t bi = pair / h, hi = pair % h;
      const int64_t row0 = (item % impl.blocksPerPair) * impl.rowBlock;
      const int64_t rows = std::min(impl.rowBlock, sq - row0);
      const float *q = query + (bi * sq + row0) * width + hi * d;
      const float *k = key + bi * kvBatchStride + hi * kvHeadStride;
      const float *v = value + bi * kvBatchStride + hi * kvHeadStride;
      float *o = output + (bi * sq + row0) * width + hi * d;

      dnnl_status_t st = dnnl_sgemm('N', 'T', rows, sk, d, scale, q, width, k,
                                    kvRowStride, 0.0f, scores, sk);
      if (st != dnnl_success) {
        int expected = int(dnnl_success);
        failure.compare_exchange_strong(expected, int(st));
        continue;
      }
      bool special = false;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = row0 + r;
        int64_t end = causal ? std::clamp<int64_t>(i + sk - sq + 1, 0, sk) : sk;
        const void *maskRowPtr =
            hasMask ? static_cast<const uint8_t *>(mask) +
                          size_t(bi * ms[0] + hi * ms[1] + i * ms[2]) *
                              maskElementSize
                    : nullptr;
        results[r] =
            softmax(scores + r * sk, sk, end, maskRowPtr, zeroMaskedRows);
        special |= results[r] != RowResult::Normal;
      }
      st = dnnl_sgemm('N', 'N', rows, d, sk, 1.0f, scores, sk, v, kvRowStride,
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

  if (failure.load() != int(dnnl_success))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "oneDNN sgemm failed: " +
                             dnnl_status2str(dnnl_status_t(failure.load())));
  return Status::ok();
}
