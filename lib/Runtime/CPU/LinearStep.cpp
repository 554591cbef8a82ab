//===- LinearStep.cpp - lmopt.linear as one oneDNN matmul -----------------===//
//
// Written against oneDNN's C API: every call returns a status that becomes a
// Status here, whatever the compiler's exception setting, and nothing can
// throw through the runtime's C API.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/LinearStep.h"

#include "AmxGemm.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#include <omp.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace lmopt::runtime;

namespace {

/// Owns a oneDNN C handle; `Destroy` is its dnnl_*_destroy function.
template <typename T, dnnl_status_t (*Destroy)(T)> class Handle {
public:
  Handle() = default;
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  ~Handle() {
    if (value)
      Destroy(value);
  }
  T *put() { return &value; }
  T get() const { return value; }
  void reset(T v) {
    if (value)
      Destroy(value);
    value = v;
  }
  T release() {
    T v = value;
    value = nullptr;
    return v;
  }

private:
  T value = nullptr;
};

using MemoryHandle = Handle<dnnl_memory_t, dnnl_memory_destroy>;
using AttrHandle = Handle<dnnl_primitive_attr_t, dnnl_primitive_attr_destroy>;
using PostOpsHandle = Handle<dnnl_post_ops_t, dnnl_post_ops_destroy>;
using PrimitiveDescHandle =
    Handle<dnnl_primitive_desc_t, dnnl_primitive_desc_destroy>;

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
/// Sets the calling thread's OpenMP team size for one execution. oneDNN's
/// OpenMP build sizes its parallel regions by omp_get_max_threads(), which is
/// per thread, so two sessions on two threads keep their own settings.
class ScopedThreads {
public:
  explicit ScopedThreads(int threads)
      : saved(threads > 0 ? omp_get_max_threads() : 0) {
    if (threads > 0)
      omp_set_num_threads(threads);
  }
  ~ScopedThreads() {
    if (saved > 0)
      omp_set_num_threads(saved);
  }

private:
  int saved;
};
#else
class ScopedThreads {
public:
  explicit ScopedThreads(int) {}
};
#endif

} // namespace

static std::string quoted(const std::string &name) { return "'" + name + "'"; }

/// "<what> failed: <oneDNN status>" as an error, or ok.
static Status check(dnnl_status_t st, const std::string &prefix,
                    const char *what) {
  if (st == dnnl_success)
    return Status::ok();
  StatusCode code = st == dnnl_unimplemented       ? StatusCode::Unsupported
                    : st == dnnl_invalid_arguments ? StatusCode::InvalidArgument
                                                   : StatusCode::InvalidFormat;
  return Status::error(code, prefix + "oneDNN " + what +
                                 " failed: " + dnnl_status2str(st));
}

static bool mulOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}

/// A dense 2-D memory descriptor with explicit strides (`rows` may be
/// DNNL_RUNTIME_DIM_VAL).
static dnnl_status_t initMatrix(dnnl_memory_desc_t &md, int64_t rows,
                                int64_t cols, int64_t rowStride,
                                int64_t colStride,
                                dnnl_data_type_t type = dnnl_f32) {
  dnnl_dims_t dims = {rows, cols};
  dnnl_dims_t strides = {rowStride, colStride};
  return dnnl_memory_desc_init_by_strides(&md, 2, dims, type, strides);
}

/// The four plain row-major descriptors of a linear with `rows` rows (a
/// concrete count, or DNNL_RUNTIME_DIM_VAL when building the primitive); a
/// [N, K] weight is read as [K, N] through its strides, and a [K, rows]
/// input (transposeInput) as [rows, K], so the primitive uses the stored
/// bytes as they are.
static dnnl_status_t
initLinearDescs(dnnl_memory_desc_t &srcMd, dnnl_memory_desc_t &weightMd,
                dnnl_memory_desc_t &biasMd, dnnl_memory_desc_t &dstMd,
                int64_t rows, int64_t k, int64_t n,
                const LinearStepDesc &desc) {
  dnnl_data_type_t type = desc.bf16Operands ? dnnl_bf16 : dnnl_f32;
  dnnl_status_t st = desc.transposeInput
                         ? initMatrix(srcMd, rows, k, 1, rows, type)
                         : initMatrix(srcMd, rows, k, k, 1, type);
  if (st == dnnl_success)
    st = desc.transposeWeight ? initMatrix(weightMd, k, n, 1, k, type)
                              : initMatrix(weightMd, k, n, n, 1, type);
  if (st == dnnl_success)
    st = initMatrix(biasMd, 1, n, n, 1);
  if (st == dnnl_success)
    st = initMatrix(dstMd, rows, n, n, 1);
  return st;
}

