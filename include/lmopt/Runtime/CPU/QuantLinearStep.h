//===- QuantLinearStep.h - Low-bit lmopt.linear on the CPU ------*- C++ -*-===//
//
// The runtime's library step for the quantized and mixed-precision forms of
// `lmopt.linear` (docs/dialect.md, "Quantized and mixed-precision linears"):
//
//   output = act(dequantize(q(input)) x dequantize(weight) + bias) + residual
//
// with f32 bias, residual and output. Six modes:
//
// - int8 dynamic per token: each input row is quantized to i8 with scale
//   max|row| / 127 (zero point 0, round half to even; a zero row gets scale
//   1); i8 weight with per-output-channel (or one) f32 scales.
// - int8 dynamic per tensor: the whole input is quantized to u8 as ONNX
//   DynamicQuantizeLinear does; i8 weight as above.
// - int8 static: the input arrives quantized (u8 or i8) with a constant
//   scale and zero point; i8 weight as above.
// - bf16: bf16 input and weight, f32 accumulation.
// - int4 weight-only: f32 input; 4-bit weight, block-wise along K with one
//   f32 scale (and optionally one zero point) per output channel and block.
// - fp16: f16 input and weight, f32 accumulation.
//
// Where the CPU has AMX, bf16, int8 per token and int8 static without an
// input zero point run the runtime's tile kernel (AmxGemm.h), which applies
// the row scale, bias, activation and residual to each block of the product
// while it is in cache. Elsewhere the integer products run on oneDNN's int8
// matmul (AMX or VNNI, whichever oneDNN picks) with the weight scales as
// output scales, and the row scale, bias, activation and residual are one
// pass over the product afterwards (oneDNN 2.6 has no per-row scale its fast
// kernels take); bf16 is one oneDNN matmul with bias, activation and
// residual as post-ops. int4
// and fp16 (oneDNN 2.6 has no f16 matmul on the CPU) run the runtime's own
// kernel (WeightOnlyGemm): 64-column panels of the weight are widened to f32
// into a cache-resident buffer, K chunk by K chunk, and an AVX-512 FMA
// kernel multiplies every row of the input with them; the f32 weight is
// never stored whole. Weights are packed once, when the step is created, into
// buffers the step owns. docs/cpu-backend.md ("Quantized linear steps")
// describes them.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_QUANTLINEARSTEP_H
#define LMOPT_RUNTIME_CPU_QUANTLINEARSTEP_H

#include "lmopt/Format/Status.h"
#include "lmopt/Runtime/CPU/LinearStep.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lmopt::runtime {

enum class QuantLinearMode : int {
  Int8DynamicPerToken = 1,
  Int8DynamicPerTensor = 2,
  Int8Static = 3,
  BF16 = 4,
  Int4WeightOnly = 5,
  FP16 = 6,
};

/// The plan's spelling of a mode: "int8_dynamic_per_token",
/// "int8_dynamic_per_tensor", "int8_static", "bf16", "int4_weight_only",
/// "fp16";
/// "invalid" outside the enum.
const char *quantLinearModeName(QuantLinearMode mode);
/// The inverse of quantLinearModeName; false for any other string.
bool parseQuantLinearMode(std::string_view name, QuantLinearMode &out);

struct QuantLinearStepDesc {
  /// Names the step in every message.
  std::string name;
  QuantLinearMode mode = QuantLinearMode::Int8DynamicPerToken;
  /// K and N: the input is [rows, K], the output [rows, N].
  int64_t inputFeatures = 0;
  int64_t outputFeatures = 0;
  /// int8, bf16 and fp16: the weight is stored [N, K] instead of [K, N]. int4
  /// weights are always [N, K/2] bytes (see QuantLinearWeights).
  bool transposeWeight = false;
  bool hasBias = false;
  LinearActivation activation = LinearActivation::None;
  bool hasResidual = false;
  /// int8: N weight scales (per output channel) or one (per tensor), and
  /// as many zero points when hasZeroPoints.
  bool perChannelScales = true;
  /// int4: K elements per block (even, dividing K).
  int64_t blockSize = 0;
  /// Signed weights (i8, i4 -8..7) or unsigned (u8, u4 0..15); int8
  /// unsigned weights are for dynamic per-tensor mode.
  bool weightSigned = true;
  /// int8 and int4: zero points are given (else all 0).
  bool hasZeroPoints = false;
  /// int8 static: the input's dtype (i8 or u8), scale and zero point.
  bool inputSigned = false;
  float inputScale = 1.0f;
  int32_t inputZeroPoint = 0;
  /// int8 per token: the input arrives quantized (i8 [rows, K] and its f32
  /// row scales), written by the producing step's quantizeOutput.
  bool inputQuantized = false;
  /// int8, no residual: the output is written quantized per token, as the
  /// per-token mode would quantize it (i8 [rows, N] and f32 row scales),
  /// for a consumer with inputQuantized; the f32 product goes to a scratch
  /// buffer the caller passes.
  bool quantizeOutput = false;
  /// bf16, no residual: the output is written as bf16 (the f32 result
  /// rounded to nearest even, as a cast would round it) for a bf16
  /// consumer.
  bool outputBf16 = false;
  /// int8, no residual: the output is written quantized with a fixed scale
  /// and zero point, u8 (or i8 with outputSigned), as a static
  /// QuantizeLinear (lmopt.quantize) would write the f32 result (see
  /// quant::Epilogue's q8Out), for a static int8 consumer.
  bool outputStatic = false;
  bool outputSigned = false;
  float outputScale = 1.0f;
  int32_t outputZeroPoint = 0;
};

