//===- QuantLinearStep.cpp - Low-bit lmopt.linear on the CPU --------------===//
//
// Written against oneDNN's C API, like LinearStep.cpp: every oneDNN call's
// status becomes a Status and nothing throws.
//
// Why the int8 epilogue is not a oneDNN post-op: oneDNN 2.6's output scales
// are per column only, and a binary-mul post-op with a [rows, 1] scale makes
// it fall back to its reference int8 kernel ("ref_int8:any", ~100x slower);
// run-time output scales likewise move it from brgemm (AMX) to "gemm:jit".
// So the primitive applies the constant per-column weight scales (the only
// scale it takes on its fast path) and writes f32, and one pass afterwards
// applies the per-row (or per-tensor) input scale, bias, activation and
// residual, in that order, which is the order the semantics need.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/QuantLinearStep.h"

#include "AmxGemm.h"
#include "QuantKernels.h"
#include "QuantLinearDesc.h"
#include "WeightOnlyGemm.h"
#include "lmopt/Runtime/CPU/Executor.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace lmopt::runtime;

namespace {

/// Owns a oneDNN C handle; `Destroy` is its dnnl_*_destroy function.
template <typename T, dnnl_status_t (*Destroy)(T)> struct DnnlOwner {
  T value = nullptr;
  DnnlOwner() = default;
  DnnlOwner(const DnnlOwner &) = delete;
  DnnlOwner &operator=(const DnnlOwner &) = delete;
  ~DnnlOwner() {
    if (value)
      Destroy(value);
  }
};

using OwnedMemory = DnnlOwner<dnnl_memory_t, dnnl_memory_destroy>;
using OwnedPrimitive = DnnlOwner<dnnl_primitive_t, dnnl_primitive_destroy>;
using OwnedPd = DnnlOwner<dnnl_primitive_desc_t, dnnl_primitive_desc_destroy>;
using OwnedAttr = DnnlOwner<dnnl_primitive_attr_t, dnnl_primitive_attr_destroy>;
using OwnedPostOps = DnnlOwner<dnnl_post_ops_t, dnnl_post_ops_destroy>;

/// A 64-byte aligned buffer.
struct Aligned {
  void *data = nullptr;
  size_t bytes = 0;
  Aligned() = default;
  Aligned(const Aligned &) = delete;
  Aligned &operator=(const Aligned &) = delete;
  ~Aligned() { std::free(data); }
  bool allocate(size_t size) {
    bytes = size;
    return posix_memalign(&data, 64, std::max<size_t>(64, (size + 63) / 64 * 64)) ==
               0 &&
           data;
  }
  template <typename T> T *as() const { return static_cast<T *>(data); }
};

/// Sets the calling thread's OpenMP team size for one execution (oneDNN's
/// OpenMP build sizes its regions by omp_get_max_threads()).
class TeamSize {
public:
  explicit TeamSize(int threads)
      : saved(threads > 0 ? omp_get_max_threads() : 0) {
    if (threads > 0)
      omp_set_num_threads(threads);
  }
  ~TeamSize() {
    if (saved > 0)
      omp_set_num_threads(saved);
  }

private:
  int saved;
};

} // namespace

struct QuantLinearStep::Impl {
  bool avx512 = false;
  /// oneDNN form (int8, bf16).
  OwnedPrimitive primitive;
  Aligned packedWeight;
  OwnedMemory weight, src, dst, bias, srcZeroPoint;
  /// With bf16: the residual is a sum post-op (else added afterwards).
  bool residualPostOp = false;
  /// int8 scratch: the quantized input, row scales, and (with an in-place
  /// residual) the scaled product; otherwise the product is the output.
  Aligned quantized, rowScales, product;
  /// int8 weight zero points: scale[n] * (zero point[n] - 128 for u8), and
  /// the per-row sums of the zero-point-shifted input they multiply.
  std::vector<float> columnShift;
  Aligned rowSums;
  int32_t zeroPoint = 0;
  /// Weight-only forms (int4, fp16): the packed weight, and scratch for
  /// the regrouped input, sized for `gemmThreads` threads (the product goes
  /// to `product`).
  quant::Int4Panels int4;
  quant::F16Panels f16;
  /// bf16 and int8 on AMX tiles (AmxGemm.h): the packed weight and, when K
  /// is not a multiple of the tile step, room for the input with K padded.
  quant::AmxWeight amx;
  Aligned amxScratch;
  /// int8 on AMX: the weight's scales (N, or one); with an input zero
  /// point, the zero point times the (shifted) weight's column sums, which
  /// the kernel subtracts from its i32 sums (static: once; per tensor: each
  /// run, from the column sums, since the zero point is the run's).
  std::vector<float> weightScales;
  std::vector<int32_t> weightColumnSums, columnOffsets;
  Aligned gemmInput;
  int gemmThreads = 1;
};

