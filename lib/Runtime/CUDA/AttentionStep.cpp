//===- AttentionStep.cpp - lmopt.attention on the CUDA device -------------===//
//
// Checks an attention step as every device does (checkAttentionStep; the
// sizes and mask as AttentionStep::create) and picks one of the runtime's
// fused kernels (Kernels/Attention.cuh): the tiled prefill kernel, or for at
// most kDecodeMaxRows query rows the split-key decode kernel plus its
// combine kernel, whose partial results live in a buffer allocated here.
// Query, key, value and output are f32, f16 or bf16 (one dtype; arithmetic
// in f32); head dims up to 128.
//
//===----------------------------------------------------------------------===//

#include "CudaExecutors.h"
#include "Kernels/KernelParams.cuh"

#include "lmopt/Runtime/AttentionCheck.h"

#include <algorithm>
#include <climits>
#include <cmath>

using namespace lmopt::runtime;
using namespace lmopt::runtime::cuda;
using lmopt_kernels::AttentionParams;

/// Query rows up to which the decode kernel runs (one block per row and
/// key split), rather than the 64-row prefill tiles.
static constexpr int64_t kDecodeMaxRows = 4;
/// The most key splits of one decode row, and the fewest keys in a split.
static constexpr int64_t kMaxDecodeSplits = 64;
static constexpr int64_t kMinKeysPerSplit = 128;
static constexpr int64_t kMaxHeadDim = 128;

namespace {
class CudaAttentionExecutor : public StepExecutor {
public:
  explicit CudaAttentionExecutor(const CudaStepEnv &env) : env(env) {}
  ~CudaAttentionExecutor() override {
    if (partial)
      (void)env.api.cuMemFree(partial);
  }

  Status run(void *const *tensors) const override {
    AttentionParams p = params;
    auto at = [&](int64_t tensor, int64_t offset) {
      return static_cast<const char *>(tensors[tensor]) + offset * elementSize;
    };
    p.q = at(query, queryOffset);
    p.k = at(key, keyOffset);
    p.v = at(value, valueOffset);
    p.mask = mask < 0 ? nullptr : tensors[mask];
    p.out = tensors[output];
    p.partial = reinterpret_cast<float *>(partial);
    void *args[] = {&p};
    const CudaApi &api = env.api;
    if (!decode)
      return api.check(
          "cuLaunchKernel (attention)",
          api.cuLaunchKernel(main, unsigned((p.queryLength + 63) / 64),
                             unsigned(p.heads), unsigned(p.batch),
                             lmopt_kernels::kAttentionThreads, 1, 1,
                             sharedBytes, env.stream, args, nullptr));
    const unsigned rows = unsigned(p.batch * p.heads * p.queryLength);
    if (Status st =
            api.check("cuLaunchKernel (attention decode)",
                      api.cuLaunchKernel(main, rows, unsigned(p.splits), 1,
                                         lmopt_kernels::kDecodeThreads, 1, 1, 0,
                                         env.stream, args, nullptr));
        !st || p.splits == 1)
      return st;
    return api.check("cuLaunchKernel (attention combine)",
                     api.cuLaunchKernel(combine, rows, 1, 1,
                                        lmopt_kernels::kDecodeThreads, 1, 1, 0,
                                        env.stream, args, nullptr));
  }

  /// A copy: the device may build each step with an env of the moment.
  const CudaStepEnv env;
  AttentionParams params{};
  CUfunction main = nullptr, combine = nullptr;
  bool decode = false;
  unsigned sharedBytes = 0;
  CUdeviceptr partial = 0;
  int64_t elementSize = 4;
  int64_t queryOffset = 0, keyOffset = 0, valueOffset = 0;
  int64_t query = 0, key = 0, value = 0, mask = -1, output = 0;
};
} // namespace

/// Query, key, value and output share one dtype the kernels take.
static Status expectAttentionDTypes(const StepCheck &c) {
  const PlanTensor &query = c.operand(0);
  if (query.dtype != DType::F32 && query.dtype != DType::F16 &&
      query.dtype != DType::BF16)
    return c.error("query " + describe(query) + " has dtype " +
                   dtypeName(query.dtype) + "; expected f32, f16 or bf16");
  for (auto [role, t] :
       {std::pair<const char *, const PlanTensor *>{"key", &c.operand(1)},
        {"value", &c.operand(2)},
        {"output", &c.result(0)}})
    if (t->dtype != query.dtype)
      return c.error(std::string(role) + " " + describe(*t) + " has dtype " +
                     dtypeName(t->dtype) + "; expected " +
                     dtypeName(query.dtype) + ", the query's");
  return Status::ok();
}