/// The buffers of one run (see QuantLinearStep::run).
struct QuantLinearIo {
  const void *input = nullptr;
  /// With inputQuantized: [rows] f32.
  const float *inputScales = nullptr;
  const float *bias = nullptr;
  const float *residual = nullptr;
  /// f32 [rows, N]; i8 with quantizeOutput, bf16 with outputBf16, u8 or
  /// i8 with outputStatic.
  void *output = nullptr;
  /// With quantizeOutput: [rows] f32, and the f32 [rows, N] scratch.
  float *outputScales = nullptr;
  float *product = nullptr;
};

/// A step's constant operands, read only by create().
struct QuantLinearWeights {
  /// int8: i8 or u8 [K, N] (or [N, K] transposed). bf16 and fp16: bf16 or
  /// IEEE half bits, alike.
  /// int4: [N, K/2] bytes, row n holding channel n's K values two per byte,
  /// the even k in the low nibble and k + 1 in the high one.
  const void *weight = nullptr;
  /// int8: N (or 1) f32. int4: [N, K / blockSize] f32. bf16, fp16: unused.
  const float *scales = nullptr;
  /// With hasZeroPoints, one byte each (i8 for signed weights, u8 for
  /// unsigned): int8 as many as scales; int4 [N, K / blockSize].
  const void *zeroPoints = nullptr;
};

class QuantLinearStep {
public:
  QuantLinearStep(const QuantLinearStep &) = delete;
  QuantLinearStep &operator=(const QuantLinearStep &) = delete;
  ~QuantLinearStep();

  /// Validates `desc`, builds the step for exactly `rows` rows (>= 1) and
  /// packs `weights` into buffers the step owns.
  static Status create(const CpuContext &context,
                       const QuantLinearStepDesc &desc, int64_t rows,
                       const QuantLinearWeights &weights,
                       std::unique_ptr<QuantLinearStep> &out);

  /// Computes all rows. `input` is [rows, K]: f32 (dynamic int8, int4),
  /// i8/u8 (static int8), bf16 bits (bf16) or IEEE half bits (fp16). `bias` [N]
  /// and `residual` [rows, N] are passed exactly when the desc has them;
  /// `residual` may be `output` itself, otherwise it must not overlap it. Uses
  /// scratch buffers of the step, so one step runs on one thread at a time.
  Status run(const void *input, const float *bias, const float *residual,
             float *output) const;
  /// The same with every buffer named, for the fused forms: inputScales
  /// exactly with inputQuantized, outputScales and product exactly with
  /// quantizeOutput.
  Status run(const QuantLinearIo &io) const;

  const QuantLinearStepDesc &desc() const { return desc_; }
  int64_t rows() const { return rows_; }
  /// Bytes of the packed weight, scales and zero points the step holds.
  uint64_t packedBytes() const { return packedBytes_; }
  /// What runs the product: oneDNN's implementation name
  /// ("brg:avx512_core_amx_int8", ...) or the runtime's int4/fp16 kernel's
  /// ("lmopt:int4_avx512_fma", "lmopt:f16_avx512_fma", "lmopt:*_portable").
  const std::string &implementation() const { return implementation_; }

  struct Impl;

private:
  explicit QuantLinearStep(const CpuContext &context);

  const CpuContext &context_;
  QuantLinearStepDesc desc_;
  int64_t rows_ = 0;
  uint64_t packedBytes_ = 0;
  std::string implementation_;
  std::unique_ptr<Impl> impl_;
};

struct CpuStepContext;
struct PlanStep;
class StepExecutor;

/// The plan's `quant_linear` step (docs/bundle-format.md): checks operands,
/// attributes and dtypes, reads the constant operands from the weights
/// section and builds the step. Messages name the bundle and the step.
Status buildQuantLinearExecutor(const CpuStepContext &context,
                                const PlanStep &step,
                                std::unique_ptr<StepExecutor> &out);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_QUANTLINEARSTEP_H