QuantLinearStep::QuantLinearStep(const CpuContext &context)
    : context_(context) {}

QuantLinearStep::~QuantLinearStep() = default;

static Status dnnlCheck(dnnl_status_t st, const std::string &prefix,
                        const char *what) {
  if (st == dnnl_success)
    return Status::ok();
  StatusCode code = st == dnnl_unimplemented ? StatusCode::Unsupported
                                             : StatusCode::InvalidArgument;
  return Status::error(code, prefix + "oneDNN " + what +
                                 " failed: " + dnnl_status2str(st));
}

static dnnl_status_t initPlain(dnnl_memory_desc_t &md, int64_t rows,
                               int64_t cols, dnnl_data_type_t dt,
                               int64_t rowStride, int64_t colStride) {
  dnnl_dims_t dims = {rows, cols};
  dnnl_dims_t strides = {rowStride, colStride};
  return dnnl_memory_desc_init_by_strides(&md, 2, dims, dt, strides);
}

/// The weight as stored ([K, N], or [N, K] read through strides) and the
/// same dims in the layout oneDNN chooses (`any`).
static dnnl_status_t initWeightMds(const QuantLinearStepDesc &d,
                                   dnnl_data_type_t dt,
                                   dnnl_memory_desc_t &plainMd,
                                   dnnl_memory_desc_t &anyMd) {
  const int64_t k = d.inputFeatures, n = d.outputFeatures;
  dnnl_dims_t dims = {k, n};
  dnnl_status_t st = d.transposeWeight ? initPlain(plainMd, k, n, dt, 1, k)
                                       : initPlain(plainMd, k, n, dt, n, 1);
  if (st == dnnl_success)
    st = dnnl_memory_desc_init_by_tag(&anyMd, 2, dims, dt, dnnl_format_tag_any);
  return st;
}

/// Reorders the plain weight into the layout the primitive chose, into
/// `impl.packedWeight`, and wraps it in `impl.weight`.
static Status packForPrimitive(const CpuContext &context,
                               dnnl_primitive_desc_t pd,
                               const dnnl_memory_desc_t &plainMd,
                               const void *weight, QuantLinearStep::Impl &impl,
                               const std::string &prefix) {
  const dnnl_memory_desc_t *packedMd =
      dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  if (!packedMd)
    return Status::error(StatusCode::InvalidFormat,
                         prefix + "oneDNN chose no weight layout");
  if (!impl.packedWeight.allocate(dnnl_memory_desc_get_size(packedMd)))
    return Status::error(StatusCode::IoError,
                         prefix + "cannot allocate the packed weight");
  dnnl_engine_t engine = context.engine();
  OwnedPd reorderPd;
  OwnedPrimitive reorder;
  OwnedMemory from;
  dnnl_status_t st = dnnl_reorder_primitive_desc_create(
      &reorderPd.value, &plainMd, engine, packedMd, engine, nullptr);
  if (st == dnnl_success)
    st = dnnl_primitive_create(&reorder.value, reorderPd.value);
  if (st == dnnl_success)
    st = dnnl_memory_create(&from.value, &plainMd, engine,
                            const_cast<void *>(weight));
  if (st == dnnl_success)
    st = dnnl_memory_create(&impl.weight.value, packedMd, engine,
                            impl.packedWeight.data);
  if (st == dnnl_success) {
    TeamSize team(context.threads());
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from.value},
                               {DNNL_ARG_TO, impl.weight.value}};
    st = dnnl_primitive_execute(reorder.value, context.stream(), 2, args);
    if (st == dnnl_success)
      st = dnnl_stream_wait(context.stream());
  }
  return dnnlCheck(st, prefix, "weight reorder");
}

