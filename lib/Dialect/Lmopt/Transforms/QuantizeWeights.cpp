//===- QuantizeWeights.cpp - weight quantization arithmetic ---------------===//
//
// Scales are computed in f32 and values rounded half to even in f32, as the
// kernels and the NumPy checks of test/Dialect/Lmopt/Transforms compute them.
//
//===----------------------------------------------------------------------===//

#include "QuantizeWeights.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Format/Float16.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

FailureOr<std::vector<float>> mlir::lmopt::readF32Constant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto type = llvm::cast<ShapedType>(value.getType());
  if (!constant || !type.getElementType().isF32() || !type.hasStaticShape())
    return failure();
  int64_t count = type.getNumElements();
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue())) {
    auto values = dense.getValues<float>();
    return std::vector<float>(values.begin(), values.end());
  }
  auto resource =
      llvm::dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  if (!resource)
    return failure();
  ArrayRef<char> data = resource.getData();
  std::vector<float> values(count);
  if (static_cast<int64_t>(data.size()) == count * 4)
    std::memcpy(values.data(), data.data(), data.size());
  else if (data.size() == 4) // a splat blob
    std::fill(values.begin(), values.end(),
              *reinterpret_cast<const float *>(data.data()));
  else
    return failure(); // a missing blob
  return values;
}

/// `round_half_even(x / scale) + zeroPoint`, clamped to [lo, hi].
static int8_t quantizeValue(float x, float scale, int64_t zeroPoint, int64_t lo,
                            int64_t hi) {
  float q = std::nearbyint(x / scale) + static_cast<float>(zeroPoint);
  return static_cast<int8_t>(std::clamp(static_cast<int64_t>(q), lo, hi));
}

