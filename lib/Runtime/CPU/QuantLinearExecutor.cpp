//===- QuantLinearExecutor.cpp - The plan's quant_linear step -------------===//
//
// Checks a `quant_linear` step of a plan (docs/bundle-format.md lists its
// operands and attributes) and builds its QuantLinearStep from the weights
// section. Every constant operand (weight, scales, zero points) must be a
// weight tensor: the step packs them when the session is created.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/Executor.h"
#include "lmopt/Runtime/CPU/QuantLinearStep.h"

#include "QuantKernels.h"

#include <algorithm>
#include <initializer_list>

using namespace lmopt::runtime;

namespace {

class QuantLinearExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    auto f32 = [&](int64_t id) {
      return id < 0 ? nullptr : static_cast<const float *>(tensors[id]);
    };
    QuantLinearIo io;
    io.input = tensors[input];
    io.inputScales = f32(inputScales);
    io.bias = f32(bias);
    io.residual = f32(residual);
    io.output = tensors[output];
    io.outputScales = const_cast<float *>(f32(outputScales));
    io.product = const_cast<float *>(f32(product));
    return step->run(io);
  }
  int64_t copiedWeight() const override { return weight; }

  std::unique_ptr<QuantLinearStep> step;
  int64_t input = 0, inputScales = -1, weight = 0, bias = -1, residual = -1,
          output = 0, outputScales = -1, product = -1;
};

/// Names the bundle and step in every message.
struct Checker {
  const CpuStepContext &context;
  const PlanStep &step;

  Status error(const std::string &what,
               StatusCode code = StatusCode::InvalidFormat) const {
    return Status::error(code, "bundle '" + context.source +
                                   "': quant_linear step '" + step.name +
                                   "': " + what);
  }
  Status relabel(const Status &st) const {
    return Status::error(st.code(),
                         "bundle '" + context.source + "': " + st.message());
  }
  const PlanTensor &tensor(uint32_t id) const {
    return context.plan.tensors[id];
  }
  static std::string describe(const PlanTensor &t) {
    return "'" + t.name + "' (" + dtypeName(t.dtype) + " " +
           formatDims(t.dims) + ")";
  }
  Status expect(const char *role, const PlanTensor &t,
                const std::vector<DType> &dtypes,
                const std::vector<int64_t> &dims) const {
    if (std::find(dtypes.begin(), dtypes.end(), t.dtype) == dtypes.end()) {
      std::string allowed;
      for (DType d : dtypes)
        allowed += (allowed.empty() ? "" : " or ") + std::string(dtypeName(d));
      return error(std::string(role) + " " + describe(t) + " has dtype " +
                   dtypeName(t.dtype) + "; expected " + allowed);
    }
    if (t.dims != dims)
      return error(std::string(role) + " " + describe(t) +
                   " should have dims " + formatDims(dims));
    return Status::ok();
  }
  Status flag(const char *name, bool &out) const {
    int64_t v = 0;
    if (Status st = step.getInt(name, 0, v); !st)
      return relabel(st);
    if (v != 0 && v != 1)
      return error("attribute '" + std::string(name) + "' is " +
                   std::to_string(v) + "; expected 0 or 1");
    out = v == 1;
    return Status::ok();
  }
  /// A constant operand: its bytes in the weights section.
  Status constant(const char *role, const PlanTensor &t,
                  const void *&out) const {
    if (t.storage != TensorStorage::Weight || !context.weights)
      return error(std::string(role) + " " + describe(t) +
                   " is not in the weights section; a quantized linear "
                   "packs its constants when the session is created");
    out = context.weights + t.offset;
    return Status::ok();
  }
};

} // namespace