//===----------------------------------------------------------------------===//
// CpuContext
//===----------------------------------------------------------------------===//

CpuContext::~CpuContext() {
  std::free(scratch_);
  if (stream_)
    dnnl_stream_destroy(stream_);
  if (engine_)
    dnnl_engine_destroy(engine_);
}

void *CpuContext::sharedScratch(size_t bytes) const {
  if (bytes <= scratchBytes_ && scratch_)
    return scratch_;
  void *p = nullptr;
  if (posix_memalign(&p, 64, std::max<size_t>(64, bytes)) != 0)
    return nullptr;
  std::free(scratch_);
  scratch_ = p;
  scratchBytes_ = bytes;
  return scratch_;
}

Status CpuContext::create(const Options &options,
                          std::unique_ptr<CpuContext> &out) {
  if (options.threads < 0)
    return Status::error(StatusCode::InvalidArgument,
                         "cpu context: thread count " +
                             std::to_string(options.threads) +
                             " is negative (0 keeps the default)");
#if DNNL_CPU_THREADING_RUNTIME != DNNL_RUNTIME_OMP
  if (options.threads > 1)
    return Status::error(StatusCode::Unsupported,
                         "cpu context: " + std::to_string(options.threads) +
                             " threads requested but this oneDNN build is "
                             "not built with OpenMP");
#endif
  std::unique_ptr<CpuContext> ctx(new CpuContext());
  ctx->threads_ = options.threads;
  if (Status st = check(dnnl_engine_create(&ctx->engine_, dnnl_cpu, 0),
                        "cpu context: ", "engine creation");
      !st)
    return st;
  if (Status st = check(dnnl_stream_create(&ctx->stream_, ctx->engine_,
                                           dnnl_stream_default_flags),
                        "cpu context: ", "stream creation");
      !st)
    return st;
  out = std::move(ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// LinearStep
//===----------------------------------------------------------------------===//

const char *lmopt::runtime::linearActivationName(LinearActivation activation) {
  switch (activation) {
  case LinearActivation::None:
    return "none";
  case LinearActivation::Relu:
    return "relu";
  case LinearActivation::Gelu:
    return "gelu";
  case LinearActivation::GeluTanh:
    return "gelu_tanh";
  }
  return "invalid";
}

struct LinearStep::Amx {
  /// The sizes of the weight's tile layout; its bytes, a transposed input
  /// and the K-padded input copy live in the context's shared scratch.
  quant::AmxWeight weight;
};

LinearStep::LinearStep(const CpuContext &context) : context_(context) {}

LinearStep::~LinearStep() {
  if (packedMemory_)
    dnnl_memory_destroy(packedMemory_);
  std::free(packedWeight_);
  if (primitive_)
    dnnl_primitive_destroy(primitive_);
}

/// Checks the desc and the bound; sets k and n.
static Status validateDesc(const LinearStepDesc &desc, int64_t maxRows,
                           const std::string &prefix, int64_t &k, int64_t &n) {
  const std::vector<int64_t> &ws = desc.weightShape;
  if (ws.size() != 2)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "weight must have rank 2, got shape " +
                             formatDims(ws));
  if (ws[0] <= 0 || ws[1] <= 0 || desc.inputFeatures <= 0)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "dims must be positive, got input features " +
                             std::to_string(desc.inputFeatures) +
                             " and weight " + formatDims(ws));
  if (maxRows <= 0)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "row bound must be positive, got " +
                             std::to_string(maxRows));
  int activation = static_cast<int>(desc.activation);
  if (activation < 0 || activation > 3)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "unknown activation " +
                             std::to_string(activation));
  k = desc.transposeWeight ? ws[1] : ws[0];
  n = desc.transposeWeight ? ws[0] : ws[1];
  if (k != desc.inputFeatures)
    return Status::error(
        StatusCode::InvalidArgument,
        prefix + "input has " + std::to_string(desc.inputFeatures) +
            " features but weight " + formatDims(ws) +
            (desc.transposeWeight ? " (transposed, [N, K])" : " ([K, N])") +
            " has K = " + std::to_string(k));
  // Every buffer's byte size must fit in int64 so that oneDNN's offsets do.
  int64_t elems = 0;
  if (mulOverflows(maxRows, k, elems) || elems > INT64_MAX / 4 ||
      mulOverflows(maxRows, n, elems) || elems > INT64_MAX / 4 ||
      mulOverflows(k, n, elems) || elems > INT64_MAX / 4)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "sizes overflow: " + std::to_string(maxRows) +
                             " rows, K = " + std::to_string(k) +
                             ", N = " + std::to_string(n));
  return Status::ok();
}

