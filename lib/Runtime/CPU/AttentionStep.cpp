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
// With bf16 products (AttentionStepDesc::bf16Products, where
// AmxAttention.h's tiles fit) both products run on AMX tiles instead, from
// bf16 copies in the thread's scratch, and the softmax leaves its rows
// unnormalized, written as bf16 into that scratch: each output row is
// scaled by its inverse sum.
//
// The softmax passes live in AttentionSoftmax.cpp, shared with the
// backward step (AttentionGradStep.cpp).
//
// Rows follow the reference evaluator (lib/Reference/AttentionOps.cpp):
// hidden keys score -FLT_MAX, so a row with every key hidden averages the
// values uniformly, and a row whose maximum is not finite (every score -inf,
// or a +inf score) is NaN, as exp(-inf - -inf) makes it there.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/AttentionStep.h"
#include "lmopt/Format/Float16.h"

#include "AmxAttention.h"
#include "AttentionSoftmax.h"
#include "AttentionStepDesc.h"
#include "OmpRegionSync.h"
#include "QuantKernels.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <tuple>

using namespace lmopt::runtime;

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
  /// With outputStatic or outputBf16: each thread's f32 output rows
  /// (rowBlock x D, narrowOutStride apart), quantized or rounded into the
  /// output once finished.
  AlignedFloats narrowOut;
  int64_t narrowOutStride = 0;
  bool avx512 = false;
  /// One RowResult and one float per row of each thread's block.
  std::vector<RowResult> rowResults;
  std::vector<float> rowStats;
  /// bf16 products (AmxAttention.h): each thread's scratch, amxStride
  /// elements apart; empty when the products are f32.
  std::unique_ptr<uint16_t[], void (*)(void *)> amxScratch{nullptr, std::free};
  int64_t amxStride = 0;
  /// With inputBf16 and f32 products: each thread's f32 copies of its
  /// item's Q rows, K and V (dense, rows D apart), wideStride floats apart.
  AlignedFloats wide;
  int64_t wideStride = 0;
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
  // Each thread's share of a scratch: `perThread` floats rounded up to
  // whole cache lines, in `stride`.
  auto perThreadScratch = [&](AlignedFloats &to, int64_t perThread,
                              int64_t &stride, const char *what) {
    stride = (perThread + 15) / 16 * 16;
    const size_t floats = size_t(team) * size_t(stride);
    if (to.allocate(floats))
      return Status::ok();
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "cannot allocate " +
                             std::to_string(floats * sizeof(float)) +
                             " bytes of scratch for " + what);
  };
  if (Status st = perThreadScratch(impl->scores, rowBlock * sk,
                                   impl->blockStride, "scores");
      !st)
    return st;
  impl->avx512 = quant::useAvx512();
  if (desc.outputStatic || desc.outputBf16)
    if (Status st =
            perThreadScratch(impl->narrowOut, rowBlock * desc.headDim,
                             impl->narrowOutStride, "the f32 output rows");
        !st)
      return st;
  impl->rowResults.assign(size_t(team * rowBlock), RowResult::Normal);
  impl->rowStats.assign(size_t(team * rowBlock), 0.0f);
  if (desc.bf16Products &&
      quant::amxAttentionFits(desc.headDim, desc.keyLength)) {
    impl->amxStride =
        int64_t((quant::amxAttentionScratch(rowBlock, sk, desc.headDim) + 31) /
                32 * 32);
    size_t bytes = size_t(team * impl->amxStride) * sizeof(uint16_t);
    impl->amxScratch.reset(
        static_cast<uint16_t *>(std::aligned_alloc(64, bytes)));
    if (!impl->amxScratch)
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "cannot allocate " + std::to_string(bytes) +
                               " bytes of scratch for bf16 products");
  }
  if (desc.inputBf16 && !impl->amxScratch)
    if (Status st =
            perThreadScratch(impl->wide, (rowBlock + 2 * sk) * desc.headDim,
                             impl->wideStride, "the widened operands");
        !st)
      return st;
  impl->softmax = selectSoftmaxBlock(desc.mask, impl->maskStrides[3] == 0);
  impl->maskBytes = attentionMaskBytes(desc);

  std::unique_ptr<AttentionStep> step(new AttentionStep(context));
  step->desc_ = desc;
  step->impl_ = std::move(impl);
  out = std::move(step);
  return Status::ok();
}

