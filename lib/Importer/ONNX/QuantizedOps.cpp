//===- QuantizedOps.cpp - ONNX quantized ops ------------------------------===//
//
// QuantizeLinear / DequantizeLinear with constant parameters become
// `lmopt.quantize` / `lmopt.dequantize` on `quant` types (per tensor, per
// axis, or block-wise as a sub-channel type). Integer weights get their
// quantized type through `quant.scast`. DynamicQuantizeLinear and
// MatMulInteger, whose parameters are computed at run time, map to the
// ONNX-level ops of the same names.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "QuantParams.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

namespace {
/// Constant parameters of one QuantizeLinear / DequantizeLinear node.
struct QDQParams {
  FloatType expressed;
  QuantLayout layout;
  SmallVector<double> scales;
  SmallVector<int64_t> zeroPoints;
  /// Element type of the zero point input, when present.
  IntegerType zeroPointType;
};
} // namespace

/// Reads inputs 1 (scale) and 2 (zero point) named `prefix`_scale and
/// `prefix`_zero_point, and works out their layout against `dataShape`.
static FailureOr<QDQParams> readQDQParams(NodeContext &ctx, StringRef prefix,
                                          ArrayRef<int64_t> dataShape) {
  QDQParams params;
  std::string scaleName = (prefix + "_scale").str();
  std::string zeroName = (prefix + "_zero_point").str();
  ElementsAttr scaleAttr = getConstantAttr(ctx.getInput(1));
  if (!scaleAttr)
    return ctx.emitError() << "'" << scaleName
                           << "' is not a constant; lmopt imports "
                              "quantization parameters known at import time";
  params.expressed = llvm::dyn_cast<FloatType>(scaleAttr.getElementType());
  std::optional<SmallVector<double>> scales = readFloats(scaleAttr);
  if (!params.expressed || !scales || scales->empty())
    return ctx.emitError() << "'" << scaleName
                           << "' must be a non-empty float tensor, got "
                           << scaleAttr.getType();
  // Opset 24 admits float8e8m0 (MX) scales, which are powers of two meant
  // for float8/float4 data with a separately chosen output type.
  if (llvm::isa<Float8E8M0FNUType>(params.expressed))
    return ctx.emitError() << "'" << scaleName << "' of type "
                           << scaleAttr.getType()
                           << " is not supported (float8e8m0 scales)";
  params.scales = std::move(*scales);
  ArrayRef<int64_t> scaleShape = scaleAttr.getShapedType().getShape();

  if (ctx.hasInput(2)) {
    ElementsAttr zeroAttr = getConstantAttr(ctx.getInput(2));
    if (!zeroAttr)
      return ctx.emitError() << "'" << zeroName << "' is not a constant";
    params.zeroPointType =
        llvm::dyn_cast<IntegerType>(zeroAttr.getElementType());
    std::optional<SmallVector<int64_t>> zeros = readInts(zeroAttr);
    if (!params.zeroPointType || !zeros)
      return ctx.emitError()
             << "'" << zeroName << "' of type " << zeroAttr.getType()
             << " is not supported (integer types only)";
    if (zeroAttr.getShapedType().getShape() != scaleShape)
      return ctx.emitError() << "'" << zeroName << "' of shape "
                             << formatShape(zeroAttr.getShapedType().getShape())
                             << " does not match '" << scaleName
                             << "' of shape " << formatShape(scaleShape);
    params.zeroPoints = std::move(*zeros);
  } else {
    params.zeroPoints.assign(params.scales.size(), 0);
  }

  FailureOr<int64_t> axis = ctx.getInt("axis", 1);
  FailureOr<int64_t> blockSize = ctx.getOpset() >= 21
                                     ? ctx.getInt("block_size", 0)
                                     : FailureOr<int64_t>(0);
  if (failed(axis) || failed(blockSize))
    return failure();
  QuantLayout &layout = params.layout;
  layout.paramShape = llvm::to_vector(scaleShape);
  if (*blockSize == 0 && params.scales.size() == 1 && scaleShape.size() <= 1)
    return params;
  int64_t rank = dataShape.size();
  std::optional<int64_t> normalized = normalizeAxis(*axis, rank);
  if (!normalized)
    return ctx.emitError() << "axis " << *axis << " is out of range for rank "
                           << rank;
  layout.perAxis = true;
  layout.axis = *normalized;
  layout.blockSize = *blockSize;
  int64_t dim = dataShape[layout.axis];
  if (*blockSize == 0) {
    if (scaleShape.size() != 1 ||
        (!ShapedType::isDynamic(dim) && scaleShape[0] != dim))
      return ctx.emitError()
             << "'" << scaleName << "' of shape " << formatShape(scaleShape)
             << " must be a scalar or hold one entry per "
                "index of axis "
             << layout.axis << " (" << dim << ")";
    return params;
  }
  if (*blockSize < 0)
    return ctx.emitError() << "block_size " << *blockSize
                           << " must be positive";
  SmallVector<int64_t> expected(dataShape);
  if (ShapedType::isDynamicShape(dataShape) || dim % *blockSize != 0)
    return ctx.emitError() << "block-wise quantization needs a static shape "
                              "whose axis "
                           << layout.axis << " is a multiple of block_size "
                           << *blockSize << ", got " << formatShape(dataShape);
  expected[layout.axis] = dim / *blockSize;
  if (scaleShape != ArrayRef<int64_t>(expected))
    return ctx.emitError() << "'" << scaleName << "' of shape "
                           << formatShape(scaleShape)
                           << " does not match the blocks of shape "
                           << formatShape(expected);
  return params;
}