/// The int8 product: src (s8/u8, optional run-time zero point) x s8 weight,
/// times the weight scales, into an f32 scratch product.
static Status createInt8(const CpuContext &context,
                         const QuantLinearStepDesc &d, int64_t rows,
                         const QuantLinearWeights &w,
                         QuantLinearStep::Impl &impl, std::string &implName,
                         const std::string &prefix) {
  const int64_t k = d.inputFeatures, n = d.outputFeatures;
  bool srcSigned = d.mode == QuantLinearMode::Int8DynamicPerToken ||
                   (d.mode == QuantLinearMode::Int8Static && d.inputSigned);
  bool srcZeroPoint = d.mode == QuantLinearMode::Int8DynamicPerTensor ||
                      (d.mode == QuantLinearMode::Int8Static &&
                       d.inputZeroPoint != 0);
  dnnl_memory_desc_t srcMd, plainWeightMd, anyWeightMd, dstMd, zpMd;
  dnnl_dims_t one = {1};
  dnnl_status_t st =
      initPlain(srcMd, rows, k, srcSigned ? dnnl_s8 : dnnl_u8, k, 1);
  if (st == dnnl_success)
    st = initWeightMds(d, dnnl_s8, plainWeightMd, anyWeightMd);
  if (st == dnnl_success)
    st = initPlain(dstMd, rows, n, dnnl_f32, n, 1);
  if (st == dnnl_success)
    st = dnnl_memory_desc_init_by_tag(&zpMd, 1, one, dnnl_s32, dnnl_a);
  if (Status s = dnnlCheck(st, prefix, "memory descriptor setup"); !s)
    return s;

  // The runtime's AMX kernel (AmxGemm.h) where the CPU has AMX-INT8 (an
  // input zero point is subtracted as zp * the weight's column sums);
  // oneDNN's matmul otherwise.
  const bool amx = quant::amxInt8Usable();
  OwnedPd pd;
  if (!amx) {
    dnnl_matmul_desc_t matmul;
    OwnedAttr attr;
    st = dnnl_matmul_desc_init(&matmul, &srcMd, &anyWeightMd, nullptr, &dstMd);
    if (st == dnnl_success)
      st = dnnl_primitive_attr_create(&attr.value);
    if (st == dnnl_success)
      st = dnnl_primitive_attr_set_output_scales(
          attr.value, d.perChannelScales ? n : 1, d.perChannelScales ? 2 : 0,
          w.scales);
    if (st == dnnl_success && srcZeroPoint) {
      int32_t runtime = DNNL_RUNTIME_S32_VAL;
      st = dnnl_primitive_attr_set_zero_points(attr.value, DNNL_ARG_SRC, 1, 0,
                                               &runtime);
    }
    if (st == dnnl_success)
      st = dnnl_primitive_desc_create(&pd.value, &matmul, attr.value,
                                      context.engine(), nullptr);
    if (Status s = dnnlCheck(st, prefix, "int8 matmul primitive selection"); !s)
      return s;
    const char *name = nullptr;
    if (dnnl_primitive_desc_query(pd.value, dnnl_query_impl_info_str, 0,
                                  &name) == dnnl_success &&
        name)
      implName = name;
    if (Status s =
            dnnlCheck(dnnl_primitive_create(&impl.primitive.value, pd.value),
                      prefix, "int8 matmul primitive creation");
        !s)
      return s;
  }
  // u8 weights run as s8 (w - 128); the zero points, shifted alike, are
  // applied in the epilogue as scale * zp * sum_k(input), since oneDNN's
  // fast kernels take no weight zero point.
  std::vector<int8_t> shifted;
  const void *weight = w.weight;
  if (!d.weightSigned) {
    const uint8_t *u = static_cast<const uint8_t *>(w.weight);
    shifted.resize(size_t(k * n));
    for (size_t i = 0; i < shifted.size(); ++i)
      shifted[i] = int8_t(int32_t(u[i]) - 128);
    weight = shifted.data();
  }
  if (d.hasZeroPoints || !d.weightSigned) {
    int64_t count = d.perChannelScales ? n : 1;
    bool any = false;
    impl.columnShift.resize(size_t(n));
    for (int64_t c = 0; c < n; ++c) {
      int64_t i = count == 1 ? 0 : c;
      int32_t zp = 0;
      if (d.hasZeroPoints)
        zp = d.weightSigned ? static_cast<const int8_t *>(w.zeroPoints)[i]
                            : static_cast<const uint8_t *>(w.zeroPoints)[i];
      if (!d.weightSigned)
        zp -= 128;
      impl.columnShift[size_t(c)] = w.scales[i] * float(zp);
      any |= zp != 0;
    }
    if (!any)
      impl.columnShift.clear();
  }
  if (amx) {
    if (!quant::packAmxInt8(static_cast<const int8_t *>(weight),
                            d.transposeWeight, k, n, impl.amx) ||
        !impl.amxScratch.allocate(quant::amxScratchBytes(rows, impl.amx)))
      return Status::error(StatusCode::IoError,
                           prefix + "out of memory: cannot allocate the "
                                    "packed weight");
    impl.weightScales.assign(w.scales, w.scales + (d.perChannelScales ? n : 1));
    if (srcZeroPoint) {
      const int8_t *s8 = static_cast<const int8_t *>(weight);
      std::vector<int32_t> sums(size_t(n), 0);
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t c = 0; c < n; ++c)
          sums[size_t(c)] += s8[d.transposeWeight ? c * k + kk : kk * n + c];
      impl.columnOffsets.resize(size_t(n));
      for (int64_t c = 0; c < n; ++c)
        impl.columnOffsets[size_t(c)] = d.inputZeroPoint * sums[size_t(c)];
      if (d.mode == QuantLinearMode::Int8DynamicPerTensor)
        impl.weightColumnSums = std::move(sums);
    }
    implName = "lmopt:amx_int8";
  } else if (Status s = packForPrimitive(context, pd.value, plainWeightMd,
                                         weight, impl, prefix);
             !s) {
    return s;
  }
  if (!impl.columnShift.empty() &&
      !impl.rowSums.allocate(size_t(rows) * sizeof(float)))
    return Status::error(StatusCode::IoError,
                         prefix + "cannot allocate scratch buffers");

  bool quantizes = d.mode != QuantLinearMode::Int8Static && !d.inputQuantized;
  if ((quantizes && !impl.quantized.allocate(size_t(rows * k))) ||
      !impl.rowScales.allocate(size_t(rows) * sizeof(float)) ||
      ((d.hasResidual || d.outputStatic || (d.outputBf16 && isInt8(d.mode))) &&
       !impl.product.allocate(size_t(rows * n) * sizeof(float))))
    return Status::error(StatusCode::IoError,
                         prefix + "cannot allocate scratch buffers");
  if (amx)
    return Status::ok();
  dnnl_engine_t engine = context.engine();
  st = dnnl_memory_create(&impl.src.value, &srcMd, engine,
                          quantizes ? impl.quantized.data : DNNL_MEMORY_NONE);
  if (st == dnnl_success)
    st = dnnl_memory_create(&impl.dst.value, &dstMd, engine,
                            DNNL_MEMORY_NONE);
  if (st == dnnl_success && srcZeroPoint)
    st = dnnl_memory_create(&impl.srcZeroPoint.value, &zpMd, engine,
                            &impl.zeroPoint);
  impl.zeroPoint = d.inputZeroPoint;
  return dnnlCheck(st, prefix, "memory creation");
}

