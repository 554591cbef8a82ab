//===- QuantizedOps.cpp - quantize, dequantize and storage casts ----------===//
//
// A `quant` type's parameters become the scale and zero point initializers
// of QuantizeLinear / DequantizeLinear: per tensor (scalars), per axis
// (1-D, `axis`) and block-wise (opset 21 `block_size`, scales shaped like
// the tensor with the blocked dim divided). `quant.scast` adds no node: the
// ONNX value is the integer tensor itself.
//
//===----------------------------------------------------------------------===//

#include "GraphExporter.h"

#include "mlir/IR/TypeUtilities.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_export;

void QuantParams::setAttrs(onnx::NodeProto &node) const {
  if (axis)
    setIntAttr(node, "axis", *axis);
  if (blockSize)
    setIntAttr(node, "block_size", *blockSize);
}

/// Scales in the expressed type and zero points in the storage type, both
/// of shape `shape`.
static FailureOr<QuantParams>
addParamTensors(GraphExporter &ex, quant::QuantizedType type,
                ArrayRef<double> scales, ArrayRef<int64_t> zeroPoints,
                ArrayRef<int64_t> shape, Location loc) {
  auto expressed = dyn_cast<FloatType>(type.getExpressedType());
  if (!expressed)
    return emitError(loc) << "quantized type " << type
                          << " does not express a float type";
  SmallVector<Attribute> scaleAttrs;
  for (double scale : scales)
    scaleAttrs.push_back(FloatAttr::get(expressed, scale));
  auto storage =
      IntegerType::get(type.getContext(), type.getStorageTypeIntegralWidth());
  SmallVector<APInt> zeroPointValues;
  for (int64_t zeroPoint : zeroPoints)
    zeroPointValues.push_back(APInt(storage.getWidth(), zeroPoint,
                                    /*isSigned=*/true,
                                    /*implicitTrunc=*/true));
  std::string base = getLocName(loc, "q");
  FailureOr<DataType> scaleCode = getDataType(expressed, loc);
  FailureOr<DataType> zeroPointCode = getDataType(type, loc);
  if (failed(scaleCode) || failed(zeroPointCode))
    return failure();
  QuantParams params;
  FailureOr<std::string> scale =
      ex.addElements(base + "/scale",
                     DenseElementsAttr::get(
                         RankedTensorType::get(shape, expressed), scaleAttrs),
                     *scaleCode, loc);
  FailureOr<std::string> zeroPoint = ex.addElements(
      base + "/zero_point",
      DenseElementsAttr::get(RankedTensorType::get(shape, storage),
                             zeroPointValues),
      *zeroPointCode, loc);
  if (failed(scale) || failed(zeroPoint))
    return failure();
  params.scale = *scale;
  params.zeroPoint = *zeroPoint;
  return params;
}

FailureOr<QuantParams> mlir::lmopt::onnx_export::addQuantParams(
    GraphExporter &ex, quant::QuantizedType type, ArrayRef<int64_t> shape,
    Location loc) {
  if (auto perTensor = dyn_cast<quant::UniformQuantizedType>(type))
    return addParamTensors(ex, type, {perTensor.getScale()},
                           {perTensor.getZeroPoint()}, {}, loc);

  if (auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(type)) {
    FailureOr<QuantParams> params = addParamTensors(
        ex, type, perAxis.getScales(), perAxis.getZeroPoints(),
        {static_cast<int64_t>(perAxis.getScales().size())}, loc);
    if (succeeded(params))
      params->axis = perAxis.getQuantizedDimension();
    return params;
  }

  auto blocked = dyn_cast<quant::UniformQuantizedSubChannelType>(type);
  if (!blocked)
    return emitError(loc) << "quantized type " << type
                          << " has no ONNX QuantizeLinear/DequantizeLinear "
                             "form";
  // ONNX blocks along one axis; every other dim has one scale per entry.
  std::optional<int64_t> axis;
  int64_t blockSize = 1;
  for (auto [dim, size] : blocked.getBlockSizeInfo()) {
    if (size == 1)
      continue;
    if (axis)
      return emitError(loc)
             << "quantized type " << type << " has blocks along dims " << *axis
             << " and " << dim << "; ONNX blocks along one axis only";
    axis = dim;
    blockSize = size;
  }
  DenseElementsAttr scales = blocked.getScales();
  ArrayRef<int64_t> scaleShape = scales.getType().getShape();
  bool matches = scaleShape.size() == shape.size();
  for (size_t d = 0; matches && d < shape.size(); ++d) {
    int64_t expected = static_cast<int64_t>(d) == axis
                           ? (shape[d] + blockSize - 1) / blockSize
                           : shape[d];
    matches = scaleShape[d] == expected;
  }
  if (!matches)
    return emitError(loc) << "quantized type " << type
                          << " has scales that do not cover a tensor of its "
                             "shape one per block; ONNX cannot express it";
  SmallVector<double> scaleValues;
  for (const APFloat &scale : scales.getValues<APFloat>())
    scaleValues.push_back(scale.convertToDouble());
  SmallVector<int64_t> zeroPointValues;
  for (const APInt &zeroPoint : blocked.getZeroPoints().getValues<APInt>())
    zeroPointValues.push_back(zeroPoint.getSExtValue());
  FailureOr<QuantParams> params =
      addParamTensors(ex, type, scaleValues, zeroPointValues, scaleShape, loc);
  if (succeeded(params)) {
    params->axis = axis.value_or(0);
    params->blockSize = blockSize;
  }
  return params;
}

