//===- AttentionStep.cpp - lmopt.attention on the CUDA device -------------===//
//
// Checks an attention step as the CPU does (AttentionExecutor.cpp and
// AttentionStep::create: heads, scale, flags, views into a fused projection,
// key and value read at a state's capacity, the mask) and picks one of the
// runtime's fused kernels (Kernels/Attention.cuh): the tiled prefill kernel,
// or for at most kDecodeMaxRows query rows the split-key decode kernel plus
// its combine kernel, whose partial results live in a buffer allocated here.
// Query, key, value and output are f32, f16 or bf16 (one dtype; arithmetic
// in f32); head dims up to 128.
//
//===----------------------------------------------------------------------===//

#include "CudaExecutors.h"
#include "Kernels/KernelParams.cuh"

#include <algorithm>
#include <climits>
#include <cmath>
#include <tuple>

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

/// An operand read through a view of a wider buffer (offset and row stride
/// in elements; stride 0: dense).
struct View {
  int64_t offset = 0, rowStride = 0;
};

/// The step's shape and flags, as the CPU's AttentionStepDesc.
struct Shape {
  int64_t batch = 0, heads = 0, queryLength = 0, keyLength = 0, headDim = 0;
  double scale = 0;
  bool causal = false, kvHeadsSplit = false, zeroMaskedRows = false;
  View queryView, keyView, valueView;
  int64_t keyCapacity = 0, valueCapacity = 0;
};
} // namespace

/// Reads `<role>_offset` and `<role>_row_stride` (absent: dense).
static Status getView(const CudaCheck &c, const std::string &role, View &view) {
  std::string offsetName = role + "_offset", strideName = role + "_row_stride";
  bool hasOffset = c.step.findAttr(offsetName) != nullptr;
  bool hasStride = c.step.findAttr(strideName) != nullptr;
  if (hasOffset != hasStride)
    return c.error("has attribute '" + (hasOffset ? offsetName : strideName) +
                   "' without '" + (hasOffset ? strideName : offsetName) + "'");
  if (!hasOffset)
    return Status::ok();
  if (Status st = c.getInt(offsetName.c_str(), view.offset); !st)
    return st;
  if (Status st = c.getInt(strideName.c_str(), view.rowStride); !st)
    return st;
  if (view.rowStride <= 0 || view.offset < 0)
    return c.error("attribute '" + strideName + "' is " +
                   std::to_string(view.rowStride) + " and '" + offsetName +
                   "' is " + std::to_string(view.offset) +
                   "; expected a positive stride and an offset >= 0");
  return Status::ok();
}

/// A [B, S, H*D] operand, or the buffer [B, S, row_stride] its view reads.
static Status expectRows(const CudaCheck &c, const char *role,
                         const PlanTensor &t, const View &view, int64_t batch,
                         int64_t length, int64_t width) {
  bool isQuery = std::string(role) == "query";
  if (!view.rowStride)
    return c.expectDims(role, t, {batch, length, width},
                        isQuery ? "[B, Sq, H*D]" : "[B, Sk, H*D]");
  if (Status st = c.expectDims(role, t, {batch, length, view.rowStride},
                               "the buffer [B, S, " + std::string(role) +
                                   "_row_stride] its view reads");
      !st)
    return st;
  if (view.offset > view.rowStride - width)
    return c.error(std::string(role) + " view at offset " +
                   std::to_string(view.offset) + " of " +
                   std::to_string(width) + " elements (H*D) ends past its " +
                   "row stride " + std::to_string(view.rowStride));
  return Status::ok();
}

/// A key or value that is a view of a state is read at the state's
/// capacity along `axis`; 0 for a dense operand.
static Status getCapacity(const CudaCheck &c, const char *role,
                          const PlanTensor &t, size_t axis, int64_t &capacity) {
  capacity = 0;
  if (t.storage != TensorStorage::State)
    return Status::ok();
  const PlanState &state = c.program.states[size_t(t.offset)];
  for (size_t d = 1; d < t.dims.size(); ++d)
    if (d != axis && t.dims[d] != state.dims[d])
      return c.error(std::string(role) + " " + describe(t) +
                     " is a view of state '" + state.name + "' " +
                     formatDims(state.dims) + " that differs from it in dim " +
                     std::to_string(d) +
                     "; only the batch and key length may be shorter");
  if (c.step.findAttr(std::string(role) + "_row_stride"))
    return c.error(std::string(role) + " is a view of state '" + state.name +
                   "' and of a wider buffer at once");
  capacity = state.dims[axis];
  return Status::ok();
}

