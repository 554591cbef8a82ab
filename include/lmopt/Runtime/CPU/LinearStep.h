//===- LinearStep.h - lmopt.linear as one oneDNN matmul ---------*- C++ -*-===//
//
// The runtime's library step for `lmopt.linear`:
// `output = activation(input x W + bias) + residual`, f32, executed as one
// oneDNN matmul primitive whose epilogue (activation, residual add) runs as
// post-ops. Two forms: create() builds the primitive with a run-time row
// count, so one step serves every row count up to a bound, and reads the
// weight in place from the caller's buffer (no copy, but oneDNN repacks it
// on every call); createPacked() builds it for one exact row count and
// reorders the weight once, at creation, into the layout oneDNN's kernel
// prefers, in a buffer the step owns. docs/cpu-backend.md describes both.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_LINEARSTEP_H
#define LMOPT_RUNTIME_CPU_LINEARSTEP_H

#include "lmopt/Format/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// oneDNN's opaque handle types, so that users of this header need no oneDNN
// include path.
struct dnnl_engine;
struct dnnl_stream;
struct dnnl_primitive;
struct dnnl_memory;

namespace lmopt::runtime {

/// The oneDNN CPU engine and stream a session runs its library steps on. A
/// context is used by one thread at a time (one per session); steps created
/// on it may be shared.
class CpuContext {
public:
  struct Options {
    /// Threads per step; 0 keeps oneDNN's default (OMP_NUM_THREADS or all
    /// cores). Applied around each execution and restored afterwards, so it
    /// does not leak into the caller's own OpenMP regions.
    int threads = 0;
  };

  CpuContext(const CpuContext &) = delete;
  CpuContext &operator=(const CpuContext &) = delete;
  ~CpuContext();

  static Status create(const Options &options,
                       std::unique_ptr<CpuContext> &out);

  int threads() const { return threads_; }
  dnnl_engine *engine() const { return engine_; }
  dnnl_stream *stream() const { return stream_; }

  /// Per-run scratch that the library steps of this context share (the
  /// steps of one session run one at a time): at least `bytes`, 64-byte
  /// aligned, grown on demand and kept until the context goes; null when
  /// it cannot grow. Valid until the next call.
  void *sharedScratch(size_t bytes) const;

private:
  CpuContext() = default;

  int threads_ = 0;
  dnnl_engine *engine_ = nullptr;
  dnnl_stream *stream_ = nullptr;
  mutable void *scratch_ = nullptr;
  mutable size_t scratchBytes_ = 0;
};

/// The epilogue activation; the values are those of the dialect's
/// `#lmopt.activation` enum.
enum class LinearActivation : int {
  None = 0,
  Relu = 1,
  /// 0.5 x (1 + erf(x / sqrt(2))).
  Gelu = 2,
  /// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  GeluTanh = 3,
};

/// "none", "relu", "gelu", "gelu_tanh"; "invalid" outside the enum.
const char *linearActivationName(LinearActivation activation);

/// One `lmopt.linear`, as the plan describes it.
struct LinearStepDesc {
  /// Names the step in every message (the op's node name).
  std::string name;
  /// K: the input is [rows, K], leading dims flattened into rows.
  int64_t inputFeatures = 0;
  /// The weight as stored: [K, N], or [N, K] when transposeWeight.
  std::vector<int64_t> weightShape;
  bool transposeWeight = false;
  /// The input is stored [K, rows] and read transposed through its strides
  /// (a weight gradient's x^T); the step runs exactly the rows it was built
  /// for.
  bool transposeInput = false;
  /// A bias [N] is passed to every run.
  bool hasBias = false;
  LinearActivation activation = LinearActivation::None;
  /// A residual [rows, N] is passed to every run.
  bool hasResidual = false;
  /// The input and weight are bf16 (the product accumulates in f32; bias,
  /// residual and output stay f32): mixed-precision training's form.
  bool bf16Operands = false;
};

class LinearStep {
public:
  LinearStep(const LinearStep &) = delete;
  LinearStep &operator=(const LinearStep &) = delete;
  ~LinearStep();

  /// Validates `desc` and builds the primitive for up to `maxRows` rows; the
  /// weight is passed to every run and read where it lies.
  static Status create(const CpuContext &context, const LinearStepDesc &desc,
                       int64_t maxRows, std::unique_ptr<LinearStep> &out);

  /// Validates `desc` and builds the primitive for exactly `rows` rows with
  /// the weight in the layout oneDNN chooses for it; `weight` (f32 only, as
  /// in the desc) is reordered into that layout now, into a 64-byte aligned buffer
  /// the step owns, and is not read again.
  static Status createPacked(const CpuContext &context,
                             const LinearStepDesc &desc, int64_t rows,
                             const float *weight,
                             std::unique_ptr<LinearStep> &out);

  /// Computes `rows` rows (0 <= rows <= maxRows; with packed weights, 0 or
  /// exactly maxRows). `input` is [rows, K], `weight` as in the desc (with
  /// packed weights it is not read and may be null), `bias` [N] and
  /// `residual` [rows, N] exactly when the desc has them (null otherwise),
  /// `output` [rows, N], dense and row-major. `residual` may be `output`
  /// itself (accumulated in place, the cheapest form); otherwise it is
  /// copied into `output` first and must not overlap it. Runs on the
  /// context's stream and returns when the output is written.
  /// With `bf16Operands`, `input` and `weight` hold bf16.
  Status run(const void *input, int64_t rows, const void *weight,
             const float *bias, const float *residual, float *output) const;

  const LinearStepDesc &desc() const { return desc_; }
  int64_t maxRows() const { return maxRows_; }
  /// Whether the step holds its own reordered copy of the weight.
  bool packed() const { return packedWeight_ != nullptr; }
  /// Bytes of that copy (0 when not packed).
  uint64_t packedBytes() const { return packedBytes_; }
  int64_t inputFeatures() const { return k_; }
  int64_t outputFeatures() const { return n_; }
  /// The oneDNN implementation chosen for the primitive ("brg:avx512_core",
  /// ...), for logs and benchmarks.
  const std::string &implementation() const { return implementation_; }

private:
  LinearStep(const CpuContext &context);
  static Status build(const CpuContext &context, const LinearStepDesc &desc,
                      int64_t rows, const float *weight,
                      std::unique_ptr<LinearStep> &out);
  /// run() on the tile kernel, after its checks.
  Status runAmx(const uint16_t *input, int64_t rows, const uint16_t *weight,
                const float *bias, const float *residual, float *output,
                const std::string &prefix) const;

  const CpuContext &context_;
  LinearStepDesc desc_;
  int64_t maxRows_ = 0;
  int64_t k_ = 0;
  int64_t n_ = 0;
  /// The residual is added after the primitive instead of by a post-op.
  bool residualAfter_ = false;
  std::string implementation_;
  dnnl_primitive *primitive_ = nullptr;
  /// With packed weights: the reordered weight and a memory object over it,
  /// built once and passed to every execution.
  void *packedWeight_ = nullptr;
  uint64_t packedBytes_ = 0;
  dnnl_memory *packedMemory_ = nullptr;
  /// bf16 operands on AMX (the runtime's tile kernel, lib/Runtime/CPU/
  /// AmxGemm.h) instead of the primitive: the weight's tile layout, refilled
  /// on every run in the context's shared scratch.
  struct Amx;
  std::unique_ptr<Amx> amx_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_LINEARSTEP_H
