//===- AttentionGradStep.cpp - lmopt.attention_grad at run time -----------===//
//
// Work items are (batch, head) pairs, spread over an OpenMP team: a pair's
// key and value gradients sum over all its query rows, so one thread owns
// them and no reduction is needed. Per pair, blocks of query rows:
//
//   P  = softmax(scale * Q K^T + mask)    dnnl_sgemm, then the forward's
//                                         softmax kernel (AttentionSoftmax)
//   dV += P^T dO                          dnnl_sgemm, beta 1 after block 0
//   dP = dO V^T                           dnnl_sgemm
//   dS = scale * P (dP - rowsum(dP P))    one pass per row, in place of dP
//   dQ = dS K                             dnnl_sgemm into the packed output
//   dK += dS^T Q                          dnnl_sgemm, beta 1 after block 0
//
// A row the softmax leaves zero (zero_masked_rows, every key hidden) has a
// zero dS row, so zero gradient everywhere; a NaN row (the forward's NaN)
// poisons its pair's gradients, as the decomposed backward does.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/AttentionGradStep.h"

#include "AttentionSoftmax.h"
#include "AttentionStepDesc.h"
#include "OmpRegionSync.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <limits>

using namespace lmopt::runtime;

struct AttentionGradStep::Impl {
  int teamSize = 1;
  int64_t rowBlock = 1;
  /// Floats between two threads' blocks (a cache-line multiple).
  int64_t blockStride = 0;
  int64_t maskStrides[4] = {0, 0, 0, 0};
  size_t maskBytes = 0;
  SoftmaxBlockFn softmax = nullptr;
  /// Per thread: the probabilities, then dP (turned into dS), one block
  /// each.
  AlignedFloats scratch;
  std::vector<RowResult> rowResults;
  std::vector<float> rowStats;
};

AttentionGradStep::AttentionGradStep(const CpuContext &context)
    : context_(context) {}

AttentionGradStep::~AttentionGradStep() = default;

/// What the backward does not take, or an empty string.
static std::string unsupportedPart(const AttentionStepDesc &desc) {
  if (desc.numKvHeads != 0 && desc.numKvHeads != desc.numHeads)
    return "grouped-query heads (num_kv_heads " +
           std::to_string(desc.numKvHeads) + ")";
  if (desc.kvHeadsSplit)
    return "kv_heads_split";
  if (desc.scoreBias || !desc.biasDims.empty())
    return "a score bias";
  if (desc.keyCapacity || desc.valueCapacity)
    return "a key or value capacity";
  for (const AttentionOperandView *view :
       {&desc.queryView, &desc.keyView, &desc.valueView})
    if (view->offset || view->rowStride)
      return "operand views";
  return "";
}

Status AttentionGradStep::create(const CpuContext &context,
                                 const AttentionStepDesc &desc,
                                 std::unique_ptr<AttentionGradStep> &out) {
  const std::string prefix = "attention_grad step '" + desc.name + "': ";
  if (std::string part = unsupportedPart(desc); !part.empty())
    return Status::error(StatusCode::Unsupported,
                         prefix + "the attention backward does not take " +
                             part);
  auto impl = std::make_unique<Impl>();
  if (Status st = validateAttentionDesc(desc, prefix, impl->maskStrides); !st)
    return st;
  const int64_t pairs = desc.batch * desc.numHeads;
  const int64_t sq = desc.queryLength, sk = desc.keyLength;
  int64_t team = context.threads() > 0 ? context.threads()
                                       : int64_t(omp_get_max_threads());
  team = std::max<int64_t>(1, std::min(team, pairs));
  // Two blocks of at most 32 Ki floats each (unless one row is longer):
  // P and dS stay in the core's L2 across the five products.
  impl->rowBlock = std::min(sq, std::max<int64_t>(1, (int64_t(1) << 15) / sk));
  impl->teamSize = int(team);
  impl->blockStride = (impl->rowBlock * sk + 15) / 16 * 16;
  size_t floats = size_t(team) * 2 * size_t(impl->blockStride);
  if (!impl->scratch.allocate(floats))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "cannot allocate " +
                             std::to_string(floats * sizeof(float)) +
                             " bytes of scratch for probabilities");
  impl->rowResults.assign(size_t(team * impl->rowBlock), RowResult::Normal);
  impl->rowStats.assign(size_t(team * impl->rowBlock), 0.0f);
  impl->softmax = selectSoftmaxBlock(desc.mask, impl->maskStrides[3] == 0);
  impl->maskBytes = attentionMaskBytes(desc);
  std::unique_ptr<AttentionGradStep> step(new AttentionGradStep(context));
  step->desc_ = desc;
  step->impl_ = std::move(impl);
  out = std::move(step);
  return Status::ok();
}

/// dS = scale * P (dP - rowsum(dP P)) over one row, in place of dP; a row
/// whose softmax left it zero gets a zero row.
static void softmaxBackwardRow(const float *p, float *dp, int64_t sk,
                               float scale, RowResult result) {
  if (result == RowResult::Zero) {
    std::fill(dp, dp + sk, 0.0f);
    return;
  }
  float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < sk; ++j)
    dot += dp[j] * p[j];
#pragma omp simd
  for (int64_t j = 0; j < sk; ++j)
    dp[j] = scale * p[j] * (dp[j] - dot);
}

