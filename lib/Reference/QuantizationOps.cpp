//===- QuantizationOps.cpp - quantization and integer products ------------===//
//
// `lmopt.quantize` and `lmopt.dequantize` with the scale and zero point of
// the `!quant.uniform` element type, per tensor or per axis, as ONNX
// QuantizeLinear/DequantizeLinear: round half to even, then saturate to the
// storage range. `dynamic_quantize_linear` and `matmul_integer` follow ONNX
// DynamicQuantizeLinear and MatMulInteger.
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

using QuantParams = std::pair<std::vector<double>, std::vector<int64_t>>;

/// Block-wise parameters: element [i0, ..., iR-1] takes the scale and zero
/// point at [i0/B0, ..., iR-1/BR-1], a block spanning a whole dim unless the
/// type gives its size. Zero points are read with the storage's signedness.
static FailureOr<QuantParams>
getSubChannelParams(Operation *op, quant::UniformQuantizedSubChannelType type,
                    ArrayRef<int64_t> shape) {
  SmallVector<int64_t> blockSizes(shape);
  for (auto [dim, size] :
       llvm::zip(type.getQuantizedDimensions(), type.getBlockSizes())) {
    if (dim < 0 || dim >= static_cast<int64_t>(shape.size()) || size <= 0)
      return op->emitError() << "block-wise type " << type
                             << " does not fit shape " << formatShape(shape);
    blockSizes[dim] = size;
  }
  auto paramShape =
      llvm::cast<ShapedType>(type.getScales().getType()).getShape();
  if (paramShape.size() != shape.size())
    return op->emitError() << "block-wise type " << type
                           << " does not fit shape " << formatShape(shape);
  for (auto [dim, size] : llvm::enumerate(shape))
    if (blockSizes[dim] != 0 &&
        (size + blockSizes[dim] - 1) / blockSizes[dim] != paramShape[dim])
      return op->emitError() << "block-wise type " << type
                             << " does not fit shape " << formatShape(shape);
  SmallVector<double> blockScales;
  for (APFloat scale : type.getScales().getValues<APFloat>()) {
    bool losesInfo = false;
    scale.convert(llvm::APFloat::IEEEdouble(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    blockScales.push_back(scale.convertToDouble());
  }
  SmallVector<int64_t> blockZeros;
  for (const APInt &zero : type.getZeroPoints().getValues<APInt>())
    blockZeros.push_back(type.isSigned()
                             ? zero.getSExtValue()
                             : static_cast<int64_t>(zero.getZExtValue()));
  SmallVector<int64_t> paramStrides = getStrides(paramShape);
  QuantParams params;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t at = 0;
    for (auto [dim, i] : llvm::enumerate(index))
      at +=
          (blockSizes[dim] == 0 ? 0 : i / blockSizes[dim]) * paramStrides[dim];
    params.first.push_back(blockScales[at]);
    params.second.push_back(blockZeros[at]);
  });
  return params;
}

/// For every element of `shape`, the scale and zero point that apply to it.
static FailureOr<QuantParams> getQuantParams(Operation *op, Type type,
                                             ArrayRef<int64_t> shape) {
  int64_t count = getNumElements(shape);
  if (auto uniform = llvm::dyn_cast<quant::UniformQuantizedType>(type))
    return std::make_pair(std::vector<double>(count, uniform.getScale()),
                          std::vector<int64_t>(count, uniform.getZeroPoint()));
  if (auto subChannel =
          llvm::dyn_cast<quant::UniformQuantizedSubChannelType>(type))
    return getSubChannelParams(op, subChannel, shape);
  auto perAxis = llvm::dyn_cast<quant::UniformQuantizedPerAxisType>(type);
  if (!perAxis)
    return op->emitError() << "unsupported quantized type " << type;
  int64_t axis = perAxis.getQuantizedDimension();
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
      static_cast<int64_t>(perAxis.getScales().size()) != shape[axis])
    return op->emitError() << "per-axis type " << type << " does not fit shape "
                           << formatShape(shape);
  std::vector<double> scales;
  std::vector<int64_t> zeroPoints;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    scales.push_back(perAxis.getScales()[index[axis]]);
    zeroPoints.push_back(perAxis.getZeroPoints()[index[axis]]);
  });
  return std::make_pair(std::move(scales), std::move(zeroPoints));
}