bool AttentionStep::usesAmx() const { return impl_->amxScratch != nullptr; }

//===----------------------------------------------------------------------===//
// Run
//===----------------------------------------------------------------------===//

/// rows x cols bf16 values (rows `stride` apart) widened into `out`
/// (dense).
static void widenRows(const uint16_t *from, int64_t stride, int64_t rows,
                      int64_t cols, float *out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = bfloat16ToFloat(from[r * stride + c]);
}

Status AttentionStep::run(const void *query, const void *key, const void *value,
                          const void *mask, void *output,
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
  if (Status st = checkMaskPointer(desc_, prefix, mask); !st)
    return st;

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
  const size_t outBytes =
      size_t(b * sq * width) * (desc_.outputStatic ? 1
                                : desc_.outputBf16 ? sizeof(uint16_t)
                                                   : sizeof(float));
  const size_t inBytes = desc_.inputBf16 ? sizeof(uint16_t) : sizeof(float);
  const struct {
    const char *role;
    const void *data;
    size_t bytes;
  } spans[] = {
      {"query", query,
       size_t(viewSpan(desc_.queryView, b * sq, width)) * inBytes},
      {"key", key,
       size_t(viewSpan(desc_.keyView, kvSequences * kCapacity, kvWidth)) *
           inBytes},
      {"value", value,
       size_t(viewSpan(desc_.valueView, kvSequences * vCapacity, kvWidth)) *
           inBytes},
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
  const ScoreRowLayout layout = scoreRowLayout(
      desc_, mask, impl.maskStrides, bias, impl.biasStrides);
  const SoftmaxBlockFn softmax = impl.softmax;
  // Rows of Q, K and V are read through the GEMMs' leading dimensions, so a
  // view costs nothing over the dense layout.
  const int64_t qRowStride = rowStride(desc_.queryView, width);
  const int64_t kRowStride = rowStride(desc_.keyView, kvWidth);
  const int64_t vRowStride = rowStride(desc_.valueView, kvWidth);
  // Element `i` of an operand, f32 or (inputBf16) bf16.
  auto f32At = [](const void *base, int64_t i) {
    return static_cast<const float *>(base) + i;
  };
  auto bf16At = [](const void *base, int64_t i) {
    return static_cast<const uint16_t *>(base) + i;
  };
  // With kv_heads_split a head is Sk dense rows of D (of its capacity);
  // otherwise head hi of row r starts hi * D into that row.
  const int64_t kHeadStride = desc_.kvHeadsSplit ? kCapacity * d : d;
  const int64_t vHeadStride = desc_.kvHeadsSplit ? vCapacity * d : d;
  const int64_t kBatchStride =
      desc_.kvHeadsSplit ? g * kCapacity * d : kCapacity * kRowStride;
  const int64_t vBatchStride =
      desc_.kvHeadsSplit ? g * vCapacity * d : vCapacity * vRowStride;
  const float scale = desc_.scale;
  const int64_t items = b * h * impl.blocksPerPair;
  std::atomic<int> failure{int(dnnl_success)};

  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(impl.teamSize)
  {
    ompSync.enter();
    // A nested oneDNN call sizes its own parallelism from this thread's
    // setting, which stays inside this region.
    omp_set_num_threads(1);
    const int64_t thread = omp_get_thread_num();
    float *scores = impl.scores.get() + thread * impl.blockStride;
    RowResult *results = impl.rowResults.data() + thread * impl.rowBlock;
    float *stats = impl.rowStats.data() + thread * impl.rowBlock;
    uint16_t *amx = impl.amxScratch
                        ? impl.amxScratch.get() + thread * impl.amxStride
                        : nullptr;
    float *narrowOut =
        desc_.outputStatic || desc_.outputBf16
            ? impl.narrowOut.get() + thread * impl.narrowOutStride
            : nullptr;
#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      if (failure.load(std::memory_order_relaxed) != int(dnnl_success))
        continue;
      const int64_t pair = item / impl.blocksPerPair;
      const int64_t bi = pair / h, hi = pair % h;
      const int64_t row0 = (item % impl.blocksPerPair) * impl.rowBlock;
      const int64_t rows = std::min(impl.rowBlock, sq - row0);
      const int64_t qAt =
          desc_.queryView.offset + (bi * sq + row0) * qRowStride + hi * d;
      const int64_t kAt =
          desc_.keyView.offset + bi * kBatchStride + hi / group * kHeadStride;
      const int64_t vAt =
          desc_.valueView.offset + bi * vBatchStride + hi / group * vHeadStride;
      // f32 operands: the step's, or with inputBf16 and f32 products the
      // thread's widened copies (rows D apart).
      const float *q = nullptr, *k = nullptr, *v = nullptr;
      int64_t qStride = qRowStride, kStride = kRowStride, vStride = vRowStride;
      if (!desc_.inputBf16) {
        q = f32At(query, qAt);
        k = f32At(key, kAt);
        v = f32At(value, vAt);
      } else if (!amx) {
        float *wide = impl.wide.get() + thread * impl.wideStride;
        widenRows(bf16At(query, qAt), qRowStride, rows, d, wide);
        widenRows(bf16At(key, kAt), kRowStride, sk, d, wide + rows * d);
        widenRows(bf16At(value, vAt), vRowStride, sk, d,
                  wide + (rows + sk) * d);
        q = wide;
        k = wide + rows * d;
        v = wide + (rows + sk) * d;
        qStride = kStride = vStride = d;
      }
      // The f32 rows: the output's, or with outputStatic or outputBf16 the
      // thread's scratch (rows D apart), stored into the output at the end.
      const int64_t outRow0 = (bi * sq + row0) * width + hi * d;
      float *o = narrowOut ? narrowOut : static_cast<float *>(output) + outRow0;
      const int64_t oStride = narrowOut ? d : width;

      dnnl_status_t st = dnnl_success;
      if (amx && desc_.inputBf16)
        quant::amxAttentionScores(bf16At(query, qAt), qRowStride, rows,
                                  bf16At(key, kAt), kRowStride, sk, d, scale,
                                  amx, scores);
      else if (amx)
        quant::amxAttentionScores(q, qStride, rows, k, kStride, sk, d, scale,
                                  amx, scores);
      else
        st = dnnl_sgemm('N', 'T', rows, sk, d, scale, q, qStride, k, kStride,
                        0.0f, scores, sk);
      if (st != dnnl_success) {
        int expected = int(dnnl_success);
        failure.compare_exchange_strong(expected, int(st));
        continue;
      }
      RowBlock block =
          layout.block(bi, hi, row0, rows, scores, results, stats);
      // The bf16 products scale each output row by 1 / sum instead of
      // each probability (one pass over the scores fewer), and take the
      // probabilities as bf16 from the softmax.
      block.normalize = !amx;
      block.bf16Probs = amx;
      softmax(block);
      bool special = false;
      for (int64_t r = 0; r < rows; ++r)
        special |= results[r] != RowResult::Normal;
      if (amx && desc_.inputBf16)
        quant::amxAttentionValues(rows, bf16At(value, vAt), vRowStride, sk, d,
                                  amx, o, oStride, stats);
      else if (amx)
        quant::amxAttentionValues(rows, v, vStride, sk, d, amx, o, oStride,
                                  stats);
      else
        st = dnnl_sgemm('N', 'N', rows, d, sk, 1.0f, scores, sk, v, vStride,
                        0.0f, o, oStride);
      if (st != dnnl_success) {
        int expected = int(dnnl_success);
        failure.compare_exchange_strong(expected, int(st));
        continue;
      }
      if (special)
        for (int64_t r = 0; r < rows; ++r)
          if (results[r] != RowResult::Normal)
            std::fill(o + r * oStride, o + r * oStride + d,
                      results[r] == RowResult::Zero
                          ? 0.0f
                          : std::numeric_limits<float>::quiet_NaN());
      if (narrowOut) {
        quant::Epilogue e;
        if (desc_.outputBf16) {
          e.bf16Out = static_cast<uint16_t *>(output) + outRow0;
        } else {
          e.q8Out = static_cast<uint8_t *>(output) + outRow0;
          e.q8Scale = desc_.outputScale;
          e.q8ZeroPoint = desc_.outputZeroPoint;
          e.q8Signed = desc_.outputSigned;
        }
        quant::applyEpilogueBlock(o, d, rows, d, e, nullptr, width,
                                  impl.avx512);
      }
    }
    ompSync.leave();
  }
  ompSync.join();

  if (failure.load() == int(dnnl_success))
    return Status::ok();
  return sgemmFailure(prefix, failure.load());
}
