//===- CudaMatmul.cpp - Linear and MatMul steps on cuBLASLt ---------------===//
//
// Both steps are row-major products; cuBLASLt is column-major, so each is
// run transposed: the row-major [M, N] = [M, K] x [K, N] is the
// column-major [N, M] = [N, K] x [K, M], with the right-hand matrix as
// cuBLASLt's A and the left-hand one as its B, and a bias of N elements
// runs along D's rows as cuBLASLt's bias epilogue wants.
//
// A linear step computes act(input x W + bias) + residual (the CPU's
// LinearStep). cuBLASLt fuses the bias, ReLU and tanh-GELU, and adds a
// residual through C (beta = 1) but before its activation; so exact GELU,
// and any activation with a residual, run as one small kernel of the
// runtime's (Kernels/LinearEpilogue.cuh) after the product.
//
// Descriptors, the algorithm (cuBLASLt's heuristic, asked once per problem
// and kept in the device's cache) and any scratch buffer are made when the
// step is built; run() sets pointers and enqueues.
//
//===----------------------------------------------------------------------===//

#include "CudaExecutors.h"

#include "lmopt/Runtime/CPU/LinearStep.h"
#include "lmopt/Runtime/MatMulCheck.h"

#include <algorithm>
#include <climits>

using namespace lmopt::runtime;
using namespace lmopt::runtime::cuda;

namespace {
/// One cuBLASLt problem, column-major: D [m, n] = op(A) [m, k] x B [k, n]
/// (+ C with beta = 1), `batch` times with the given element strides.
struct GemmShape {
  DType dtype = DType::F32;
  bool transA = false;
  uint64_t m = 0, n = 0, k = 0;
  int32_t batch = 1;
  int64_t strideA = 0, strideB = 0, strideD = 0;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool accumulate = false;
  /// Alignment in bytes the pointers (and batch strides) are known to
  /// have; the heuristic only picks algorithms that work with it.
  uint32_t alignA = 256, alignB = 256, alignD = 256, alignBias = 256;
};

/// Descriptors and the chosen algorithm for one GemmShape.
class Gemm {
public:
  Gemm(const CudaApi &api) : api_(api) {}
  Gemm(const Gemm &) = delete;
  Gemm &operator=(const Gemm &) = delete;
  ~Gemm() {
    if (desc_)
      api_.cublasLtMatmulDescDestroy(desc_);
    for (cublasLtMatrixLayout_t layout : {a_, b_, d_})
      if (layout)
        api_.cublasLtMatrixLayoutDestroy(layout);
  }

  Status create(const CudaCheck &c, const GemmShape &shape);

  /// Enqueues D = A x B (+ bias) (+ C when accumulating; C is D's layout).
  cublasStatus_t enqueue(const void *a, const void *b, const void *c, void *d,
                         const void *bias) const {
    if (bias) {
      cublasStatus_t st = api_.cublasLtMatmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
      if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    }
    return api_.cublasLtMatmul(
        handle_, desc_, &alpha_, a, a_, b, b_, &beta_, c ? c : d, d_, d, d_,
        &algo_, reinterpret_cast<void *>(workspace_), workspaceBytes_, stream_);
  }

private:
  const CudaApi &api_;
  cublasLtHandle_t handle_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr workspace_ = 0;
  size_t workspaceBytes_ = 0;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_ = {};
  float alpha_ = 1, beta_ = 0;
};
} // namespace

static cudaDataType_t cudaType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  default:
    return CUDA_R_32F;
  }
}

/// cuBLASLt runs the products in f32, f16 or bf16.
static Status expectMatmulType(const StepCheck &c, const std::string &role,
                               const PlanTensor &t) {
  if (t.dtype == DType::F32 || t.dtype == DType::F16 || t.dtype == DType::BF16)
    return Status::ok();
  return c.error(role + " " + describe(t) + " has dtype " + dtypeName(t.dtype) +
                     "; expected f32, f16 or bf16",
                 StatusCode::Unsupported);
}