/// Builds the primitive descriptor with the desc's activation and, when
/// `residualPostOp`, the residual as a sum post-op; `impl` gets oneDNN's name
/// of the implementation it chose.
static Status selectPrimitive(const CpuContext &context,
                              const LinearStepDesc &desc,
                              const dnnl_matmul_desc_t &matmulDesc,
                              bool residualPostOp, const std::string &prefix,
                              PrimitiveDescHandle &pd, std::string &impl) {
  PostOpsHandle postOps;
  AttrHandle attr;
  dnnl_status_t st = dnnl_post_ops_create(postOps.put());
  if (st == dnnl_success && desc.activation != LinearActivation::None) {
    dnnl_alg_kind_t alg =
        desc.activation == LinearActivation::Relu   ? dnnl_eltwise_relu
        : desc.activation == LinearActivation::Gelu ? dnnl_eltwise_gelu_erf
                                                    : dnnl_eltwise_gelu_tanh;
    st = dnnl_post_ops_append_eltwise(postOps.get(), 1.0f, alg, 0.0f, 0.0f);
  }
  // The residual is a sum post-op: the output is accumulated onto what it
  // holds. oneDNN 2.6 refuses a binary-add post-op whose operand has the
  // run-time row count, so run() copies the residual into the output unless
  // the plan already put it there.
  if (st == dnnl_success && residualPostOp)
    st = dnnl_post_ops_append_sum(postOps.get(), 1.0f);
  if (st == dnnl_success)
    st = dnnl_primitive_attr_create(attr.put());
  if (st == dnnl_success)
    st = dnnl_primitive_attr_set_post_ops(attr.get(), postOps.get());
  if (Status s = check(st, prefix, "post-op setup"); !s)
    return s;

  st = dnnl_primitive_desc_create(pd.put(), &matmulDesc, attr.get(),
                                  context.engine(), nullptr);
  if (st != dnnl_success)
    return check(st,
                 prefix + "activation " +
                     linearActivationName(desc.activation) +
                     (residualPostOp ? " with residual" : "") + ": ",
                 "matmul primitive selection");
  const char *name = nullptr;
  if (dnnl_primitive_desc_query(pd.get(), dnnl_query_impl_info_str, 0, &name) ==
          dnnl_success &&
      name)
    impl = name;
  return Status::ok();
}

Status LinearStep::create(const CpuContext &context, const LinearStepDesc &desc,
                          int64_t maxRows, std::unique_ptr<LinearStep> &out) {
  return build(context, desc, maxRows, nullptr, out);
}

Status LinearStep::createPacked(const CpuContext &context,
                                const LinearStepDesc &desc, int64_t rows,
                                const float *weight,
                                std::unique_ptr<LinearStep> &out) {
  if (!weight)
    return Status::error(StatusCode::InvalidArgument,
                         "linear step " + quoted(desc.name) +
                             ": null weight pointer to pack");
  return build(context, desc, rows, weight, out);
}