/// `x` quantized to `type`: round half to even, add the zero point,
/// saturate to the storage range.
static EvalResult quantizeTo(Operation *op, const Tensor &input, Type type) {
  auto params = getQuantParams(op, type, input.getShape());
  if (failed(params))
    return failure();
  auto quantType = llvm::cast<quant::QuantizedType>(type);
  Tensor result(type, input.getShape());
  for (int64_t i = 0, e = input.getNumElements(); i < e; ++i) {
    double scaled = std::nearbyint(input.getDouble(i) / params->first[i]) +
                    static_cast<double>(params->second[i]);
    scaled =
        std::clamp(scaled, static_cast<double>(quantType.getStorageTypeMin()),
                   static_cast<double>(quantType.getStorageTypeMax()));
    result.setInt(i, static_cast<int64_t>(scaled));
  }
  return single(std::move(result));
}

/// `(q - zero_point) * scale` as a tensor of `type`.
static EvalResult dequantizeFrom(Operation *op, const Tensor &input,
                                 Type type) {
  auto params = getQuantParams(op, input.getElementType(), input.getShape());
  if (failed(params))
    return failure();
  Tensor result(type, input.getShape());
  for (int64_t i = 0, e = input.getNumElements(); i < e; ++i)
    result.setDouble(i,
                     static_cast<double>(input.getInt(i) - params->second[i]) *
                         params->first[i]);
  return single(std::move(result));
}

FailureOr<Tensor> mlir::lmopt::reference::dequantizeToF32(Operation *op,
                                                          const Tensor &input) {
  EvalResult result =
      dequantizeFrom(op, input, Float32Type::get(op->getContext()));
  if (failed(result))
    return failure();
  return std::move((*result)[0]);
}

static EvalResult evaluateQuantize(QuantizeOp op, ArrayRef<Tensor> operands) {
  return quantizeTo(op, operands[0], getResultElementType(op));
}

static EvalResult evaluateDequantize(DequantizeOp op,
                                     ArrayRef<Tensor> operands) {
  return dequantizeFrom(op, operands[0], getResultElementType(op));
}

DynamicQuantization
mlir::lmopt::reference::dynamicQuantizeLinear(ArrayRef<double> values) {
  float min = 0.0f, max = 0.0f;
  for (double value : values) {
    min = std::min(min, static_cast<float>(value));
    max = std::max(max, static_cast<float>(value));
  }
  DynamicQuantization result;
  result.scale = (max - min) / 255.0f;
  result.values.assign(values.size(), 0);
  // All zeros: every value quantizes to the zero point 0.
  if (result.scale == 0.0f)
    return result;
  result.zeroPoint = static_cast<int64_t>(
      std::nearbyint(std::clamp(-min / result.scale, 0.0f, 255.0f)));
  for (auto [i, value] : llvm::enumerate(values)) {
    float scaled = static_cast<float>(value) / result.scale;
    result.values[i] = std::clamp<int64_t>(
        static_cast<int64_t>(std::nearbyint(scaled)) + result.zeroPoint, 0,
        255);
  }
  return result;
}

/// ONNX DynamicQuantizeLinear: the range [min(0, min x), max(0, max x)] maps
/// to [0, 255]; scale and zero point are computed in f32 as ONNX Runtime
/// does, rounding half to even.
static EvalResult evaluateDynamicQuantizeLinear(DynamicQuantizeLinearOp op,
                                                ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  DynamicQuantization quantized = dynamicQuantizeLinear(input.getFloats());
  Tensor output(getResultElementType(op, 0), input.getShape());
  Tensor scaleTensor(getResultElementType(op, 1), {});
  Tensor zeroPoint(getResultElementType(op, 2), {});
  scaleTensor.setDouble(0, quantized.scale);
  zeroPoint.setInt(0, quantized.zeroPoint);
  output.getInts() = std::move(quantized.values);
  SmallVector<Tensor> results;
  results.push_back(std::move(output));
  results.push_back(std::move(scaleTensor));
  results.push_back(std::move(zeroPoint));
  return results;
}