/// Sizes, scale and the kernels' limits (the CPU's AttentionStep::create
/// checks, and what the grid and 32-bit row numbers allow).
static Status checkSizes(const CudaCheck &c, const AttentionShape &s) {
  const std::string sizes = "batch " + std::to_string(s.batch) + ", heads " +
                            std::to_string(s.heads) + ", query length " +
                            std::to_string(s.queryLength) + ", key length " +
                            std::to_string(s.keyLength) + ", head dim " +
                            std::to_string(s.headDim);
  if (s.batch <= 0 || s.heads <= 0 || s.queryLength <= 0 || s.keyLength <= 0 ||
      s.headDim <= 0)
    return c.error("sizes must be positive, got " + sizes,
                   StatusCode::InvalidArgument);
  if (s.kvHeads != s.heads)
    return c.error("grouped-query attention (num_kv_heads " +
                       std::to_string(s.kvHeads) + " of num_heads " +
                       std::to_string(s.heads) +
                       ") is not supported by the CUDA attention kernels",
                   StatusCode::Unsupported);
  if (s.scoreBias)
    return c.error("a score bias (relative-position bias) is not supported "
                   "by the CUDA attention kernels",
                   StatusCode::Unsupported);
  if (s.headDim > kMaxHeadDim)
    return c.error("head dim " + std::to_string(s.headDim) +
                       " is above the CUDA attention kernel's limit of " +
                       std::to_string(kMaxHeadDim),
                   StatusCode::Unsupported);
  int64_t rows = 0;
  if (s.batch > 65535 || s.heads > 65535 || s.keyLength > INT_MAX ||
      __builtin_mul_overflow(s.batch * s.heads, s.queryLength, &rows) ||
      rows > INT_MAX)
    return c.error("sizes exceed the CUDA attention kernel's grid (at most "
                   "65535 batches and heads, 2^31 - 1 rows and keys), got " +
                       sizes,
                   StatusCode::Unsupported);
  if (!std::isfinite(float(s.scale)))
    return c.error("scale must be finite, got " + std::to_string(s.scale),
                   StatusCode::InvalidArgument);
  return Status::ok();
}