QuantizedWeight mlir::lmopt::quantizeInt8Weight(MLIRContext *context,
                                                ArrayRef<float> w,
                                                ArrayRef<int64_t> shape,
                                                int64_t outAxis,
                                                bool perTensor) {
  int64_t rows = shape[0], cols = shape[1];
  int64_t channels = perTensor ? 1 : shape[outAxis];
  auto channelOf = [&](int64_t r, int64_t c) {
    return perTensor ? 0 : (outAxis == 0 ? r : c);
  };
  std::vector<float> maxAbs(channels, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float &m = maxAbs[channelOf(r, c)];
      m = std::max(m, std::fabs(w[r * cols + c]));
    }
  SmallVector<double> scales;
  std::vector<float> floatScales;
  for (float m : maxAbs) {
    floatScales.push_back(m == 0.0f ? 1.0f : m / 127.0f);
    scales.push_back(floatScales.back());
  }
  QuantizedWeight result;
  result.values.resize(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      result.values[r * cols + c] = quantizeValue(
          w[r * cols + c], floatScales[channelOf(r, c)], 0, -127, 127);
  auto i8 = IntegerType::get(context, 8);
  auto f32 = Float32Type::get(context);
  unsigned flags = quant::QuantizationFlags::Signed;
  if (perTensor)
    result.type = quant::UniformQuantizedType::get(flags, i8, f32, scales[0], 0,
                                                   -128, 127);
  else
    result.type = quant::UniformQuantizedPerAxisType::get(
        flags, i8, f32, scales, SmallVector<int64_t>(channels, 0),
        static_cast<int32_t>(outAxis), -128, 127);
  result.bytes = rows * cols + channels * 4;
  return result;
}

float mlir::lmopt::roundToF16(float x) {
  if (!(x > 0.0f))
    return 0.0f;
  // Saturated, not infinite: the result is a scale.
  return std::min(rt::halfToFloat(rt::floatToHalf(x)), 65504.0f);
}

/// Clip ratios tried per block, 1.0 down to 0.5 in steps of 0.05.
static constexpr int kClipSteps = 11;
static float clipRatio(int i) { return float(20 - i) / 20.0f; }

namespace {
/// One block's parameters.
struct BlockParams {
  float scale = 1.0f;
  int64_t zeroPoint = 0;
};
} // namespace

/// Squared error of `values` quantized with `p` onto [lo, hi]; stops once
/// it reaches `bound` (the terms are not negative, so it cannot win then).
static double blockError(ArrayRef<float> values, BlockParams p, int64_t lo,
                         int64_t hi, double bound) {
  double error = 0.0;
  for (float x : values) {
    float q = std::clamp(std::nearbyint(x / p.scale) + float(p.zeroPoint),
                         float(lo), float(hi));
    float d = x - (q - float(p.zeroPoint)) * p.scale;
    error += double(d) * double(d);
    if (error >= bound)
      break;
  }
  return error;
}

/// The block's parameters: over the clip ratios (both ends of the range
/// independently when asymmetric), the f16-representable scale whose
/// quantization has the least squared error; the first such on ties.
static BlockParams searchBlock(ArrayRef<float> values, bool symmetric) {
  float lo = 0.0f, hi = 0.0f;
  for (float x : values) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  BlockParams best;
  double bestError = std::numeric_limits<double>::infinity();
  auto consider = [&](float scale, float clippedLo) {
    if (scale == 0.0f)
      return;
    BlockParams p;
    p.scale = scale;
    if (!symmetric)
      p.zeroPoint = std::clamp<int64_t>(
          static_cast<int64_t>(std::nearbyint(-clippedLo / scale)), 0, 15);
    double error = blockError(values, p, symmetric ? -7 : 0,
                              symmetric ? 7 : 15, bestError);
    if (error < bestError) {
      bestError = error;
      best = p;
    }
  };
  if (symmetric) {
    float m = std::max(-lo, hi);
    for (int i = 0; i < kClipSteps && m != 0.0f; ++i)
      consider(roundToF16(clipRatio(i) * m / 7.0f), 0.0f);
    return best; // scale 1 for a block of zeros (or of f16-tiny values)
  }
  for (int i = 0; i < kClipSteps && hi != lo; ++i)
    for (int j = 0; j < kClipSteps; ++j) {
      float cLo = clipRatio(i) * lo, cHi = clipRatio(j) * hi;
      consider(roundToF16((cHi - cLo) / 15.0f), cLo);
    }
  return best;
}

namespace {
/// The int4 grid of a weight held as [N, K] (one output channel per row):
/// each row's blocks get their parameters from `searchBlock`, and the codes
/// are kept. GPTQ drives it with error-updated values; rounding to nearest
/// with the weight's own.
class Int4Grid : public RoundingGrid {
public:
  Int4Grid(int64_t n, int64_t k, int64_t block, bool symmetric)
      : k(k), block(block), symmetric(symmetric), codes(n * k),
        params(n * (k / block)) {}

  void chooseBlock(int64_t row, int64_t col, const float *values,
                   int64_t count) override {
    params[row * (k / block) + col / block] =
        searchBlock(ArrayRef<float>(values, count), symmetric);
  }
  float quantize(int64_t row, int64_t col, float value) override {
    BlockParams p = params[row * (k / block) + col / block];
    int8_t q = symmetric ? quantizeValue(value, p.scale, 0, -7, 7)
                         : quantizeValue(value, p.scale, p.zeroPoint, 0, 15);
    codes[row * k + col] = q;
    return float(q - p.zeroPoint) * p.scale;
  }

  int64_t k, block;
  bool symmetric;
  /// [N, K] and [N, K / block].
  std::vector<int8_t> codes;
  std::vector<BlockParams> params;
};
} // namespace

FailureOr<QuantizedWeight> mlir::lmopt::quantizeInt4Weight(
    MLIRContext *context, ArrayRef<float> w, ArrayRef<int64_t> shape,
    int64_t outAxis, int64_t block, bool symmetric,
    function_ref<LogicalResult(ArrayRef<float>, int64_t, RoundingGrid &)>
        round) {
  int64_t rows = shape[0], cols = shape[1];
  int64_t kAxis = 1 - outAxis;
  int64_t n = shape[outAxis], k = shape[kAxis];
  // The weight as [N, K].
  std::vector<float> nk(w.begin(), w.end());
  if (outAxis == 1)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        nk[c * rows + r] = w[r * cols + c];
  Int4Grid grid(n, k, block, symmetric);
  if (round) {
    if (failed(round(nk, n, grid)))
      return failure();
  } else {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        if (c % block == 0)
          grid.chooseBlock(r, c, &nk[r * k + c], block);
        grid.quantize(r, c, nk[r * k + c]);
      }
  }
  // Parameters are laid out like the weight: [N, K/B] or [K/B, N].
  SmallVector<int64_t> paramShape(shape);
  paramShape[kAxis] /= block;
  int64_t numParams = paramShape[0] * paramShape[1];
  QuantizedWeight result;
  result.values.resize(w.size());
  SmallVector<APFloat> scaleValues(numParams, APFloat(1.0f));
  SmallVector<APInt> zeroValues(numParams, APInt(4, 0));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      int64_t at = outAxis == 0 ? r * cols + c : c * cols + r;
      result.values[at] = grid.codes[r * k + c];
      if (c % block)
        continue;
      BlockParams p = grid.params[r * (k / block) + c / block];
      int64_t param =
          outAxis == 0 ? r * (k / block) + c / block : (c / block) * n + r;
      scaleValues[param] = APFloat(p.scale);
      zeroValues[param] = APInt(4, p.zeroPoint, /*isSigned=*/true,
                                /*implicitTrunc=*/true);
    }
  auto i4 = IntegerType::get(context, 4);
  auto f32 = Float32Type::get(context);
  SmallVector<int64_t> blocks = {1, 1};
  blocks[kAxis] = block;
  result.type = quant::UniformQuantizedSubChannelType::get(
      symmetric ? quant::QuantizationFlags::Signed : 0, i4, f32,
      DenseElementsAttr::get(RankedTensorType::get(paramShape, f32),
                             scaleValues),
      DenseElementsAttr::get(RankedTensorType::get(paramShape, i4), zeroValues),
      {0, 1}, blocks, symmetric ? -8 : 0, symmetric ? 7 : 15);
  // Two values per byte, f16 scales, u4 zero points two per byte.
  result.bytes = (rows * cols + 1) / 2 + numParams * 2 +
                 (symmetric ? 0 : (numParams + 1) / 2);
  return result;
}

quant::UniformQuantizedType
mlir::lmopt::getStaticInputType(MLIRContext *context, InputRange range) {
  float lo = std::min(0.0f, static_cast<float>(range.min));
  float hi = std::max(0.0f, static_cast<float>(range.max));
  float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  int64_t zeroPoint = std::clamp<int64_t>(
      static_cast<int64_t>(std::nearbyint(-lo / scale)), 0, 255);
  return quant::UniformQuantizedType::get(
      /*flags=*/0, IntegerType::get(context, 8), Float32Type::get(context),
      scale, zeroPoint, 0, 255);
}