/// The largest power of two (at most 256) dividing every value.
static uint32_t alignmentOf(std::initializer_list<uint64_t> values) {
  uint64_t bits = 256;
  for (uint64_t v : values)
    bits |= v;
  return uint32_t(bits & (~bits + 1));
}

/// What a tensor's device address is known to be aligned to: its buffer
/// comes from cuMemAlloc (256 bytes), its offset in it is the plan's.
static uint32_t tensorAlignment(const PlanTensor &t) {
  if (t.storage == TensorStorage::Arena || t.storage == TensorStorage::Weight)
    return alignmentOf({t.offset});
  return 256;
}

Status Gemm::create(const CudaCheck &c, const GemmShape &s) {
  handle_ = c.env.cublasLt;
  stream_ = c.env.stream;
  workspace_ = c.build.matmulWorkspace;
  workspaceBytes_ = c.build.matmulWorkspaceBytes;
  beta_ = s.accumulate ? 1.0f : 0.0f;
  cudaDataType_t type = cudaType(s.dtype);
  cublasComputeType_t compute = s.dtype == DType::F32 && c.env.allowTf32
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  auto fail = [&](const char *call, cublasStatus_t st) {
    return c.error(c.api.describe(call, st), StatusCode::DeviceError);
  };
  if (cublasStatus_t st =
          api_.cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F);
      st != CUBLAS_STATUS_SUCCESS) {
    desc_ = nullptr;
    return fail("cublasLtMatmulDescCreate", st);
  }
  int32_t transA = s.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  uint32_t epilogue = s.epilogue;
  // Never dereferenced before run() sets the real one; the heuristic reads
  // its alignment.
  const void *biasProbe =
      reinterpret_cast<const void *>(uintptr_t(s.alignBias));
  bool hasBias = s.epilogue & CUBLASLT_EPILOGUE_BIAS;
  for (auto [attribute, value, size] :
       {std::tuple{CUBLASLT_MATMUL_DESC_TRANSA, (const void *)&transA,
                   sizeof transA},
        {CUBLASLT_MATMUL_DESC_EPILOGUE, (const void *)&epilogue,
         sizeof epilogue},
        {CUBLASLT_MATMUL_DESC_BIAS_POINTER, (const void *)&biasProbe,
         sizeof biasProbe}}) {
    if (attribute == CUBLASLT_MATMUL_DESC_BIAS_POINTER && !hasBias)
      continue;
    if (cublasStatus_t st =
            api_.cublasLtMatmulDescSetAttribute(desc_, attribute, value, size);
        st != CUBLAS_STATUS_SUCCESS)
      return fail("cublasLtMatmulDescSetAttribute", st);
  }
  // Stored (before op) shapes: A is [m, k] or, transposed, [k, m].
  struct LayoutSpec {
    cublasLtMatrixLayout_t *layout;
    uint64_t rows, cols;
    int64_t stride;
  };
  for (const LayoutSpec &l :
       {LayoutSpec{&a_, s.transA ? s.k : s.m, s.transA ? s.m : s.k, s.strideA},
        LayoutSpec{&b_, s.k, s.n, s.strideB},
        LayoutSpec{&d_, s.m, s.n, s.strideD}}) {
    if (cublasStatus_t st = api_.cublasLtMatrixLayoutCreate(
            l.layout, type, l.rows, l.cols, int64_t(l.rows));
        st != CUBLAS_STATUS_SUCCESS) {
      *l.layout = nullptr;
      return fail("cublasLtMatrixLayoutCreate", st);
    }
    if (s.batch == 1)
      continue;
    for (auto [attribute, value, size] :
         {std::tuple{CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, (const void *)&s.batch,
                     sizeof s.batch},
          {CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, (const void *)&l.stride,
           sizeof l.stride}})
      if (cublasStatus_t st = api_.cublasLtMatrixLayoutSetAttribute(
              *l.layout, attribute, value, size);
          st != CUBLAS_STATUS_SUCCESS)
        return fail("cublasLtMatrixLayoutSetAttribute", st);
  }

  std::string key =
      std::to_string(int(s.dtype)) + "/" + std::to_string(int(compute)) + "/" +
      std::to_string(s.transA) + "/" + std::to_string(s.m) + "x" +
      std::to_string(s.n) + "x" + std::to_string(s.k) + "/" +
      std::to_string(s.batch) + ":" + std::to_string(s.strideA) + "," +
      std::to_string(s.strideB) + "," + std::to_string(s.strideD) + "/" +
      std::to_string(epilogue) + "/" + std::to_string(s.accumulate) + "/" +
      std::to_string(s.alignA) + "," + std::to_string(s.alignB) + "," +
      std::to_string(s.alignD) + "," + std::to_string(s.alignBias);
  if (c.build.matmulAlgos.find(key, algo_))
    return Status::ok();
  cublasLtMatmulPreference_t preference = nullptr;
  if (cublasStatus_t st = api_.cublasLtMatmulPreferenceCreate(&preference);
      st != CUBLAS_STATUS_SUCCESS)
    return fail("cublasLtMatmulPreferenceCreate", st);
  uint64_t workspace = workspaceBytes_;
  cublasStatus_t st = api_.cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
      sizeof workspace);
  for (auto [attribute, align] :
       {std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, s.alignA},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, s.alignB},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, s.alignD},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, s.alignD}})
    if (st == CUBLAS_STATUS_SUCCESS)
      st = api_.cublasLtMatmulPreferenceSetAttribute(preference, attribute,
                                                     &align, sizeof align);
  cublasLtMatmulHeuristicResult_t result = {};
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = api_.cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_,
                                             preference, 1, &result, &returned);
  api_.cublasLtMatmulPreferenceDestroy(preference);
  if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
    return fail("cublasLtMatmulAlgoGetHeuristic", st);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || returned == 0)
    return c.error("cuBLASLt has no algorithm for " + key +
                       " (dtype/compute/transA/m x n x k/batch:strides/"
                       "epilogue/accumulate/alignments)",
                   StatusCode::Unsupported);
  algo_ = result.algo;
  c.build.matmulAlgos.insert(key, algo_);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The runtime's epilogue kernel