/// bf16 x bf16 -> f32 with bias, activation and (when oneDNN's fast kernel
/// takes it with the activation) the residual as post-ops.
static Status createBf16(const CpuContext &context,
                         const QuantLinearStepDesc &d, int64_t rows,
                         const QuantLinearWeights &w,
                         QuantLinearStep::Impl &impl, std::string &implName,
                         const std::string &prefix) {
  const int64_t k = d.inputFeatures, n = d.outputFeatures;
  dnnl_memory_desc_t srcMd, plainWeightMd, anyWeightMd, biasMd, dstMd;
  dnnl_status_t st = initPlain(srcMd, rows, k, dnnl_bf16, k, 1);
  if (st == dnnl_success)
    st = initWeightMds(d, dnnl_bf16, plainWeightMd, anyWeightMd);
  if (st == dnnl_success)
    st = initPlain(biasMd, 1, n, dnnl_f32, n, 1);
  if (st == dnnl_success)
    st = initPlain(dstMd, rows, n, d.outputBf16 ? dnnl_bf16 : dnnl_f32, n, 1);
  if (Status s = dnnlCheck(st, prefix, "memory descriptor setup"); !s)
    return s;
  dnnl_matmul_desc_t matmul;
  if (Status s = dnnlCheck(dnnl_matmul_desc_init(&matmul, &srcMd, &anyWeightMd,
                                                 d.hasBias ? &biasMd : nullptr,
                                                 &dstMd),
                           prefix, "bf16 matmul descriptor setup");
      !s)
    return s;

  // Try the residual as a sum post-op first; without it when that choice
  // would be oneDNN's reference kernel.
  OwnedPd pd;
  for (bool sum : {d.hasResidual, false}) {
    OwnedPostOps postOps;
    OwnedAttr attr;
    st = dnnl_post_ops_create(&postOps.value);
    if (st == dnnl_success && d.activation != LinearActivation::None)
      st = dnnl_post_ops_append_eltwise(
          postOps.value, 1.0f,
          d.activation == LinearActivation::Relu   ? dnnl_eltwise_relu
          : d.activation == LinearActivation::Gelu ? dnnl_eltwise_gelu_erf
                                                   : dnnl_eltwise_gelu_tanh,
          0.0f, 0.0f);
    if (st == dnnl_success && sum)
      st = dnnl_post_ops_append_sum(postOps.value, 1.0f);
    if (st == dnnl_success)
      st = dnnl_primitive_attr_create(&attr.value);
    if (st == dnnl_success)
      st = dnnl_primitive_attr_set_post_ops(attr.value, postOps.value);
    if (st == dnnl_success) {
      if (pd.value)
        dnnl_primitive_desc_destroy(pd.value);
      pd.value = nullptr;
      st = dnnl_primitive_desc_create(&pd.value, &matmul, attr.value,
                                      context.engine(), nullptr);
    }
    if (Status s = dnnlCheck(st, prefix, "bf16 matmul primitive selection");
        !s)
      return s;
    const char *name = nullptr;
    dnnl_primitive_desc_query(pd.value, dnnl_query_impl_info_str, 0, &name);
    implName = name ? name : "";
    impl.residualPostOp = sum;
    if (!sum || implName.rfind("ref", 0) != 0)
      break;
  }
  if (Status s = dnnlCheck(dnnl_primitive_create(&impl.primitive.value,
                                                 pd.value),
                           prefix, "bf16 matmul primitive creation");
      !s)
    return s;
  if (Status s = packForPrimitive(context, pd.value, plainWeightMd, w.weight,
                                  impl, prefix);
      !s)
    return s;
  dnnl_engine_t engine = context.engine();
  st = dnnl_memory_create(&impl.src.value, &srcMd, engine, DNNL_MEMORY_NONE);
  if (st == dnnl_success)
    st = dnnl_memory_create(&impl.dst.value, &dstMd, engine, DNNL_MEMORY_NONE);
  if (st == dnnl_success && d.hasBias)
    st = dnnl_memory_create(&impl.bias.value, &biasMd, engine,
                            DNNL_MEMORY_NONE);
  return dnnlCheck(st, prefix, "memory creation");
}