FailureOr<std::string>
mlir::lmopt::onnx_export::emitDequantize(GraphExporter &ex, StringRef input,
                                         RankedTensorType type, Location loc) {
  auto quantized = cast<quant::QuantizedType>(type.getElementType());
  FailureOr<QuantParams> params =
      addQuantParams(ex, quantized, type.getShape(), loc);
  if (failed(params))
    return failure();
  return ex.emit("DequantizeLinear",
                 {input.str(), params->scale, params->zeroPoint}, loc,
                 [&](onnx::NodeProto &node) { params->setAttrs(node); });
}

/// QuantizeLinear / DequantizeLinear with the quantized side's parameters.
template <typename OpTy, bool IsQuantize>
static LogicalResult exportQDQ(GraphExporter &ex, Operation *op,
                               const ExportEntry &entry) {
  auto typed = cast<OpTy>(op);
  auto quantizedType = cast<RankedTensorType>(
      IsQuantize ? typed.getOutput().getType() : typed.getInput().getType());
  auto quantized =
      dyn_cast<quant::QuantizedType>(quantizedType.getElementType());
  if (!quantized)
    return op->emitError() << "expected a quantized element type, got "
                           << quantizedType;
  FailureOr<std::string> input = ex.getName(typed.getInput());
  if (failed(input))
    return failure();
  FailureOr<QuantParams> params =
      addQuantParams(ex, quantized, quantizedType.getShape(), op->getLoc());
  if (failed(params))
    return failure();
  onnx::NodeProto &node =
      ex.addNode(entry.onnxType, {*input, params->scale, params->zeroPoint},
                 {ex.defineResult(typed.getOutput())}, op->getLoc());
  params->setAttrs(node);
  return success();
}

FailureOr<std::string>
mlir::lmopt::onnx_export::nameStorageCast(GraphExporter &ex, Operation *op) {
  auto cast = llvm::cast<quant::StorageCastOp>(op);
  Type fromType = getElementTypeOrSelf(cast.getInput().getType());
  Type toType = getElementTypeOrSelf(cast.getType());
  FailureOr<DataType> from = getDataType(fromType, op->getLoc());
  FailureOr<DataType> to = getDataType(toType, op->getLoc());
  if (failed(from) || failed(to))
    return failure();
  if (*from == *to)
    return ex.getName(cast.getInput());
  auto constant = cast.getInput().getDefiningOp<ConstantOp>();
  if (!constant)
    return op->emitError()
           << "cannot export a storage cast from " << fromType << " to "
           << toType
           << " of a computed value: ONNX has no bit cast between them";
  return ex.addElements(getConstantName(constant), constant.getValue(), *to,
                        constant.getLoc());
}

/// Named where used (GraphExporter::getName), so that a weight the linear
/// writes transposed leaves no unused initializer behind.
static LogicalResult exportStorageCast(GraphExporter &, Operation *,
                                       const ExportEntry &) {
  return success();
}

template <typename OpTy> static TypeID id() { return TypeID::get<OpTy>(); }

SmallVector<ExportEntry> mlir::lmopt::onnx_export::getQuantizedOpExporters() {
  return {
      {id<QuantizeOp>(), "QuantizeLinear", exportQDQ<QuantizeOp, true>},
      {id<DequantizeOp>(), "DequantizeLinear", exportQDQ<DequantizeOp, false>},
      {id<quant::StorageCastOp>(), "", exportStorageCast},
  };
}