/// Reorders the plain weight described by `plainMd` at `weight` into
/// `packedMd`, in a new 64-byte aligned buffer owned by the caller.
static Status packWeight(const CpuContext &context,
                         const dnnl_memory_desc_t &plainMd,
                         const dnnl_memory_desc_t &packedMd,
                         const float *weight, const std::string &prefix,
                         void *&buffer, uint64_t &bytes) {
  size_t size = dnnl_memory_desc_get_size(&packedMd);
  void *data = nullptr;
  if (size == 0 || posix_memalign(&data, 64, (size + 63) / 64 * 64) != 0 ||
      !data)
    return Status::error(StatusCode::IoError,
                         prefix + "cannot allocate " + std::to_string(size) +
                             " bytes for the packed weight");
  dnnl_engine_t engine = context.engine();
  PrimitiveDescHandle reorderPd;
  Handle<dnnl_primitive_t, dnnl_primitive_destroy> reorder;
  MemoryHandle from, to;
  dnnl_status_t st = dnnl_reorder_primitive_desc_create(
      reorderPd.put(), &plainMd, engine, &packedMd, engine, nullptr);
  if (st == dnnl_success)
    st = dnnl_primitive_create(reorder.put(), reorderPd.get());
  if (st == dnnl_success)
    st = dnnl_memory_create(from.put(), &plainMd, engine,
                            const_cast<float *>(weight));
  if (st == dnnl_success)
    st = dnnl_memory_create(to.put(), &packedMd, engine, data);
  if (st == dnnl_success) {
    ScopedThreads threads(context.threads());
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from.get()},
                               {DNNL_ARG_TO, to.get()}};
    st = dnnl_primitive_execute(reorder.get(), context.stream(), 2, args);
    if (st == dnnl_success)
      st = dnnl_stream_wait(context.stream());
  }
  if (st != dnnl_success) {
    std::free(data);
    return check(st, prefix, "weight reorder");
  }
  buffer = data;
  bytes = size;
  return Status::ok();
}

Status LinearStep::build(const CpuContext &context, const LinearStepDesc &desc,
                         int64_t rows, const float *weight,
                         std::unique_ptr<LinearStep> &out) {
  const std::string prefix = "linear step " + quoted(desc.name) + ": ";
  int64_t k = 0, n = 0;
  if (Status st = validateDesc(desc, rows, prefix, k, n); !st)
    return st;

  // Without a weight to pack, the row count is a run-time dim and the weight
  // is described as stored; with one, the rows are fixed and oneDNN chooses
  // the weight's layout.
  bool packing = weight != nullptr;
  if (packing && desc.bf16Operands)
    return Status::error(StatusCode::Unsupported,
                         prefix + "packs f32 weights only, not bf16");
  if (desc.bf16Operands && !packing && quant::amxBf16Usable()) {
    // The runtime's tile kernel: ahead of oneDNN 2.6's bf16 matmul, which
    // also repacks a weight it reads in place on every call.
    std::unique_ptr<LinearStep> step(new LinearStep(context));
    auto amx = std::make_unique<Amx>();
    quant::layoutAmxBf16(k, n, amx->weight);
    step->amx_ = std::move(amx);
    step->desc_ = desc;
    step->maxRows_ = rows;
    step->k_ = k;
    step->n_ = n;
    step->implementation_ = "lmopt:amx_bf16";
    out = std::move(step);
    return Status::ok();
  }
  dnnl_memory_desc_t srcMd, weightMd, biasMd, dstMd, anyWeightMd;
  // A transposed input's row stride is the row count: fixed at build time.
  bool fixedRows = packing || desc.transposeInput;
  dnnl_status_t st = initLinearDescs(srcMd, weightMd, biasMd, dstMd,
                                     fixedRows ? rows : DNNL_RUNTIME_DIM_VAL,
                                     k, n, desc);
  if (st == dnnl_success && packing) {
    dnnl_dims_t dims = {k, n};
    st = dnnl_memory_desc_init_by_tag(&anyWeightMd, 2, dims, dnnl_f32,
                                      dnnl_format_tag_any);
  }
  if (Status s = check(st, prefix, "memory descriptor setup"); !s)
    return s;

  dnnl_matmul_desc_t matmulDesc;
  if (Status s =
          check(dnnl_matmul_desc_init(&matmulDesc, &srcMd,
                                      packing ? &anyWeightMd : &weightMd,
                                      desc.hasBias ? &biasMd : nullptr, &dstMd),
                prefix, "matmul descriptor setup");
      !s)
    return s;

  PrimitiveDescHandle pd;
  std::string impl;
  bool residualAfter = false;
  if (Status s = selectPrimitive(context, desc, matmulDesc, desc.hasResidual,
                                 prefix, pd, impl);
      !s)
    return s;
  // oneDNN 2.6's fast matmul takes an activation or a sum, not both: with
  // both it falls back to its reference kernel (~1000x slower at BERT
  // shapes). Then the primitive keeps the activation and run() adds the
  // residual in one pass over the output.
  if (desc.hasResidual && desc.activation != LinearActivation::None &&
      impl.rfind("ref", 0) == 0) {
    PrimitiveDescHandle fastPd;
    std::string fastImpl;
    if (Status s = selectPrimitive(context, desc, matmulDesc, false, prefix,
                                   fastPd, fastImpl);
        !s)
      return s;
    if (fastImpl.rfind("ref", 0) != 0) {
      pd.reset(fastPd.release());
      impl = fastImpl;
      residualAfter = true;
    }
  }

  std::unique_ptr<LinearStep> step(new LinearStep(context));
  if (Status s = check(dnnl_primitive_create(&step->primitive_, pd.get()),
                       prefix, "matmul primitive creation");
      !s)
    return s;
  if (packing) {
    const dnnl_memory_desc_t *packedMd =
        dnnl_primitive_desc_query_md(pd.get(), dnnl_query_weights_md, 0);
    if (!packedMd)
      return Status::error(StatusCode::InvalidFormat,
                           prefix + "oneDNN chose no weight layout");
    if (Status s = packWeight(context, weightMd, *packedMd, weight, prefix,
                              step->packedWeight_, step->packedBytes_);
        !s)
      return s;
    if (Status s =
            check(dnnl_memory_create(&step->packedMemory_, packedMd,
                                     context.engine(), step->packedWeight_),
                  prefix, "memory creation");
        !s)
      return s;
  }
  step->desc_ = desc;
  step->maxRows_ = rows;
  step->k_ = k;
  step->n_ = n;
  step->residualAfter_ = residualAfter;
  step->implementation_ = residualAfter ? impl + " + residual pass" : impl;
  out = std::move(step);
  return Status::ok();
}