Status QuantLinearStep::create(const CpuContext &context,
                               const QuantLinearStepDesc &desc, int64_t rows,
                               const QuantLinearWeights &weights,
                               std::unique_ptr<QuantLinearStep> &out) {
  const std::string prefix = std::string("quant_linear step '") + desc.name +
                             "' (" + quantLinearModeName(desc.mode) + "): ";
  if (Status st = validateQuantLinearDesc(desc, rows, weights, prefix); !st)
    return st;
  std::unique_ptr<QuantLinearStep> step(new QuantLinearStep(context));
  step->impl_ = std::make_unique<Impl>();
  Impl &impl = *step->impl_;
  impl.avx512 = quant::useAvx512();
  const int64_t k = desc.inputFeatures, n = desc.outputFeatures;
  if (isInt8(desc.mode)) {
    if (Status st = createInt8(context, desc, rows, weights, impl,
                               step->implementation_, prefix);
        !st)
      return st;
    step->packedBytes_ = impl.packedWeight.bytes;
  } else if (desc.mode == QuantLinearMode::BF16 && quant::amxBf16Usable()) {
    // The runtime's AMX kernel: ahead of oneDNN 2.6's on BERT shapes and it
    // applies the epilogue block by block (docs/cpu-backend.md).
    size_t scratch = 0;
    if (!quant::packAmxBf16(static_cast<const uint16_t *>(weights.weight),
                            desc.transposeWeight, k, n, impl.amx) ||
        ((scratch = quant::amxScratchBytes(rows, impl.amx)) &&
         !impl.amxScratch.allocate(scratch)))
      return Status::error(StatusCode::IoError,
                           prefix + "out of memory: cannot allocate the "
                                    "packed weight");
    step->packedBytes_ = impl.amx.bytes();
    step->implementation_ = "lmopt:amx_bf16";
  } else if (desc.mode == QuantLinearMode::BF16) {
    if (Status st = createBf16(context, desc, rows, weights, impl,
                               step->implementation_, prefix);
        !st)
      return st;
    step->packedBytes_ = impl.packedWeight.bytes;
  } else {
    int64_t panels = 0;
    if (desc.mode == QuantLinearMode::FP16) {
      quant::packF16(static_cast<const uint16_t *>(weights.weight),
                     desc.transposeWeight, k, n, impl.f16);
      panels = impl.f16.panels;
      step->packedBytes_ = impl.f16.bytes();
    } else {
      quant::packInt4(static_cast<const uint8_t *>(weights.weight),
                      weights.scales,
                      desc.hasZeroPoints ? weights.zeroPoints : nullptr,
                      desc.weightSigned, k, n, desc.blockSize, impl.int4);
      panels = impl.int4.panels;
      step->packedBytes_ = impl.int4.bytes();
    }
    impl.gemmThreads =
        context.threads() > 0 ? context.threads() : omp_get_max_threads();
    if (!impl.product.allocate(size_t(rows * panels * quant::kPanel) *
                               sizeof(float)) ||
        !impl.gemmInput.allocate(
            quant::gemmScratchFloats(rows, k, impl.gemmThreads) *
            sizeof(float)))
      return Status::error(StatusCode::IoError,
                           prefix + "cannot allocate scratch buffers");
    step->implementation_ =
        std::string(desc.mode == QuantLinearMode::FP16 ? "lmopt:f16"
                                                       : "lmopt:int4") +
        (impl.avx512 ? "_avx512_fma" : "_portable");
  }
  step->desc_ = desc;
  step->rows_ = rows;
  out = std::move(step);
  return Status::ok();
}