/// The storage type QuantizeLinear produces: its zero point's type, else
/// `output_dtype` (opset 21), else uint8.
static FailureOr<IntegerType> getQuantizeStorage(NodeContext &ctx,
                                                 const QDQParams &params) {
  if (params.zeroPointType)
    return params.zeroPointType;
  MLIRContext *context = ctx.getContext();
  auto uint8 = IntegerType::get(context, 8, IntegerType::Unsigned);
  if (ctx.getOpset() < 21 || !ctx.hasAttr("output_dtype"))
    return uint8;
  FailureOr<Type> type = ctx.getElementType("output_dtype");
  if (failed(type))
    return failure();
  auto intType = llvm::dyn_cast<IntegerType>(*type);
  if (!intType || intType.getWidth() == 1)
    return ctx.emitError() << "output_dtype " << *type
                           << " is not supported (integer types only)";
  return intType;
}

/// Opset 23 attribute `name` (QuantizeLinear's `precision`, DequantizeLinear's
/// `output_dtype`) defaults to the scale's type, the only one lmopt computes
/// in; another type would change the arithmetic, so it is refused.
static LogicalResult checkSameType(NodeContext &ctx, StringRef name,
                                   FloatType scaleType) {
  if (ctx.getOpset() < 23 || !ctx.hasAttr(name))
    return success();
  FailureOr<int64_t> code = ctx.getInt(name);
  if (failed(code))
    return failure();
  if (*code == 0)
    return success();
  FailureOr<Type> type = ctx.getElementType(name);
  if (failed(type))
    return failure();
  if (*type != scaleType)
    return ctx.emitError() << "attribute '" << name << "' = " << *code << " ("
                           << *type
                           << ") is not supported: it must be the scale's "
                              "type "
                           << scaleType;
  return success();
}

