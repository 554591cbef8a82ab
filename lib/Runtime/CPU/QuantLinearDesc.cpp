//===- QuantLinearDesc.cpp - Quantized linear modes and their rules -------===//
//
// The quantized linear step's mode names and the checks a desc and its
// weights pass before QuantLinearStep::create builds anything (see
// QuantLinearDesc.h).
//
//===----------------------------------------------------------------------===//

#include "QuantLinearDesc.h"
#include "QuantKernels.h"

#include <cstdint>
#include <string>

using namespace lmopt::runtime;

const char *lmopt::runtime::quantLinearModeName(QuantLinearMode mode) {
  switch (mode) {
  case QuantLinearMode::Int8DynamicPerToken:
    return "int8_dynamic_per_token";
  case QuantLinearMode::Int8DynamicPerTensor:
    return "int8_dynamic_per_tensor";
  case QuantLinearMode::Int8Static:
    return "int8_static";
  case QuantLinearMode::BF16:
    return "bf16";
  case QuantLinearMode::Int4WeightOnly:
    return "int4_weight_only";
  case QuantLinearMode::FP16:
    return "fp16";
  }
  return "invalid";
}

bool lmopt::runtime::parseQuantLinearMode(std::string_view name,
                                          QuantLinearMode &out) {
  for (int m = 1; m <= 6; ++m)
    if (name == quantLinearModeName(QuantLinearMode(m))) {
      out = QuantLinearMode(m);
      return true;
    }
  return false;
}

bool lmopt::runtime::isInt8(QuantLinearMode mode) {
  return mode == QuantLinearMode::Int8DynamicPerToken ||
         mode == QuantLinearMode::Int8DynamicPerTensor ||
         mode == QuantLinearMode::Int8Static;
}

Status lmopt::runtime::validateQuantLinearDesc(const QuantLinearStepDesc &d,
                                               int64_t rows,
                                               const QuantLinearWeights &w,
                                               const std::string &prefix) {
  auto bad = [&](const std::string &what) {
    return Status::error(StatusCode::InvalidArgument, prefix + what);
  };
  if (std::string_view(quantLinearModeName(d.mode)) == "invalid")
    return bad("unknown mode " + std::to_string(int(d.mode)));
  int act = int(d.activation);
  if (act < 0 || act > 3)
    return bad("unknown activation " + std::to_string(act));
  if (rows <= 0 || d.inputFeatures <= 0 || d.outputFeatures <= 0)
    return bad("rows, K and N must be positive, got " + std::to_string(rows) +
               ", " + std::to_string(d.inputFeatures) + ", " +
               std::to_string(d.outputFeatures));
  int64_t elems = 0;
  if (__builtin_mul_overflow(rows, d.inputFeatures, &elems) ||
      elems > INT64_MAX / 8 ||
      __builtin_mul_overflow(rows, d.outputFeatures, &elems) ||
      elems > INT64_MAX / 8 ||
      __builtin_mul_overflow(d.inputFeatures, d.outputFeatures, &elems) ||
      elems > INT64_MAX / 8)
    return bad("sizes overflow");
  if (!w.weight)
    return bad("null weight pointer");
  if ((isInt8(d.mode) || d.mode == QuantLinearMode::Int4WeightOnly) &&
      !w.scales)
    return bad("null weight scales pointer");
  if (d.mode == QuantLinearMode::Int8Static && !(d.inputScale > 0))
    return bad("input scale " + std::to_string(d.inputScale) +
               " is not positive");
  if (d.mode == QuantLinearMode::Int8Static &&
      (d.inputZeroPoint < (d.inputSigned ? -128 : 0) ||
       d.inputZeroPoint > (d.inputSigned ? 127 : 255)))
    return bad("input zero point " + std::to_string(d.inputZeroPoint) +
               " is outside the " + (d.inputSigned ? "i8" : "u8") + " range");
  if (d.mode == QuantLinearMode::Int4WeightOnly) {
    if (d.blockSize <= 0 || d.blockSize % 2 != 0 ||
        d.inputFeatures % d.blockSize != 0)
      return bad(
          "int4 block size " + std::to_string(d.blockSize) +
          " must be even and divide K = " + std::to_string(d.inputFeatures));
  }
  if (d.inputQuantized && d.mode != QuantLinearMode::Int8DynamicPerToken)
    return bad("a quantized input is for int8_dynamic_per_token");
  if (d.quantizeOutput && (!isInt8(d.mode) || d.hasResidual))
    return bad("a quantized output is for int8 steps without a residual");
  if (d.outputBf16 && ((d.mode != QuantLinearMode::BF16 && !isInt8(d.mode)) ||
                       d.hasResidual || d.quantizeOutput || d.outputStatic))
    return bad("a bf16 output is for bf16 and int8 steps without a residual "
               "or another narrowed output");
  if (d.outputStatic && (!isInt8(d.mode) || d.hasResidual || d.quantizeOutput))
    return bad("a statically quantized output is for int8 steps without a "
               "residual or a per-token quantized output");
  if (d.outputStatic)
    if (std::string problem = quant::staticQuantProblem(
            "output", d.outputScale, d.outputZeroPoint, d.outputSigned);
        !problem.empty())
      return bad(problem);
  if (d.hasZeroPoints &&
      (d.mode == QuantLinearMode::BF16 || d.mode == QuantLinearMode::FP16))
    return bad("a bf16 or fp16 weight has no zero points");
  if (d.hasZeroPoints && !w.zeroPoints)
    return bad("null zero points pointer");
  if (!d.weightSigned && d.mode != QuantLinearMode::Int8DynamicPerTensor &&
      d.mode != QuantLinearMode::Int4WeightOnly)
    return bad("unsigned weights are for int8_dynamic_per_tensor and int4");
  return Status::ok();
}