Status QuantLinearStep::run(const void *input, const float *bias,
                            const float *residual, float *output) const {
  QuantLinearIo io;
  io.input = input;
  io.bias = bias;
  io.residual = residual;
  io.output = output;
  return run(io);
}

Status QuantLinearStep::run(const QuantLinearIo &io) const {
  const std::string prefix = std::string("quant_linear step '") + desc_.name +
                             "': ";
  const void *input = io.input;
  const float *bias = io.bias, *residual = io.residual;
  if (!input || !io.output)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "null " + (input ? "output" : "input") +
                             " pointer");
  if (bool(io.inputScales) != desc_.inputQuantized ||
      bool(io.outputScales) != desc_.quantizeOutput ||
      bool(io.product) != desc_.quantizeOutput)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "input scales are passed iff the input is "
                                  "quantized, output scales and the product "
                                  "scratch iff the output is");
  float *output = static_cast<float *>(io.output);
  if (bool(bias) != desc_.hasBias || bool(residual) != desc_.hasResidual)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + (bool(bias) != desc_.hasBias
                                       ? "bias passed iff the desc has one"
                                       : "residual passed iff the desc has "
                                         "one") +
                             " is violated");
  const int64_t rows = rows_, k = desc_.inputFeatures,
                n = desc_.outputFeatures;
  if (residual && residual != output) {
    auto at = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
    size_t bytes = size_t(rows * n) * sizeof(float);
    if (at(residual) < at(output) + bytes && at(output) < at(residual) + bytes)
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "residual partially overlaps the output");
  }
  Impl &impl = *impl_;
  TeamSize team(context_.threads());
  auto execute = [&](int nargs, dnnl_exec_arg_t *args) {
    dnnl_status_t st =
        dnnl_primitive_execute(impl.primitive.value, context_.stream(), nargs,
                               args);
    if (st == dnnl_success)
      st = dnnl_stream_wait(context_.stream());
    return dnnlCheck(st, prefix, "matmul execution");
  };

  quant::Epilogue e;
  e.bias = bias;
  e.activation = desc_.activation;
  e.residual = residual;
  if (desc_.outputStatic) {
    e.q8Out = static_cast<uint8_t *>(io.output);
    e.q8Scale = desc_.outputScale;
    e.q8ZeroPoint = desc_.outputZeroPoint;
    e.q8Signed = desc_.outputSigned;
  }
  // Narrowed outputs: the epilogue writes them, the f32 output is not.
  const bool narrowed = desc_.outputStatic || desc_.outputBf16;
  if (isInt8(desc_.mode)) {
    if (desc_.outputBf16)
      e.bf16Out = static_cast<uint16_t *>(io.output);
    switch (desc_.mode) {
    case QuantLinearMode::Int8DynamicPerToken:
      if (desc_.inputQuantized) {
        e.rowScales = io.inputScales;
        if (dnnl_status_t st =
                impl.amx.data ? dnnl_success
                              : dnnl_memory_set_data_handle(
                                    impl.src.value, const_cast<void *>(input));
            st != dnnl_success)
          return dnnlCheck(st, prefix, "memory handle update");
        break;
      }
      quant::quantizeRowsS8(static_cast<const float *>(input), rows, k,
                            impl.quantized.as<int8_t>(),
                            impl.rowScales.as<float>(), context_.threads(),
                            impl.avx512);
      e.rowScales = impl.rowScales.as<float>();
      break;
    case QuantLinearMode::Int8DynamicPerTensor:
      quant::quantizeTensorU8(static_cast<const float *>(input), rows * k,
                              impl.quantized.as<uint8_t>(), e.uniformScale,
                              impl.zeroPoint, context_.threads(),
                              impl.avx512);
      break;
    default:
      e.uniformScale = desc_.inputScale;
      if (dnnl_status_t st =
              impl.amx.data ? dnnl_success
                            : dnnl_memory_set_data_handle(
                                  impl.src.value, const_cast<void *>(input));
          st != dnnl_success)
        return dnnlCheck(st, prefix, "memory handle update");
      break;
    }
    if (!impl.columnShift.empty()) {
      bool perToken = desc_.mode == QuantLinearMode::Int8DynamicPerToken;
      bool isStatic = desc_.mode == QuantLinearMode::Int8Static;
      quant::sumRows(isStatic ? input : impl.quantized.data,
                     perToken || (isStatic && desc_.inputSigned), rows, k,
                     perToken ? 0 : impl.zeroPoint, impl.rowSums.as<float>());
      e.columnShift = impl.columnShift.data();
      e.rowSums = impl.rowSums.as<float>();
    }
    if (impl.amx.data) {
      // The tile kernel applies the epilogue block by block (a residual in
      // the output included); a quantized output needs whole rows for its
      // scales, so then the epilogue's f32 rows go to the product scratch
      // and one pass quantizes them, as applyEpilogueQuantized would.
      const bool perToken = desc_.mode == QuantLinearMode::Int8DynamicPerToken;
      const bool perTensor =
          desc_.mode == QuantLinearMode::Int8DynamicPerTensor;
      const void *src = (perToken && !desc_.inputQuantized) || perTensor
                            ? impl.quantized.data
                            : input;
      const bool srcSigned = perToken || desc_.inputSigned;
      // Per tensor, this run's zero point times the column sums.
      for (size_t c = 0; c < impl.weightColumnSums.size(); ++c)
        impl.columnOffsets[c] = impl.zeroPoint * impl.weightColumnSums[c];
      const int32_t *offsets =
          impl.columnOffsets.empty() ? nullptr : impl.columnOffsets.data();
      quant::gemmAmxInt8(src, srcSigned, rows, impl.amx,
                         impl.weightScales.data(), desc_.perChannelScales, e,
                         desc_.quantizeOutput ? io.product
                         : narrowed           ? nullptr
                                              : output,
                         context_.threads(), impl.amxScratch.data, offsets);
      if (desc_.quantizeOutput)
        quant::quantizeRowsS8(io.product, rows, n,
                              static_cast<int8_t *>(io.output), io.outputScales,
                              context_.threads(), impl.avx512);
      return Status::ok();
    }
    // The product goes straight into the output, and the epilogue rewrites
    // it in place, unless the output holds the residual the epilogue reads.
    float *product = desc_.quantizeOutput             ? io.product
                     : residual == output || narrowed ? impl.product.as<float>()
                                                      : output;
    if (dnnl_status_t st = dnnl_memory_set_data_handle(impl.dst.value, product);
        st != dnnl_success)
      return dnnlCheck(st, prefix, "memory handle update");
    dnnl_exec_arg_t args[4] = {
        {DNNL_ARG_SRC, impl.src.value},
        {DNNL_ARG_WEIGHTS, impl.weight.value},
        {DNNL_ARG_DST, impl.dst.value},
        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, impl.srcZeroPoint.value}};
    if (Status st = execute(impl.srcZeroPoint.value ? 4 : 3, args); !st)
      return st;
    if (desc_.quantizeOutput)
      quant::applyEpilogueQuantized(product, rows, n, e,
                                    static_cast<int8_t *>(io.output),
                                    io.outputScales, context_.threads(),
                                    impl.avx512);
    else
      quant::applyEpilogue(product, n, rows, n, e, narrowed ? nullptr : output,
                           context_.threads(), impl.avx512);
    return Status::ok();
  }

  if (desc_.mode == QuantLinearMode::Int4WeightOnly ||
      desc_.mode == QuantLinearMode::FP16) {
    bool fp16 = desc_.mode == QuantLinearMode::FP16;
    const int64_t ldc =
        (fp16 ? impl.f16.panels : impl.int4.panels) * quant::kPanel;
    const float *product = impl.product.as<float>();
    // The epilogue runs on each block of rows as the GEMM completes it, on
    // the thread's share of them, while they are in cache.
    quant::RowsDone done = [&](int64_t r0, int64_t r1) {
      quant::Epilogue rowsE = e;
      if (e.residual)
        rowsE.residual = e.residual + r0 * n;
      quant::applyEpilogue(product + r0 * ldc, ldc, r1 - r0, n, rowsE,
                           output + r0 * n, /*threads=*/1, impl.avx512);
    };
    if (fp16)
      quant::gemmF16(static_cast<const uint16_t *>(input), rows, impl.f16,
                     impl.gemmInput.as<float>(), impl.product.as<float>(),
                     impl.gemmThreads, impl.avx512, done);
    else
      quant::gemmInt4(static_cast<const float *>(input), rows, impl.int4,
                      impl.gemmInput.as<float>(), impl.product.as<float>(),
                      impl.gemmThreads, impl.avx512, done);
    return Status::ok();
  }

  // bf16.
  if (impl.amx.data) {
    if (desc_.outputBf16)
      e.bf16Out = static_cast<uint16_t *>(io.output);
    quant::gemmAmxBf16(static_cast<const uint16_t *>(input), rows, impl.amx, e,
                       desc_.outputBf16 ? nullptr : output, context_.threads(),
                       impl.amxScratch.data);
    return Status::ok();
  }
  size_t outBytes = size_t(rows * n) * sizeof(float);
  std::vector<float> saved;
  if (residual && !impl.residualPostOp && residual == output) {
    saved.assign(residual, residual + rows * n);
    residual = saved.data();
  }
  if (residual && impl.residualPostOp && residual != output)
    std::memcpy(output, residual, outBytes);
  dnnl_status_t st =
      dnnl_memory_set_data_handle(impl.src.value, const_cast<void *>(input));
  if (st == dnnl_success)
    st = dnnl_memory_set_data_handle(impl.dst.value, output);
  if (st == dnnl_success && bias)
    st = dnnl_memory_set_data_handle(impl.bias.value,
                                     const_cast<float *>(bias));
  if (Status s = dnnlCheck(st, prefix, "memory handle update"); !s)
    return s;
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, impl.src.value},
                             {DNNL_ARG_WEIGHTS, impl.weight.value},
                             {DNNL_ARG_DST, impl.dst.value},
                             {DNNL_ARG_BIAS, impl.bias.value}};
  if (Status s = execute(bias ? 4 : 3, args); !s)
    return s;
  if (residual && !impl.residualPostOp)
    for (int64_t i = 0; i < rows * n; ++i)
      output[i] += residual[i];
  return Status::ok();
}