//===----------------------------------------------------------------------===//

namespace {
/// out = act(in) + residual over `count` elements (LinearEpilogue.cuh).
struct EpilogueLaunch {
  CUfunction function = nullptr;
  unsigned blocks = 0;
  long long count = 0;
  int activation = 0;

  CUresult enqueue(const CudaApi &api, CUstream stream, void *out,
                   const void *in, const void *residual) const {
    void *args[] = {&out, &in, &residual, const_cast<long long *>(&count),
                    const_cast<int *>(&activation)};
    return api.cuLaunchKernel(function, blocks, 1, 1, kThreads, 1, 1, 0, stream,
                              args, nullptr);
  }
  static constexpr unsigned kThreads = 256;
};
} // namespace

static Status prepareEpilogue(const CudaCheck &c, DType dtype, uint64_t count,
                              int activation, EpilogueLaunch &out) {
  const char *name = dtype == DType::F16    ? "lmopt_linear_epilogue_f16"
                     : dtype == DType::BF16 ? "lmopt_linear_epilogue_bf16"
                                            : "lmopt_linear_epilogue_f32";
  if (CUresult r =
          c.api.cuModuleGetFunction(&out.function, c.env.runtimeKernels, name);
      r != CUDA_SUCCESS)
    return c.error("the runtime's CUDA kernels lack '" + std::string(name) +
                       "' (Kernels/LinearEpilogue.cuh): " +
                       c.api.describe("cuModuleGetFunction", r),
                   StatusCode::Unsupported);
  // A grid-stride loop: a few waves of blocks keep every SM busy.
  uint64_t blocks =
      (count + EpilogueLaunch::kThreads - 1) / EpilogueLaunch::kThreads;
  uint64_t cap = uint64_t(std::max(c.env.multiprocessors, 1)) * 8;
  out.blocks = unsigned(std::min(blocks, cap));
  out.count = (long long)count;
  out.activation = activation;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

namespace {
/// What the linear and matmul executors share: the stream, the product, and
/// the step's name for errors at run time.
class GemmExecutor : public StepExecutor {
public:
  explicit GemmExecutor(const CudaCheck &c)
      : api(&c.api), stream(c.env.stream), gemm(std::make_unique<Gemm>(c.api)),
        label(c.label()) {}

  const CudaApi *api;
  CUstream stream;
  std::unique_ptr<Gemm> gemm;
  std::string label;
};

class LinearExecutor final : public GemmExecutor {
public:
  using GemmExecutor::GemmExecutor;

  Status run(void *const *tensors) const override {
    if (rows == 0)
      return Status::ok();
    void *output = tensors[this->output];
    const void *residualData = residual < 0 ? nullptr : tensors[residual];
    // Where the product lands: the output, or scratch when the epilogue
    // kernel reads the residual from the output's bytes.
    void *product = scratch ? scratch->data() : output;
    cublasStatus_t st = gemm->enqueue(
        tensors[weight], tensors[input], accumulate ? residualData : nullptr,
        product, bias < 0 ? nullptr : tensors[bias]);
    if (st != CUBLAS_STATUS_SUCCESS)
      return Status::error(StatusCode::DeviceError,
                           label + ": " + api->describe("cublasLtMatmul", st));
    if (!epilogue.function)
      return Status::ok();
    if (CUresult r = epilogue.enqueue(*api, stream, output, product,
                                      accumulate ? nullptr : residualData);
        r != CUDA_SUCCESS)
      return Status::error(StatusCode::DeviceError,
                           label + ": " + api->describe("cuLaunchKernel", r));
    return Status::ok();
  }

  EpilogueLaunch epilogue;
  std::unique_ptr<DeviceBuffer> scratch;
  /// The residual goes through cuBLASLt's C (no activation).
  bool accumulate = false;
  int64_t input = 0, weight = 0, bias = -1, residual = -1, output = 0;
  uint64_t rows = 0;
};
} // namespace

Status
lmopt::runtime::cuda::buildLinearStep(const CudaCheck &c,
                                      std::unique_ptr<StepExecutor> &out) {
  LinearShape shape;
  if (Status st = checkLinearStep(c, expectMatmulType, shape); !st)
    return st;
  if (shape.transposeInput)
    return c.error("reads its input transposed (transpose_input), which the "
                   "cuda device does not run yet",
                   StatusCode::Unsupported);
  const PlanTensor &input = c.operand(0), &weight = c.operand(1);
  const PlanTensor &output = c.result(0);
  const DType dtype = input.dtype;
  if (shape.outputDType != dtype)
    return c.error("writes " + std::string(dtypeName(shape.outputDType)) +
                       " from " + dtypeName(dtype) +
                       " operands, which the cuda device does not run yet",
                   StatusCode::Unsupported);
  const int64_t k = shape.k, n = shape.n;
  const PlanTensor *bias =
      shape.bias >= 0 ? &c.operand(size_t(shape.bias)) : nullptr;
  const PlanTensor *residual =
      shape.residual >= 0 ? &c.operand(size_t(shape.residual)) : nullptr;

  auto exec = std::make_unique<LinearExecutor>(c);
  exec->input = c.step.operands[0];
  exec->weight = c.step.operands[1];
  exec->output = c.step.results[0];
  if (bias)
    exec->bias = c.step.operands[size_t(shape.bias)];
  if (residual)
    exec->residual = c.step.operands[size_t(shape.residual)];
  exec->rows = uint64_t(shape.rows);
  if (exec->rows == 0 || n == 0) {
    exec->rows = 0;
    out = std::move(exec);
    return Status::ok();
  }
  if (k == 0)
    return c.error("has K = 0 (input " + describe(input) +
                       "), which the cuda device does not run",
                   StatusCode::Unsupported);

  // Which part of the epilogue cuBLASLt does (see the file comment).
  auto act = LinearActivation(shape.activation);
  bool fusedActivation = !residual && (act == LinearActivation::Relu ||
                                       act == LinearActivation::GeluTanh);
  bool kernelEpilogue = act != LinearActivation::None && !fusedActivation;
  exec->accumulate = residual && !kernelEpilogue;
  GemmShape gemm;
  gemm.dtype = dtype;
  gemm.transA = shape.transpose;
  gemm.m = uint64_t(n);
  gemm.n = exec->rows;
  gemm.k = uint64_t(k);
  gemm.accumulate = exec->accumulate;
  uint32_t epilogue = bias ? CUBLASLT_EPILOGUE_BIAS : 0;
  if (fusedActivation)
    epilogue |= act == LinearActivation::Relu ? CUBLASLT_EPILOGUE_RELU
                                              : CUBLASLT_EPILOGUE_GELU;
  gemm.epilogue =
      epilogue ? cublasLtEpilogue_t(epilogue) : CUBLASLT_EPILOGUE_DEFAULT;
  gemm.alignA = tensorAlignment(weight);
  gemm.alignB = tensorAlignment(input);
  gemm.alignD = tensorAlignment(output);
  if (residual)
    gemm.alignD = std::min(gemm.alignD, tensorAlignment(*residual));
  if (bias)
    gemm.alignBias = tensorAlignment(*bias);

  if (kernelEpilogue) {
    uint64_t count = exec->rows * uint64_t(n);
    if (Status st = prepareEpilogue(c, dtype, count, int(shape.activation),
                                    exec->epilogue);
        !st)
      return st;
    // The residual may be the output's own bytes (accumulated in place):
    // then the product goes to scratch, so the kernel still reads it.
    if (residual && residual->storage == output.storage &&
        residual->offset == output.offset) {
      if (Status st =
              c.build.device.allocate(count * dtypeSize(dtype), exec->scratch);
          !st)
        return c.deviceError(st);
      gemm.alignD = 256;
    }
  }
  if (Status st = exec->gemm->create(c, gemm); !st)
    return st;
  out = std::move(exec);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

namespace {
class MatMulExecutor final : public GemmExecutor {
public:
  using GemmExecutor::GemmExecutor;

  Status run(void *const *tensors) const override {
    auto *lhs = static_cast<const uint8_t *>(tensors[this->lhs]);
    auto *rhs = static_cast<const uint8_t *>(tensors[this->rhs]);
    auto *output = static_cast<uint8_t *>(tensors[this->output]);
    if (zeroBytes) {
      if (CUresult r =
              api->cuMemsetD8Async(CUdeviceptr(output), 0, zeroBytes, stream);
          r != CUDA_SUCCESS)
        return Status::error(StatusCode::DeviceError,
                             label + ": " +
                                 api->describe("cuMemsetD8Async", r));
      return Status::ok();
    }
    // One call for a strided batch; one per matrix when the batches'
    // offsets follow no stride.
    for (size_t b = 0; b < lhsOffsets.size(); ++b) {
      cublasStatus_t st =
          gemm->enqueue(rhs + rhsOffsets[b], lhs + lhsOffsets[b], nullptr,
                        output + b * outputBytes, nullptr);
      if (st != CUBLAS_STATUS_SUCCESS)
        return Status::error(StatusCode::DeviceError,
                             label + ": " +
                                 api->describe("cublasLtMatmul", st));
    }
    return Status::ok();
  }

  int64_t lhs = 0, rhs = 0, output = 0;
  /// Byte offsets of each call's matrices (none when nothing is computed).
  std::vector<uint64_t> lhsOffsets, rhsOffsets;
  uint64_t outputBytes = 0;
  /// K = 0: the output is zeros.
  size_t zeroBytes = 0;
};
} // namespace

/// True when offsets[b] == b * stride for every b; sets `stride`.
static bool isStrided(const std::vector<int64_t> &offsets, int64_t &stride) {
  stride = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
  for (size_t b = 0; b < offsets.size(); ++b)
    if (offsets[b] != int64_t(b) * stride)
      return false;
  return stride >= 0;
}

Status
lmopt::runtime::cuda::buildMatMulStep(const CudaCheck &c,
                                      std::unique_ptr<StepExecutor> &out) {
  if (Status st = checkMatMulStep(c, expectMatmulType); !st)
    return st;
  const PlanTensor &lhsT = c.operand(0), &rhsT = c.operand(1),
                   &outputT = c.result(0);
  const DType dtype = lhsT.dtype;
  if (lhsT.dims.empty() || rhsT.dims.empty())
    return c.error("lhs " + describe(lhsT) + " and rhs " + describe(rhsT) +
                   " must have rank 1 or more");
  MatMulDims dims;
  switch (inferMatMulDims(lhsT.dims, rhsT.dims, dims)) {
  case MatMulDimsError::KMismatch:
    return c.error("lhs " + describe(lhsT) +
                   " has K = " + std::to_string(dims.k) + " but rhs " +
                   describe(rhsT) + " has K = " + std::to_string(dims.rhsK));
  case MatMulDimsError::BatchBroadcast:
    return c.error("batch dims of lhs " + describe(lhsT) + " and rhs " +
                   describe(rhsT) + " do not broadcast");
  case MatMulDimsError::None:
    break;
  }
  if (Status st = c.expectDims("output", outputT, dims.outputDims,
                               "numpy.matmul of lhs and rhs");
      !st)
    return st;

  auto exec = std::make_unique<MatMulExecutor>(c);
  exec->lhs = c.step.operands[0];
  exec->rhs = c.step.operands[1];
  exec->output = c.step.results[0];
  const int64_t m = dims.m, k = dims.k, n = dims.n;
  const int64_t count = matmulBatchCount(dims);
  if (count == 0 || m == 0 || n == 0) {
    out = std::move(exec);
    return Status::ok();
  }
  if (k == 0) {
    exec->zeroBytes = size_t(outputT.byteSize());
    out = std::move(exec);
    return Status::ok();
  }

  std::vector<int64_t> lhsOffsets, rhsOffsets;
  matmulBatchOffsets(dims, lhsOffsets, rhsOffsets);
  uint64_t elementSize = dtypeSize(dtype);
  GemmShape shape;
  shape.dtype = dtype;
  shape.m = uint64_t(n);
  shape.k = uint64_t(k);
  shape.alignA = tensorAlignment(rhsT);
  shape.alignB = tensorAlignment(lhsT);
  shape.alignD = tensorAlignment(outputT);
  int64_t lhsStride = 0, rhsStride = 0;
  bool strided = isStrided(lhsOffsets, lhsStride) &&
                 isStrided(rhsOffsets, rhsStride) && count <= INT32_MAX;
  if (strided && rhsStride == 0 && lhsStride == m * k) {
    // A shared rhs: the batches are rows of one product.
    shape.n = uint64_t(m * count);
    exec->lhsOffsets = {0};
    exec->rhsOffsets = {0};
  } else if (strided) {
    shape.n = uint64_t(m);
    shape.batch = int32_t(count);
    shape.strideA = rhsStride;
    shape.strideB = lhsStride;
    shape.strideD = m * n;
    shape.alignA = std::min(shape.alignA,
                            alignmentOf({uint64_t(rhsStride) * elementSize}));
    shape.alignB = std::min(shape.alignB,
                            alignmentOf({uint64_t(lhsStride) * elementSize}));
    shape.alignD =
        std::min(shape.alignD, alignmentOf({uint64_t(m * n) * elementSize}));
    exec->lhsOffsets = {0};
    exec->rhsOffsets = {0};
  } else {
    shape.n = uint64_t(m);
    exec->outputBytes = uint64_t(m * n) * elementSize;
    for (int64_t b = 0; b < count; ++b) {
      exec->lhsOffsets.push_back(uint64_t(lhsOffsets[b]) * elementSize);
      exec->rhsOffsets.push_back(uint64_t(rhsOffsets[b]) * elementSize);
      shape.alignA =
          std::min(shape.alignA, alignmentOf({exec->rhsOffsets.back()}));
      shape.alignB =
          std::min(shape.alignB, alignmentOf({exec->lhsOffsets.back()}));
      shape.alignD = std::min(shape.alignD,
                              alignmentOf({uint64_t(b) * exec->outputBytes}));
    }
  }
  if (Status st = exec->gemm->create(c, shape); !st)
    return st;
  out = std::move(exec);
  return Status::ok();
}