/// `matrix - zeroPoint`, the zero point a scalar or one entry per index of
/// dim `dim` (rows of a, columns of b).
static FailureOr<Tensor> subtractZeroPoint(Operation *op, const Tensor &matrix,
                                           const Tensor *zeroPoint, int64_t dim,
                                           StringRef what) {
  Tensor result(IntegerType::get(op->getContext(), 64), matrix.getShape());
  for (int64_t i = 0, e = matrix.getNumElements(); i < e; ++i)
    result.setInt(i, matrix.getInt(i));
  if (!zeroPoint)
    return result;
  if (zeroPoint->getNumElements() == 1) {
    for (int64_t &value : result.getInts())
      value -= zeroPoint->getInt(0);
    return result;
  }
  int64_t rank = matrix.getRank();
  int64_t axis = rank + dim;
  if (rank < 2 || zeroPoint->getRank() != 1 ||
      zeroPoint->getShape()[0] != matrix.getShape()[axis])
    return op->emitError() << what << " of shape "
                           << formatShape(zeroPoint->getShape())
                           << " does not fit an operand of shape "
                           << formatShape(matrix.getShape());
  SmallVector<int64_t> strides = getStrides(matrix.getShape());
  int64_t size = matrix.getShape()[axis];
  for (int64_t i = 0, e = matrix.getNumElements(); i < e; ++i)
    result.getInts()[i] -= zeroPoint->getInt((i / strides[axis]) % size);
  return result;
}

static EvalResult evaluateMatMulInteger(MatMulIntegerOp op,
                                        ArrayRef<Tensor> operands) {
  size_t next = 2;
  const Tensor *aZero = op.getAZeroPoint() ? &operands[next++] : nullptr;
  const Tensor *bZero = op.getBZeroPoint() ? &operands[next++] : nullptr;
  FailureOr<Tensor> a =
      subtractZeroPoint(op, operands[0], aZero, -2, "a_zero_point");
  if (failed(a))
    return failure();
  FailureOr<Tensor> b =
      subtractZeroPoint(op, operands[1], bZero, -1, "b_zero_point");
  if (failed(b))
    return failure();
  FailureOr<Tensor> product = numpyMatMul(op, *a, *b, getResultElementType(op));
  if (failed(product))
    return failure();
  return single(std::move(*product));
}

/// `quant.scast`: the stored integers reinterpreted with the other side's
/// width and signedness (the importer stores 4-bit weights as signless i4
/// and casts them to unsigned quantized storage).
static EvalResult evaluateStorageCast(quant::StorageCastOp op,
                                      ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  Type type = getResultElementType(op);
  Tensor result(type, input.getShape());
  if (input.isFloat() || result.isFloat())
    return op.emitError() << "storage cast between " << input.getElementType()
                          << " and " << type << " is not a storage cast";
  unsigned width = 64;
  bool isSigned = true;
  if (auto quantType = llvm::dyn_cast<quant::QuantizedType>(type)) {
    width = quantType.getStorageTypeIntegralWidth();
    isSigned = quantType.isSigned();
  }
  for (int64_t i = 0, e = input.getNumElements(); i < e; ++i) {
    int64_t value = input.getInt(i);
    if (width < 64) {
      uint64_t bits =
          static_cast<uint64_t>(value) & ((uint64_t(1) << width) - 1);
      uint64_t sign = uint64_t(1) << (width - 1);
      value = isSigned ? static_cast<int64_t>((bits ^ sign) - sign)
                       : static_cast<int64_t>(bits);
    }
    result.setInt(i, value);
  }
  // Integer results wrap to their own width and signedness.
  result.roundToElementType();
  return single(std::move(result));
}

void mlir::lmopt::reference::registerQuantizationEvaluators(
    EvaluatorTable &table) {
  table.add<QuantizeOp>(evaluateQuantize);
  table.add<DequantizeOp>(evaluateDequantize);
  table.add<quant::StorageCastOp>(evaluateStorageCast);
  table.add<quant::QuantizeCastOp>(
      [](quant::QuantizeCastOp op, ArrayRef<Tensor> operands) {
        return quantizeTo(op, operands[0], getResultElementType(op));
      });
  table.add<quant::DequantizeCastOp>(
      [](quant::DequantizeCastOp op, ArrayRef<Tensor> operands) {
        return dequantizeFrom(op, operands[0], getResultElementType(op));
      });
  table.add<DynamicQuantizeLinearOp>(evaluateDynamicQuantizeLinear);
  table.add<MatMulIntegerOp>(evaluateMatMulInteger);
}