/// Checks that an optional operand is passed exactly when the desc has it.
static Status checkOptional(const void *ptr, bool expected, const char *what,
                            const std::string &prefix) {
  if (expected && !ptr)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "has a " + what + " but none was passed");
  if (!expected && ptr)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "has no " + what + " but one was passed");
  return Status::ok();
}

Status LinearStep::run(const void *input, int64_t rows, const void *weight,
                       const float *bias, const float *residual,
                       float *output) const {
  const std::string prefix = "linear step " + quoted(desc_.name) + ": ";
  if (rows < 0 || rows > maxRows_)
    return Status::error(
        StatusCode::InvalidArgument,
        prefix + std::to_string(rows) + " rows is outside the bound [0, " +
            std::to_string(maxRows_) + "] the step was created for");
  if ((packed() || desc_.transposeInput) && rows != 0 && rows != maxRows_)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + std::to_string(rows) + " rows, but the step "
                             "was built " +
                             (packed() ? "with packed weights"
                                       : "to read its input transposed") +
                             " for exactly " + std::to_string(maxRows_));
  if (!input || (!weight && !packed()) || !output)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + std::string("null ") +
                             (!input    ? "input"
                              : !output ? "output"
                                        : "weight") +
                             " pointer");
  if (Status st = checkOptional(bias, desc_.hasBias, "bias", prefix); !st)
    return st;
  if (Status st =
          checkOptional(residual, desc_.hasResidual, "residual", prefix);
      !st)
    return st;
  if (rows == 0)
    return Status::ok();
  const size_t bytes = size_t(rows * n_) * sizeof(float);
  if (residual && residual != output) {
    auto begin = [](const float *p) { return reinterpret_cast<uintptr_t>(p); };
    if (begin(residual) < begin(output) + bytes &&
        begin(output) < begin(residual) + bytes)
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "residual partially overlaps the output (" +
                               std::to_string(rows) + " x " +
                               std::to_string(n_) + " f32)");
  }
  if (amx_)
    return runAmx(static_cast<const uint16_t *>(input), rows,
                  static_cast<const uint16_t *>(weight), bias, residual, output,
                  prefix);
  // With the residual added after the primitive, an in-place residual is
  // saved before the primitive overwrites it; otherwise a residual elsewhere
  // is copied into the output, which the primitive's sum post-op adds to.
  std::vector<float> savedResidual;
  if (residualAfter_ && residual == output) {
    savedResidual.assign(residual, residual + rows * n_);
    residual = savedResidual.data();
  }
  if (residual && residual != output && !residualAfter_)
    std::memcpy(output, residual, bytes);

  dnnl_memory_desc_t srcMd, weightMd, biasMd, dstMd;
  dnnl_status_t st =
      initLinearDescs(srcMd, weightMd, biasMd, dstMd, rows, k_, n_, desc_);
  if (Status s = check(st, prefix, "memory descriptor setup"); !s)
    return s;

  // oneDNN takes non-const handles; it writes only the destination.
  dnnl_engine_t engine = context_.engine();
  MemoryHandle src, wei, bia, dst;
  st = dnnl_memory_create(src.put(), &srcMd, engine, const_cast<void *>(input));
  if (st == dnnl_success && !packed())
    st = dnnl_memory_create(wei.put(), &weightMd, engine,
                            const_cast<void *>(weight));
  if (st == dnnl_success && bias)
    st = dnnl_memory_create(bia.put(), &biasMd, engine,
                            const_cast<float *>(bias));
  if (st == dnnl_success)
    st = dnnl_memory_create(dst.put(), &dstMd, engine, output);
  if (Status s = check(st, prefix, "memory creation"); !s)
    return s;

  dnnl_exec_arg_t args[4];
  int nargs = 0;
  args[nargs++] = {DNNL_ARG_SRC, src.get()};
  args[nargs++] = {DNNL_ARG_WEIGHTS, packed() ? packedMemory_ : wei.get()};
  if (bias)
    args[nargs++] = {DNNL_ARG_BIAS, bia.get()};
  args[nargs++] = {DNNL_ARG_DST, dst.get()};

  ScopedThreads threads(context_.threads());
  st = dnnl_primitive_execute(primitive_, context_.stream(), nargs, args);
  if (st == dnnl_success)
    st = dnnl_stream_wait(context_.stream());
  if (st != dnnl_success)
    return check(st,
                 prefix + std::to_string(rows) + " rows: ", "matmul execution");
  if (residualAfter_) {
    size_t count = size_t(rows * n_);
    for (size_t i = 0; i < count; ++i)
      output[i] += residual[i];
  }
  return Status::ok();
}