/// The mask's kind and its element strides over [B, H, Sq, Sk] (numpy
/// broadcasting, aligned on the right).
static Status readMask(const CudaCheck &c, AttentionShape &s,
                       AttentionParams &p) {
  p.maskKind = lmopt_kernels::kMaskNone;
  if (Status st = checkAttentionMask(c, s); !st)
    return st;
  if (s.mask == AttentionMaskKind::None)
    return Status::ok();
  p.maskKind = s.mask == AttentionMaskKind::Additive
                   ? lmopt_kernels::kMaskAdditive
                   : lmopt_kernels::kMaskBool;
  const PlanTensor &mask = c.operand(3);
  const std::vector<int64_t> &dims = mask.dims;
  const int64_t target[4] = {s.batch, s.heads, s.queryLength, s.keyLength};
  bool fits = dims.size() <= 4;
  for (size_t i = 0; fits && i < dims.size(); ++i) {
    int64_t dim = dims[dims.size() - 1 - i];
    fits = dim == 1 || dim == target[3 - i];
  }
  if (!fits)
    return c.error(std::string(p.maskKind == lmopt_kernels::kMaskAdditive
                                   ? "additive"
                                   : "bool") +
                       " mask dims " + formatDims(dims) +
                       " do not broadcast to [B, H, Sq, Sk] = " +
                       formatDims(std::vector<int64_t>(target, target + 4)),
                   StatusCode::InvalidArgument);
  int64_t stride = 1;
  for (size_t i = 0; i < 4; ++i) {
    bool present = i < dims.size();
    int64_t dim = present ? dims[dims.size() - 1 - i] : 1;
    p.maskStride[3 - i] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return Status::ok();
}

static const char *kernelDType(DType dtype) {
  return dtype == DType::F16 ? "f16" : dtype == DType::BF16 ? "bf16" : "f32";
}

/// Picks the decode kernel's key splits so that rows x splits fills the
/// device about twice over, each split at least kMinKeysPerSplit keys.
static void chooseSplits(const CudaStepEnv &env, int64_t rows, int64_t keys,
                         AttentionParams &p) {
  int64_t target =
      2 * int64_t(env.multiprocessors > 0 ? env.multiprocessors : 132);
  int64_t splits = std::max<int64_t>(1, (target + rows - 1) / rows);
  splits = std::min({splits, kMaxDecodeSplits,
                     std::max<int64_t>(1, keys / kMinKeysPerSplit)});
  int64_t step = lmopt_kernels::kDecodeKeysPerWarpStep *
                 (lmopt_kernels::kDecodeThreads / 32);
  int64_t perSplit = (keys + splits - 1) / splits;
  perSplit = (perSplit + step - 1) / step * step;
  p.keysPerSplit = int(perSplit);
  p.splits = int((keys + perSplit - 1) / perSplit);
}

Status
lmopt::runtime::cuda::buildAttentionStep(const CudaCheck &c,
                                         std::unique_ptr<StepExecutor> &out) {
  const CudaStepEnv &env = c.env;
  const PlanStep &step = c.step;
  AttentionShape s;
  if (Status st = checkAttentionStep(c, expectAttentionDTypes, s); !st)
    return st;
  if (s.outputStatic || s.outputBf16 || s.inputBf16)
    return c.error(std::string("has ") +
                   (s.outputStatic ? "output_static"
                    : s.outputBf16 ? "output_bf16"
                                   : "input_bf16") +
                   ", a CPU plan's narrowed " +
                   (s.inputBf16 && !s.outputStatic && !s.outputBf16
                        ? "operands; this device reads them in the output's "
                          "dtype"
                        : "output; this device writes the query's dtype"));
  if (Status st = checkSizes(c, s); !st)
    return st;
  auto exec = std::make_unique<CudaAttentionExecutor>(env);
  AttentionParams &p = exec->params;
  if (Status st = readMask(c, s, p); !st)
    return st;

  const int64_t width = s.heads * s.headDim;
  const int64_t kCapacity = s.keyCapacity ? s.keyCapacity : s.keyLength;
  const int64_t vCapacity = s.valueCapacity ? s.valueCapacity : s.keyLength;
  const int64_t kvWidth = s.kvHeadsSplit ? s.headDim : width;
  p.batch = int(s.batch);
  p.heads = int(s.heads);
  p.queryLength = int(s.queryLength);
  p.keyLength = int(s.keyLength);
  p.headDim = int(s.headDim);
  p.scale = float(s.scale);
  p.causal = s.causal;
  p.zeroMaskedRows = s.zeroMaskedRows;
  p.qRowStride = s.queryView.rowStride ? s.queryView.rowStride : width;
  p.kRowStride = s.keyView.rowStride ? s.keyView.rowStride : kvWidth;
  p.vRowStride = s.valueView.rowStride ? s.valueView.rowStride : kvWidth;
  // With kv_heads_split a head is Sk dense rows of D (of its capacity);
  // otherwise head h of a row starts h * D into it.
  p.kHeadStride = s.kvHeadsSplit ? kCapacity * s.headDim : s.headDim;
  p.vHeadStride = s.kvHeadsSplit ? vCapacity * s.headDim : s.headDim;
  p.kBatchStride = s.kvHeadsSplit ? s.heads * kCapacity * s.headDim
                                  : kCapacity * p.kRowStride;
  p.vBatchStride = s.kvHeadsSplit ? s.heads * vCapacity * s.headDim
                                  : vCapacity * p.vRowStride;
  p.splits = 1;
  p.keysPerSplit = int(s.keyLength);

  const DType dtype = c.operand(0).dtype;
  exec->elementSize = int64_t(dtypeSize(dtype));
  exec->queryOffset = s.queryView.offset;
  exec->keyOffset = s.keyView.offset;
  exec->valueOffset = s.valueView.offset;
  exec->query = step.operands[0];
  exec->key = step.operands[1];
  exec->value = step.operands[2];
  if (step.operands.size() == 4)
    exec->mask = step.operands[3];
  exec->output = step.results[0];

  const int paddedDim = s.headDim <= 32 ? 32 : s.headDim <= 64 ? 64 : 128;
  const std::string suffix =
      std::string(kernelDType(dtype)) + "_d" + std::to_string(paddedDim);
  exec->decode = s.queryLength <= kDecodeMaxRows;
  if (!exec->decode) {
    if (Status st =
            c.runtimeKernel("lmopt_attention_prefill_" + suffix, exec->main);
        !st)
      return st;
    exec->sharedBytes =
        unsigned(lmopt_kernels::attentionSharedBytes(paddedDim));
    if (Status st = env.api.check(
            "cuFuncSetAttribute (dynamic shared memory)",
            env.api.cuFuncSetAttribute(
                exec->main, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                int(exec->sharedBytes)));
        !st)
      return c.error("the prefill kernel needs " +
                         std::to_string(exec->sharedBytes) +
                         " bytes of shared memory per block: " + st.message(),
                     StatusCode::Unsupported);
  } else {
    if (Status st =
            c.runtimeKernel("lmopt_attention_decode_" + suffix, exec->main);
        !st)
      return st;
    const int64_t rows = s.batch * s.heads * s.queryLength;
    chooseSplits(env, rows, s.keyLength, p);
    if (p.splits > 1) {
      if (Status st = c.runtimeKernel("lmopt_attention_combine_" + suffix,
                                      exec->combine);
          !st)
        return st;
      size_t bytes = size_t(rows) * size_t(p.splits) *
                     size_t(lmopt_kernels::kDecodePartialHeader + paddedDim) *
                     sizeof(float);
      if (Status st = env.api.check("cuMemAlloc (attention partial results)",
                                    env.api.cuMemAlloc(&exec->partial, bytes));
          !st)
        return c.error(st.message(), st.code());
    }
  }
  out = std::move(exec);
  return Status::ok();
}