static LogicalResult convertQuantizeLinear(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 3)))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  FailureOr<QDQParams> params = readQDQParams(ctx, "y", type.getShape());
  if (failed(params))
    return failure();
  if (type.getElementType() != params->expressed)
    return ctx.emitError() << "input element type " << type.getElementType()
                           << " does not match 'y_scale' element type "
                           << params->expressed;
  if (failed(checkSameType(ctx, "precision", params->expressed)))
    return failure();
  FailureOr<IntegerType> storage = getQuantizeStorage(ctx, *params);
  if (failed(storage))
    return failure();
  quant::QuantizedType quantType =
      buildQuantType(ctx, *storage, params->expressed, type.getShape(),
                     params->layout, params->scales, params->zeroPoints);
  if (!quantType)
    return failure();
  auto op = ctx.createOp<QuantizeOp>(
      RankedTensorType::get(type.getShape(), quantType), ctx.getInput(0));
  ctx.setOutput(0, op.getOutput());
  return success();
}

/// A constant of `shape` holding `values` converted to `type`.
static Value createFloatConstant(NodeContext &ctx, ArrayRef<int64_t> shape,
                                 ArrayRef<double> values, FloatType type) {
  SmallVector<APFloat> converted;
  for (double v : values) {
    APFloat value(v);
    bool lostInfo;
    value.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lostInfo);
    converted.push_back(value);
  }
  auto attr =
      DenseElementsAttr::get(RankedTensorType::get(shape, type), converted);
  return ctx.createOp<ConstantOp>(attr).getOutput();
}

/// `(float(x) - zero_point) * scale` for an unsigned integer tensor computed
/// at run time, which `quant.scast` cannot reinterpret.
static FailureOr<Value> dequantizeArithmetically(NodeContext &ctx,
                                                 const QDQParams &params) {
  RankedTensorType type = ctx.getInputType(0);
  if (params.layout.blockSize != 0)
    return ctx.emitError() << "block-wise dequantization of a computed "
                           << type.getElementType()
                           << " tensor is not supported";
  SmallVector<int64_t> paramShape;
  if (params.layout.perAxis) {
    paramShape.assign(type.getRank(), 1);
    paramShape[params.layout.axis] = params.scales.size();
  }
  SmallVector<double> zeros(params.zeroPoints.begin(), params.zeroPoints.end());
  auto floatType = RankedTensorType::get(type.getShape(), params.expressed);
  Value value = ctx.createOp<CastOp>(floatType, ctx.getInput(0)).getOutput();
  Value zero = createFloatConstant(ctx, paramShape, zeros, params.expressed);
  Value scale =
      createFloatConstant(ctx, paramShape, params.scales, params.expressed);
  value = ctx.createOp<SubOp>(floatType, value, zero).getOutput();
  return ctx.createOp<MulOp>(floatType, value, scale).getOutput();
}

static LogicalResult convertDequantizeLinear(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 3)))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  MLIRContext *context = ctx.getContext();
  IntegerType storage;
  auto inputQuant = llvm::dyn_cast<quant::QuantizedType>(type.getElementType());
  if (inputQuant)
    storage = IntegerType::get(
        context, inputQuant.getStorageTypeIntegralWidth(),
        inputQuant.isSigned() ? IntegerType::Signless : IntegerType::Unsigned);
  else
    storage = llvm::dyn_cast<IntegerType>(type.getElementType());
  if (!storage || storage.getWidth() == 1)
    return ctx.emitError() << "input 'x' of type " << type
                           << " is not supported (integer types only)";
  FailureOr<QDQParams> params = readQDQParams(ctx, "x", type.getShape());
  if (failed(params))
    return failure();
  if (params->zeroPointType && params->zeroPointType != storage)
    return ctx.emitError() << "'x_zero_point' element type "
                           << params->zeroPointType
                           << " does not match input element type " << storage;
  if (failed(checkSameType(ctx, "output_dtype", params->expressed)))
    return failure();
  auto resultType = RankedTensorType::get(type.getShape(), params->expressed);
  quant::QuantizedType quantType =
      buildQuantType(ctx, storage, params->expressed, type.getShape(),
                     params->layout, params->scales, params->zeroPoints);
  if (!quantType)
    return failure();
  Value input = ctx.getInput(0);
  Value quantized;
  if (inputQuant && inputQuant == quantType) {
    quantized = input;
  } else if (inputQuant) {
    // Different parameters on the two sides: reinterpret the stored integers.
    auto intType = RankedTensorType::get(
        type.getShape(), IntegerType::get(context, storage.getWidth()));
    Value stored =
        ctx.createOp<quant::StorageCastOp>(intType, input).getResult();
    quantized =
        ctx.createOp<quant::StorageCastOp>(
               RankedTensorType::get(type.getShape(), quantType), stored)
            .getResult();
  } else {
    quantized = castToQuantized(ctx, input, quantType);
  }
  if (!quantized) {
    FailureOr<Value> value = dequantizeArithmetically(ctx, *params);
    if (failed(value))
      return failure();
    ctx.setOutput(0, *value);
    return success();
  }
  ctx.setOutput(0,
                ctx.createOp<DequantizeOp>(resultType, quantized).getOutput());
  return success();
}