Status LinearStep::runAmx(const uint16_t *input, int64_t rows,
                          const uint16_t *weight, const float *bias,
                          const float *residual, float *output,
                          const std::string &prefix) const {
  const int threads = context_.threads();
  quant::AmxWeight &w = amx_->weight;
  auto aligned = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  const size_t weightBytes = aligned(w.bytes());
  const size_t transposedBytes =
      desc_.transposeInput ? aligned(size_t(rows * k_) * sizeof(uint16_t)) : 0;
  const size_t padBytes = aligned(quant::amxScratchBytes(rows, w));
  uint8_t *scratch = static_cast<uint8_t *>(
      context_.sharedScratch(weightBytes + transposedBytes + padBytes));
  if (!scratch)
    return Status::error(
        StatusCode::IoError,
        prefix + "out of memory: cannot allocate " +
            std::to_string(weightBytes + transposedBytes + padBytes) +
            " bytes of scratch for the tile layout");
  w.data = scratch;
  quant::repackAmxBf16(weight, desc_.transposeWeight, w, threads);
  if (desc_.transposeInput) {
    uint16_t *to = reinterpret_cast<uint16_t *>(scratch + weightBytes);
    quant::transposeBf16(input, k_, rows, to, threads);
    input = to;
  }
  quant::Epilogue e;
  e.bias = bias;
  e.activation = desc_.activation;
  e.residual = residual;
  quant::gemmAmxBf16(input, rows, w, e, output, threads,
                     scratch + weightBytes + transposedBytes);
  return Status::ok();
}