Status AttentionGradStep::run(const float *query, const float *key,
                              const float *value, const float *outputGrad,
                              const void *mask, float *queryGrad,
                              float *keyGrad, float *valueGrad) const {
  const std::string prefix = "attention_grad step '" + desc_.name + "': ";
  const struct {
    const char *role;
    const void *data;
  } pointers[] = {{"query", query},          {"key", key},
                  {"value", value},          {"output_grad", outputGrad},
                  {"query_grad", queryGrad}, {"key_grad", keyGrad},
                  {"value_grad", valueGrad}};
  for (const auto &pointer : pointers)
    if (!pointer.data)
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "null " + pointer.role + " pointer");
  if (Status st = checkMaskPointer(desc_, prefix, mask); !st)
    return st;
  Impl &impl = *impl_;
  const int64_t b = desc_.batch, h = desc_.numHeads, sq = desc_.queryLength,
                sk = desc_.keyLength, d = desc_.headDim, width = h * d;
  const size_t qBytes = size_t(b * sq * width) * sizeof(float);
  const size_t kBytes = size_t(b * sk * width) * sizeof(float);
  const struct {
    const char *role;
    const void *data;
    size_t bytes;
  } inputs[] = {{"query", query, qBytes},
                {"key", key, kBytes},
                {"value", value, kBytes},
                {"output_grad", outputGrad, qBytes},
                {"mask", mask, mask ? impl.maskBytes : 0}},
    outputs[] = {{"query_grad", queryGrad, qBytes},
                 {"key_grad", keyGrad, kBytes},
                 {"value_grad", valueGrad, kBytes}};
  for (size_t o = 0; o < 3; ++o) {
    for (const auto &input : inputs)
      if (input.bytes &&
          overlaps(outputs[o].data, outputs[o].bytes, input.data, input.bytes))
        return Status::error(StatusCode::InvalidArgument,
                             prefix + outputs[o].role + " overlaps " +
                                 input.role);
    for (size_t other = o + 1; other < 3; ++other)
      if (overlaps(outputs[o].data, outputs[o].bytes, outputs[other].data,
                   outputs[other].bytes))
        return Status::error(StatusCode::InvalidArgument,
                             prefix + outputs[o].role + " overlaps " +
                                 outputs[other].role);
  }

  const ScoreRowLayout layout =
      scoreRowLayout(desc_, mask, impl.maskStrides, nullptr, nullptr);
  const float scale = desc_.scale;
  const int64_t pairs = b * h, rowBlock = impl.rowBlock;
  const SoftmaxBlockFn softmax = impl.softmax;
  std::atomic<int> failure{int(dnnl_success)};
  auto fail = [&](dnnl_status_t st) {
    int expected = int(dnnl_success);
    failure.compare_exchange_strong(expected, int(st));
  };

  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(impl.teamSize)
  {
    ompSync.enter();
    // A nested oneDNN call sizes its own parallelism from this thread's
    // setting, which stays inside this region.
    omp_set_num_threads(1);
    const int64_t thread = omp_get_thread_num();
    float *p = impl.scratch.get() + thread * 2 * impl.blockStride;
    float *ds = p + impl.blockStride;
    RowResult *results = impl.rowResults.data() + thread * rowBlock;
    float *stats = impl.rowStats.data() + thread * rowBlock;
#pragma omp for schedule(static)
    for (int64_t pair = 0; pair < pairs; ++pair) {
      const int64_t bi = pair / h, hi = pair % h;
      const int64_t qOffset = bi * sq * width + hi * d;
      const int64_t kOffset = bi * sk * width + hi * d;
      const float *k = key + kOffset, *v = value + kOffset;
      float *dk = keyGrad + kOffset, *dv = valueGrad + kOffset;
      for (int64_t row0 = 0; row0 < sq; row0 += rowBlock) {
        if (failure.load(std::memory_order_relaxed) != int(dnnl_success))
          break;
        const int64_t rows = std::min(rowBlock, sq - row0);
        const float *q = query + qOffset + row0 * width;
        const float *dout = outputGrad + qOffset + row0 * width;
        float *dq = queryGrad + qOffset + row0 * width;
        const float beta = row0 == 0 ? 0.0f : 1.0f;
        dnnl_status_t st = dnnl_sgemm('N', 'T', rows, sk, d, scale, q, width, k,
                                      width, 0.0f, p, sk);
        if (st != dnnl_success) {
          fail(st);
          break;
        }
        RowBlock block = layout.block(bi, hi, row0, rows, p, results, stats);
        softmax(block);
        for (int64_t r = 0; r < rows; ++r)
          if (results[r] == RowResult::NaN)
            std::fill(p + r * sk, p + (r + 1) * sk,
                      std::numeric_limits<float>::quiet_NaN());
        st = dnnl_sgemm('T', 'N', sk, d, rows, 1.0f, p, sk, dout, width, beta,
                        dv, width);
        if (st == dnnl_success)
          st = dnnl_sgemm('N', 'T', rows, sk, d, 1.0f, dout, width, v, width,
                          0.0f, ds, sk);
        if (st != dnnl_success) {
          fail(st);
          break;
        }
        for (int64_t r = 0; r < rows; ++r)
          softmaxBackwardRow(p + r * sk, ds + r * sk, sk, scale, results[r]);
        st = dnnl_sgemm('N', 'N', rows, d, sk, 1.0f, ds, sk, k, width, 0.0f, dq,
                        width);
        if (st == dnnl_success)
          st = dnnl_sgemm('T', 'N', sk, d, rows, 1.0f, ds, sk, q, width, beta,
                          dk, width);
        if (st != dnnl_success) {
          fail(st);
          break;
        }
      }
    }
    ompSync.leave();
  }
  ompSync.join();

  if (failure.load() == int(dnnl_success))
    return Status::ok();
  return sgemmFailure(prefix, failure.load());
}