static LogicalResult convertDynamicQuantizeLinear(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  if (!type.getElementType().isF32())
    return ctx.emitError() << "input of type " << type
                           << " is not supported (float32 only, as in ONNX)";
  MLIRContext *context = ctx.getContext();
  auto uint8 = IntegerType::get(context, 8, IntegerType::Unsigned);
  auto op = ctx.createOp<DynamicQuantizeLinearOp>(
      RankedTensorType::get(type.getShape(), uint8),
      RankedTensorType::get({}, type.getElementType()),
      RankedTensorType::get({}, uint8), ctx.getInput(0));
  ctx.setOutput(0, op.getOutput());
  ctx.setOutput(1, op.getScale());
  ctx.setOutput(2, op.getZeroPoint());
  return success();
}

static bool isByteInteger(Type type) {
  auto intType = llvm::dyn_cast<IntegerType>(type);
  return intType && intType.getWidth() == 8 && !intType.isSigned();
}

static LogicalResult convertMatMulInteger(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 4)))
    return failure();
  RankedTensorType a = ctx.getInputType(0), b = ctx.getInputType(1);
  static constexpr StringLiteral names[] = {"A", "B", "a_zero_point",
                                            "b_zero_point"};
  for (size_t i = 0; i < 4; ++i) {
    if (!ctx.hasInput(i))
      continue;
    Type elementType = ctx.getInputType(i).getElementType();
    if (!isByteInteger(elementType))
      return ctx.emitError() << "input '" << names[i] << "' has element type "
                             << elementType << "; int8 or uint8 expected";
    Type matrixType = ctx.getInputType(i % 2).getElementType();
    if (i >= 2 && elementType != matrixType)
      return ctx.emitError() << "'" << names[i] << "' element type "
                             << elementType << " does not match '"
                             << names[i % 2] << "' element type " << matrixType;
  }
  std::optional<SmallVector<int64_t>> shape =
      matmulShape(a.getShape(), b.getShape());
  if (!shape)
    return ctx.emitError() << "cannot multiply shapes "
                           << formatShape(a.getShape()) << " and "
                           << formatShape(b.getShape());
  auto type =
      RankedTensorType::get(*shape, IntegerType::get(ctx.getContext(), 32));
  auto op = ctx.createOp<MatMulIntegerOp>(
      type, ctx.getInput(0), ctx.getInput(1), ctx.getInput(2), ctx.getInput(3));
  ctx.setOutput(0, op.getOutput());
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kQuantizedConverters[] = {
    {"", "QuantizeLinear", 10, kMax, convertQuantizeLinear},
    {"", "DequantizeLinear", 10, kMax, convertDequantizeLinear},
    {"", "DynamicQuantizeLinear", 11, kMax, convertDynamicQuantizeLinear},
    {"", "MatMulInteger", 10, kMax, convertMatMulInteger},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getQuantizedConverters() {
  return kQuantizedConverters;
}
