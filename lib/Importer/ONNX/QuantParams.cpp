//===- QuantParams.cpp - constant quantization parameters -----------------===//

#include "QuantParams.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

ElementsAttr mlir::lmopt::onnx_import::getConstantAttr(Value value) {
  auto constant = value ? value.getDefiningOp<ConstantOp>() : ConstantOp();
  return constant ? constant.getValue() : ElementsAttr();
}

/// The bytes of a resource constant, checked against its type's size.
static std::optional<ArrayRef<char>>
getResourceBytes(DenseResourceElementsAttr attr) {
  AsmResourceBlob *blob = attr.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  Type elementType = attr.getType().getElementType();
  if (!elementType.isIntOrFloat() || elementType.getIntOrFloatBitWidth() % 8)
    return std::nullopt;
  int64_t width = elementType.getIntOrFloatBitWidth() / 8;
  if (static_cast<int64_t>(data.size()) != attr.getNumElements() * width)
    return std::nullopt;
  return data;
}

std::optional<std::vector<char>>
mlir::lmopt::onnx_import::readBytes(ElementsAttr attr) {
  Type elementType = attr.getElementType();
  if (!elementType.isIntOrFloat() || elementType.getIntOrFloatBitWidth() % 8 ||
      elementType.isInteger(1))
    return std::nullopt;
  size_t width = elementType.getIntOrFloatBitWidth() / 8;
  size_t count = attr.getNumElements();
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attr)) {
    std::optional<ArrayRef<char>> data = getResourceBytes(resource);
    if (!data)
      return std::nullopt;
    return std::vector<char>(data->begin(), data->end());
  }
  auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  ArrayRef<char> raw = dense.getRawData();
  if (raw.size() < width)
    return std::nullopt;
  std::vector<char> bytes(count * width);
  for (size_t i = 0; i < count; ++i)
    std::memcpy(bytes.data() + i * width,
                raw.data() + (dense.isSplat() ? 0 : i * width), width);
  return bytes;
}

std::optional<SmallVector<double>>
mlir::lmopt::onnx_import::readFloats(ElementsAttr attr) {
  auto floatType = llvm::dyn_cast<FloatType>(attr.getElementType());
  if (!floatType)
    return std::nullopt;
  SmallVector<double> result;
  if (auto dense = llvm::dyn_cast<DenseFPElementsAttr>(attr)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      result.push_back(v.convertToDouble());
    return result;
  }
  std::optional<std::vector<char>> bytes = readBytes(attr);
  if (!bytes)
    return std::nullopt;
  unsigned width = floatType.getWidth();
  for (size_t offset = 0; offset + width / 8 <= bytes->size();
       offset += width / 8) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes->data() + offset, width / 8);
    APFloat value(floatType.getFloatSemantics(), APInt(width, bits));
    result.push_back(value.convertToDouble());
  }
  return result;
}

std::optional<SmallVector<int64_t>>
mlir::lmopt::onnx_import::readInts(ElementsAttr attr) {
  auto intType = llvm::dyn_cast<IntegerType>(attr.getElementType());
  if (!intType)
    return std::nullopt;
  bool zeroExtend = intType.isUnsigned();
  SmallVector<int64_t> result;
  if (auto dense = llvm::dyn_cast<DenseIntElementsAttr>(attr)) {
    for (const APInt &v : dense.getValues<APInt>())
      result.push_back(zeroExtend ? static_cast<int64_t>(v.getZExtValue())
                                  : v.getSExtValue());
    return result;
  }
  std::optional<std::vector<char>> bytes = readBytes(attr);
  if (!bytes)
    return std::nullopt;
  unsigned width = intType.getWidth();
  for (size_t offset = 0; offset + width / 8 <= bytes->size();
       offset += width / 8) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes->data() + offset, width / 8);
    APInt value(width, bits);
    result.push_back(zeroExtend ? static_cast<int64_t>(value.getZExtValue())
                                : value.getSExtValue());
  }
  return result;
}