/// Attributes, operand dtypes and dims, as the CPU reads them.
static Status readShape(const CudaCheck &c, Shape &s) {
  if (Status st = c.expectAttrs(
          {"num_heads", "scale", "causal", "kv_heads_split", "zero_masked_rows",
           "query_offset", "query_row_stride", "key_offset", "key_row_stride",
           "value_offset", "value_row_stride"});
      !st)
    return st;
  if (Status st = c.getInt("num_heads", s.heads); !st)
    return st;
  if (Status st = c.step.getFloat("scale", s.scale); !st)
    return c.withSource(st);
  if (Status st = c.getFlag("causal", s.causal); !st)
    return st;
  if (Status st = c.getFlag("kv_heads_split", s.kvHeadsSplit); !st)
    return st;
  if (Status st = c.getFlag("zero_masked_rows", s.zeroMaskedRows); !st)
    return st;
  for (auto [role, view] :
       {std::pair<const char *, View *>{"query", &s.queryView},
        {"key", &s.keyView},
        {"value", &s.valueView}})
    if (Status st = getView(c, role, *view); !st)
      return st;
  if (s.kvHeadsSplit && (s.keyView.rowStride || s.valueView.rowStride))
    return c.error(std::string(s.keyView.rowStride ? "key" : "value") +
                   " is a view, which kv_heads_split does not allow (key "
                   "and value are dense [B, H, Sk, D])");
  bool hasMask = c.step.operands.size() == 4;
  if (Status st = c.expectCounts(
          hasMask ? 4 : 3,
          hasMask ? "query, key, value, mask" : "query, key, value", 1);
      !st)
    return st;

  const PlanTensor &query = c.operand(0), &key = c.operand(1),
                   &value = c.operand(2), &output = c.result(0);
  if (query.dtype != DType::F32 && query.dtype != DType::F16 &&
      query.dtype != DType::BF16)
    return c.error("query " + describe(query) + " has dtype " +
                   dtypeName(query.dtype) + "; expected f32, f16 or bf16");
  for (auto [role, t] :
       {std::pair<const char *, const PlanTensor *>{"key", &key},
        {"value", &value},
        {"output", &output}})
    if (t->dtype != query.dtype)
      return c.error(std::string(role) + " " + describe(*t) + " has dtype " +
                     dtypeName(t->dtype) + "; expected " +
                     dtypeName(query.dtype) + ", the query's");
  if (Status st = c.expectRank("query", query, 3); !st)
    return st;
  const bool queryView = s.queryView.rowStride != 0;
  if (queryView)
    if (Status st = c.expectRank("output", output, 3); !st)
      return st;
  const PlanTensor &rows = queryView ? output : query;
  const int64_t width = rows.dims[2];
  if (s.heads <= 0 || width % s.heads != 0)
    return c.error((queryView ? "output " : "query ") + describe(rows) +
                   " has " + std::to_string(width) +
                   " features, not a positive multiple of num_heads = " +
                   std::to_string(s.heads));
  s.batch = query.dims[0];
  s.queryLength = query.dims[1];
  s.headDim = width / s.heads;
  if (Status st = expectRows(c, "query", query, s.queryView, s.batch,
                             s.queryLength, width);
      !st)
    return st;
  if (Status st = c.expectRank("key", key, s.kvHeadsSplit ? 4 : 3); !st)
    return st;
  s.keyLength = key.dims[s.kvHeadsSplit ? 2 : 1];
  if (s.kvHeadsSplit) {
    std::vector<int64_t> kvDims = {s.batch, s.heads, s.keyLength, s.headDim};
    const char *layout = "[B, H, Sk, D] with kv_heads_split";
    if (Status st = c.expectDims("key", key, kvDims, layout); !st)
      return st;
    if (Status st = c.expectDims("value", value, kvDims, layout); !st)
      return st;
  } else {
    if (Status st =
            expectRows(c, "key", key, s.keyView, s.batch, s.keyLength, width);
        !st)
      return st;
    if (Status st = expectRows(c, "value", value, s.valueView, s.batch,
                               s.keyLength, width);
        !st)
      return st;
  }
  if (Status st =
          c.expectDims("output", output, {s.batch, s.queryLength, width},
                       "[B, Sq, H*D], the query's rows");
      !st)
    return st;
  size_t kvAxis = s.kvHeadsSplit ? 2 : 1;
  if (Status st = getCapacity(c, "key", key, kvAxis, s.keyCapacity); !st)
    return st;
  return getCapacity(c, "value", value, kvAxis, s.valueCapacity);
}

/// Sizes, scale and the kernels' limits (the CPU's AttentionStep::create
/// checks, and what the grid and 32-bit row numbers allow).
static Status checkSizes(const CudaCheck &c, const Shape &s) {
  const std::string sizes = "batch " + std::to_string(s.batch) + ", heads " +
                            std::to_string(s.heads) + ", query length " +
                            std::to_string(s.queryLength) + ", key length " +
                            std::to_string(s.keyLength) + ", head dim " +
                            std::to_string(s.headDim);
  if (s.batch <= 0 || s.heads <= 0 || s.queryLength <= 0 || s.keyLength <= 0 ||
      s.headDim <= 0)
    return c.error("sizes must be positive, got " + sizes,
                   StatusCode::InvalidArgument);
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

/// Reads the mask operand: its kind and its element strides over
/// [B, H, Sq, Sk] (numpy broadcasting, aligned on the right).
static Status readMask(const CudaCheck &c, const Shape &s, AttentionParams &p) {
  p.maskKind = lmopt_kernels::kMaskNone;
  if (c.step.operands.size() != 4)
    return Status::ok();
  const PlanTensor &mask = c.operand(3);
  if (mask.dtype == DType::F32)
    p.maskKind = lmopt_kernels::kMaskAdditive;
  else if (mask.dtype == DType::Bool)
    p.maskKind = lmopt_kernels::kMaskBool;
  else
    return c.error("mask " + describe(mask) + " has dtype " +
                   dtypeName(mask.dtype) + "; expected f32 (additive) or bool");
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
  Shape s;
  if (Status st = readShape(c, s); !st)
    return st;
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