Status
lmopt::runtime::buildQuantLinearExecutor(const CpuStepContext &context,
                                         const PlanStep &step,
                                         std::unique_ptr<StepExecutor> &out) {
  Checker c{context, step};
  static const char *const kKnown[] = {"mode",
                                       "transpose_weight",
                                       "activation",
                                       "has_bias",
                                       "has_residual",
                                       "block_size",
                                       "has_zero_points",
                                       "weight_signed",
                                       "input_scale",
                                       "input_zero_point",
                                       "input_quantized",
                                       "quantize_output",
                                       "output_bf16",
                                       "output_static",
                                       "output_scale",
                                       "output_zero_point"};
  for (const PlanAttr &attr : step.attrs)
    if (std::none_of(std::begin(kKnown), std::end(kKnown),
                     [&](const char *k) { return attr.name == k; }))
      return c.error("has attribute '" + attr.name +
                         "', which this runtime does not know",
                     StatusCode::Unsupported);

  QuantLinearStepDesc d;
  d.name = step.name;
  std::string modeName;
  if (Status st = step.getString("mode", modeName); !st)
    return c.relabel(st);
  if (!parseQuantLinearMode(modeName, d.mode))
    return c.error("attribute 'mode' is '" + modeName +
                       "'; expected int8_dynamic_per_token, "
                       "int8_dynamic_per_tensor, int8_static, bf16, "
                       "int4_weight_only or fp16",
                   StatusCode::Unsupported);
  int64_t activation = 0;
  if (Status st = step.getInt("activation", 0, activation); !st)
    return c.relabel(st);
  if (activation < 0 || activation > 3)
    return c.error("attribute 'activation' is " + std::to_string(activation) +
                   "; expected 0 (none), 1 (relu), 2 (gelu) or 3 (gelu_tanh)");
  d.activation = LinearActivation(activation);
  for (auto [name, field] :
       {std::pair<const char *, bool *>{"transpose_weight", &d.transposeWeight},
        {"has_bias", &d.hasBias},
        {"has_residual", &d.hasResidual},
        {"has_zero_points", &d.hasZeroPoints},
        {"weight_signed", &d.weightSigned},
        {"input_quantized", &d.inputQuantized},
        {"quantize_output", &d.quantizeOutput},
        {"output_bf16", &d.outputBf16},
        {"output_static", &d.outputStatic}})
    if (Status st = c.flag(name, *field); !st)
      return st;
  // weight_signed defaults to 1.
  if (!step.findAttr("weight_signed"))
    d.weightSigned = true;
  bool int4 = d.mode == QuantLinearMode::Int4WeightOnly;
  // bf16 and fp16 weights are plain half-precision floats: no scales.
  bool fp16 = d.mode == QuantLinearMode::FP16;
  bool half = d.mode == QuantLinearMode::BF16 || fp16;
  bool isStatic = d.mode == QuantLinearMode::Int8Static;
  if (int4)
    if (Status st = step.getInt("block_size", d.blockSize); !st)
      return c.relabel(st);
  // A scale and zero point pair (the zero point clamped far enough out for
  // the desc's range check to name it).
  auto quantParams = [&](const char *scaleName, const char *zeroName,
                         float &scale, int32_t &zeroPoint) -> Status {
    double value = 0;
    int64_t zp = 0;
    if (Status st = step.getFloat(scaleName, value); !st)
      return c.relabel(st);
    if (Status st = step.getInt(zeroName, 0, zp); !st)
      return c.relabel(st);
    scale = float(value);
    zeroPoint = int32_t(std::clamp<int64_t>(zp, -1000, 1000));
    return Status::ok();
  };
  if (isStatic)
    if (Status st = quantParams("input_scale", "input_zero_point", d.inputScale,
                                d.inputZeroPoint);
        !st)
      return st;
  if (d.outputStatic)
    if (Status st = quantParams("output_scale", "output_zero_point",
                                d.outputScale, d.outputZeroPoint);
        !st)
      return st;

  if (half && d.hasZeroPoints)
    return c.error(std::string("a ") + (fp16 ? "fp16" : "bf16") +
                   " step has no zero points");
  if (d.inputQuantized && d.mode != QuantLinearMode::Int8DynamicPerToken)
    return c.error("attribute 'input_quantized' is for int8_dynamic_per_token "
                   "steps");
  if (d.quantizeOutput && (int4 || half || d.hasResidual))
    return c.error("attribute 'quantize_output' is for int8 steps without a "
                   "residual");
  if (d.outputBf16 && (int4 || d.mode == QuantLinearMode::FP16 ||
                       d.hasResidual || d.quantizeOutput || d.outputStatic))
    return c.error("attribute 'output_bf16' is for bf16 and int8 steps "
                   "without a residual, 'quantize_output' or 'output_static'");
  if (d.outputStatic && (int4 || half || d.hasResidual || d.quantizeOutput))
    return c.error("attribute 'output_static' is for int8 steps without a "
                   "residual or 'quantize_output'");
  // With input_quantized the input's row scales follow the input.
  const size_t first = d.inputQuantized ? 2 : 1;
  size_t expected = first + 1 + (half ? 0 : 1) + d.hasZeroPoints +
                    d.hasBias + d.hasResidual;
  size_t expectedResults = d.quantizeOutput ? 3 : 1;
  std::string roles = std::string("input") +
                      (d.inputQuantized ? ", input_scales" : "") +
                      ", weight" + (half ? "" : ", scales") +
                      (d.hasZeroPoints ? ", zero_points" : "") +
                      (d.hasBias ? ", bias" : "") +
                      (d.hasResidual ? ", residual" : "");
  if (step.operands.size() != expected ||
      step.results.size() != expectedResults)
    return c.error("has " + std::to_string(step.operands.size()) +
                   " operands and " + std::to_string(step.results.size()) +
                   " results; expected " + std::to_string(expected) + " (" +
                   roles + ") and " + std::to_string(expectedResults) +
                   (d.quantizeOutput ? " (output, output_scales, product)"
                                     : ""));

  const PlanTensor &input = c.tensor(step.operands[0]);
  const PlanTensor &weight = c.tensor(step.operands[first]);
  const PlanTensor &output = c.tensor(step.results[0]);
  if (input.dims.empty())
    return c.error("input " + Checker::describe(input) +
                   " is a scalar; expected [..., K]");
  const int64_t k = input.dims.back();
  if (weight.dims.size() != 2)
    return c.error("weight " + Checker::describe(weight) +
                   " has rank " + std::to_string(weight.dims.size()) +
                   "; expected 2");
  int64_t n = int4 || d.transposeWeight ? weight.dims[0] : weight.dims[1];
  std::vector<int64_t> weightDims =
      int4 ? std::vector<int64_t>{n, k / 2}
           : d.transposeWeight ? std::vector<int64_t>{n, k}
                               : std::vector<int64_t>{k, n};
  DType inputType = fp16 ? DType::F16 : half ? DType::BF16 : DType::F32;
  if (d.inputQuantized)
    inputType = DType::I8;
  if (isStatic)
    inputType = input.dtype == DType::I8 ? DType::I8 : DType::U8;
  d.inputSigned = inputType == DType::I8;
  if (Status st = c.expect("input", input, {inputType}, input.dims); !st)
    return st;
  if (int4 && (k % 2 != 0))
    return c.error("input " + Checker::describe(input) +
                   " has an odd K; int4 weights pack two per byte");
  DType weightType = fp16             ? DType::F16
                     : half           ? DType::BF16
                     : d.weightSigned ? DType::I8
                                      : DType::U8;
  if (Status st = c.expect("weight", weight, {weightType}, weightDims); !st)
    return st;
  std::vector<int64_t> outDims = input.dims;
  outDims.back() = n;
  if (d.outputStatic)
    d.outputSigned = output.dtype == DType::I8;
  if (Status st =
          c.expect("output", output,
                   {d.quantizeOutput ? DType::I8
                    : d.outputBf16   ? DType::BF16
                    : d.outputStatic ? (d.outputSigned ? DType::I8 : DType::U8)
                                     : DType::F32},
                   outDims);
      !st)
    return st;
  // Per-token row scales: the dims before the last.
  const std::vector<int64_t> rowDims(input.dims.begin(), input.dims.end() - 1);
  if (d.inputQuantized)
    if (Status st = c.expect("input_scales", c.tensor(step.operands[1]),
                             {DType::F32}, rowDims);
        !st)
      return st;
  if (d.quantizeOutput) {
    if (Status st = c.expect("output_scales", c.tensor(step.results[1]),
                             {DType::F32}, rowDims);
        !st)
      return st;
    if (Status st = c.expect("product", c.tensor(step.results[2]),
                             {DType::F32}, outDims);
        !st)
      return st;
  }

  QuantLinearWeights w;
  std::vector<float> widenedScales;
  std::vector<uint8_t> unpackedZeroPoints;
  if (Status st = c.constant("weight", weight, w.weight); !st)
    return st;
  size_t next = first + 1;
  if (!half) {
    const PlanTensor &scales = c.tensor(step.operands[next++]);
    std::vector<int64_t> scaleDims{n};
    if (int4) {
      if (d.blockSize <= 0 || k % d.blockSize != 0)
        return c.error("attribute 'block_size' is " +
                       std::to_string(d.blockSize) +
                       "; expected a positive divisor of K = " +
                       std::to_string(k));
      scaleDims = {n, k / d.blockSize};
    } else if (scales.dims == std::vector<int64_t>{1} && n != 1) {
      d.perChannelScales = false;
      scaleDims = {1};
    }
    // int4 block scales may be f16 (widened here: the step repacks them
    // into f32 panels when it is created).
    std::vector<DType> scaleTypes{DType::F32};
    if (int4)
      scaleTypes.push_back(DType::F16);
    if (Status st = c.expect("scales", scales, scaleTypes, scaleDims); !st)
      return st;
    const void *data = nullptr;
    if (Status st = c.constant("scales", scales, data); !st)
      return st;
    if (scales.dtype == DType::F16) {
      size_t count = size_t(scaleDims[0] * scaleDims[1]);
      widenedScales.resize(count);
      quant::widenF16(static_cast<const uint16_t *>(data), count,
                      widenedScales.data());
      data = widenedScales.data();
    }
    w.scales = static_cast<const float *>(data);
    if (d.hasZeroPoints) {
      const PlanTensor &zps = c.tensor(step.operands[next++]);
      // u4 zero points may be packed two per byte along the blocks (the
      // even block in the low nibble): [N, ceil(blocks / 2)].
      std::vector<int64_t> zpDims = scaleDims;
      if (int4 && !d.weightSigned && zps.dims.size() == 2 &&
          zps.dims[1] == (scaleDims[1] + 1) / 2)
        zpDims[1] = zps.dims[1];
      if (Status st = c.expect("zero_points", zps,
                               {d.weightSigned ? DType::I8 : DType::U8},
                               zpDims);
          !st)
        return st;
      if (Status st = c.constant("zero_points", zps, w.zeroPoints); !st)
        return st;
      if (zpDims[1] != scaleDims[1]) {
        int64_t blocks = scaleDims[1];
        const auto *packed = static_cast<const uint8_t *>(w.zeroPoints);
        unpackedZeroPoints.resize(size_t(n * blocks));
        for (int64_t r = 0; r < n; ++r)
          for (int64_t b = 0; b < blocks; ++b)
            unpackedZeroPoints[size_t(r * blocks + b)] =
                (packed[r * zpDims[1] + b / 2] >> (b % 2 ? 4 : 0)) & 0xF;
        w.zeroPoints = unpackedZeroPoints.data();
      }
    }
  }
  auto exec = std::make_unique<QuantLinearExecutor>();
  exec->input = step.operands[0];
  exec->weight = step.operands[first];
  exec->output = step.results[0];
  if (d.inputQuantized)
    exec->inputScales = step.operands[1];
  if (d.quantizeOutput) {
    exec->outputScales = step.results[1];
    exec->product = step.results[2];
  }
  if (d.hasBias) {
    const PlanTensor &bias = c.tensor(step.operands[next]);
    if (Status st = c.expect("bias", bias, {DType::F32}, {n}); !st)
      return st;
    exec->bias = step.operands[next++];
  }
  if (d.hasResidual) {
    const PlanTensor &residual = c.tensor(step.operands[next]);
    if (Status st = c.expect("residual", residual, {DType::F32}, outDims);
        !st)
      return st;
    exec->residual = step.operands[next++];
  }
  d.inputFeatures = k;
  d.outputFeatures = n;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < input.dims.size(); ++i)
    rows *= input.dims[i];
  if (rows == 0)
    return c.error("input " + Checker::describe(input) +
                   " has no rows; a quantized linear needs at least one");
  if (Status st = QuantLinearStep::create(context.cpu, d, rows, w, exec->step);
      !st)
    return c.relabel(st);
  out = std::move(exec);
  return Status::ok();
}