IntegerType mlir::lmopt::onnx_import::getSignlessStorage(IntegerType type) {
  return IntegerType::get(type.getContext(), type.getWidth());
}

quant::QuantizedType mlir::lmopt::onnx_import::buildQuantType(
    NodeContext &ctx, IntegerType storage, FloatType expressed,
    ArrayRef<int64_t> dataShape, const QuantLayout &layout,
    ArrayRef<double> scales, ArrayRef<int64_t> zeroPoints) {
  unsigned width = storage.getWidth();
  bool isSigned = !storage.isUnsigned();
  if (width < 2 || width > 32) {
    ctx.emitError() << "quantized storage type " << storage
                    << " is not supported (2 to 32 bits)";
    return {};
  }
  int64_t min = isSigned ? -(int64_t(1) << (width - 1)) : 0;
  int64_t max =
      isSigned ? (int64_t(1) << (width - 1)) - 1 : (int64_t(1) << width) - 1;
  unsigned flags = isSigned ? quant::QuantizationFlags::Signed : 0;
  Type signless = getSignlessStorage(storage);
  auto emitError = [&] { return ctx.emitError(); };
  if (!layout.perAxis)
    return quant::UniformQuantizedType::getChecked(
        emitError, flags, signless, expressed, scales.front(),
        zeroPoints.front(), min, max);
  if (layout.blockSize == 0)
    return quant::UniformQuantizedPerAxisType::getChecked(
        emitError, flags, signless, expressed, scales, zeroPoints,
        static_cast<int32_t>(layout.axis), min, max);
  // Block-wise: every dim is blocked, by `blockSize` along the axis and by 1
  // elsewhere, so the parameter tensor has the data's rank.
  SmallVector<int32_t> dims;
  SmallVector<int64_t> blocks;
  for (int64_t i = 0, e = dataShape.size(); i < e; ++i) {
    dims.push_back(static_cast<int32_t>(i));
    blocks.push_back(i == layout.axis ? layout.blockSize : 1);
  }
  auto scaleType = RankedTensorType::get(layout.paramShape, expressed);
  SmallVector<APFloat> scaleValues;
  for (double scale : scales) {
    APFloat value(scale);
    bool lostInfo;
    value.convert(expressed.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lostInfo);
    scaleValues.push_back(value);
  }
  auto zeroType = RankedTensorType::get(layout.paramShape, signless);
  SmallVector<APInt> zeroValues;
  for (int64_t zeroPoint : zeroPoints)
    zeroValues.push_back(APInt(width, zeroPoint, /*isSigned=*/true,
                               /*implicitTrunc=*/true));
  return quant::UniformQuantizedSubChannelType::getChecked(
      emitError, flags, signless, expressed,
      DenseElementsAttr::get(scaleType, scaleValues),
      DenseElementsAttr::get(zeroType, zeroValues), dims, blocks, min, max);
}

Value mlir::lmopt::onnx_import::castToQuantized(NodeContext &ctx, Value value,
                                                quant::QuantizedType type) {
  auto tensorType = llvm::cast<RankedTensorType>(value.getType());
  auto intType = llvm::cast<IntegerType>(tensorType.getElementType());
  auto signlessType =
      RankedTensorType::get(tensorType.getShape(), getSignlessStorage(intType));
  if (!intType.isSignless()) {
    ElementsAttr attr = getConstantAttr(value);
    if (!attr)
      return {};
    // Same bits, signless element type.
    ElementsAttr signless;
    if (auto dense = llvm::dyn_cast<DenseElementsAttr>(attr))
      signless = dense.bitcast(signlessType.getElementType());
    else if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attr))
      signless =
          DenseResourceElementsAttr::get(signlessType, resource.getRawHandle());
    if (!signless)
      return {};
    value = ctx.createOp<ConstantOp>(signless).getOutput();
  }
  auto quantizedType = RankedTensorType::get(tensorType.getShape(), type);
  return ctx.createOp<quant::StorageCastOp>(quantizedType, value).getResult();
}
