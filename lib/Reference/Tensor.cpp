//===- Tensor.cpp - concrete tensors of the reference evaluator -----------===//

#include "lmopt/Reference/Tensor.h"

#include "lmopt/Support/ResourceBlob.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::lmopt::reference;

int64_t mlir::lmopt::reference::getNumElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

SmallVector<int64_t>
mlir::lmopt::reference::getStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

FailureOr<SmallVector<int64_t>>
mlir::lmopt::reference::broadcast(ArrayRef<int64_t> lhs,
                                  ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    result[i] = l == 1 ? r : l;
  }
  return result;
}

std::vector<int64_t>
mlir::lmopt::reference::broadcastIndices(ArrayRef<int64_t> inShape,
                                         ArrayRef<int64_t> outShape) {
  size_t rank = outShape.size();
  size_t offset = rank - inShape.size();
  SmallVector<int64_t> inStrides = getStrides(inShape);
  // Stride 0 along broadcast dims; walk the output with an odometer.
  SmallVector<int64_t> strides(rank, 0);
  for (size_t i = 0; i < inShape.size(); ++i)
    strides[offset + i] = inShape[i] == 1 ? 0 : inStrides[i];
  int64_t count = getNumElements(outShape);
  std::vector<int64_t> indices(count);
  SmallVector<int64_t> counter(rank, 0);
  int64_t current = 0;
  for (int64_t n = 0; n < count; ++n) {
    indices[n] = current;
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++counter[d] < outShape[d]) {
        current += strides[d];
        break;
      }
      current -= strides[d] * (outShape[d] - 1);
      counter[d] = 0;
    }
  }
  return indices;
}

std::string mlir::lmopt::reference::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

Tensor::Tensor(Type elementType, ArrayRef<int64_t> shape)
    : elementType(elementType), shape(shape),
      floatElements(llvm::isa<FloatType>(elementType)) {
  if (floatElements)
    floats.assign(reference::getNumElements(shape), 0.0);
  else
    ints.assign(reference::getNumElements(shape), 0);
}

int64_t Tensor::getNumElements() const {
  return reference::getNumElements(shape);
}

Tensor Tensor::take(ArrayRef<int64_t> indices,
                    ArrayRef<int64_t> newShape) const {
  Tensor result(elementType, newShape);
  for (auto [i, index] : llvm::enumerate(indices)) {
    if (floatElements)
      result.floats[i] = floats[index];
    else
      result.ints[i] = ints[index];
  }
  return result;
}

Tensor Tensor::reshaped(ArrayRef<int64_t> newShape) const {
  Tensor result = *this;
  result.shape.assign(newShape.begin(), newShape.end());
  return result;
}

static double roundToFloat(double value, FloatType type) {
  if (type.isF64() || std::isnan(value))
    return value;
  if (type.isF32())
    return static_cast<double>(static_cast<float>(value));
  llvm::APFloat converted(value);
  bool losesInfo = false;
  converted.convert(type.getFloatSemantics(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  converted.convert(llvm::APFloat::IEEEdouble(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return converted.convertToDouble();
}

/// Wraps `value` to the integer type, two's complement.
static int64_t wrapToInteger(int64_t value, IntegerType type) {
  unsigned width = type.getWidth();
  if (width == 1)
    return value != 0;
  if (width >= 64)
    return value;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t bits = static_cast<uint64_t>(value) & mask;
  if (type.isUnsigned())
    return static_cast<int64_t>(bits);
  uint64_t signBit = uint64_t(1) << (width - 1);
  return static_cast<int64_t>((bits ^ signBit) - signBit);
}

void Tensor::roundToElementType() {
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType)) {
    for (double &value : floats)
      value = roundToFloat(value, floatType);
    return;
  }
  if (auto intType = llvm::dyn_cast<IntegerType>(elementType)) {
    for (int64_t &value : ints)
      value = wrapToInteger(value, intType);
    return;
  }
  if (auto quantType = llvm::dyn_cast<quant::QuantizedType>(elementType))
    for (int64_t &value : ints)
      value = std::clamp(value, quantType.getStorageTypeMin(),
                         quantType.getStorageTypeMax());
}

/// Float to integer with ONNX Cast semantics: truncation toward zero. Values
/// outside int64 saturate (ONNX leaves them undefined).
static int64_t truncateToInt64(double value) {
  if (std::isnan(value))
    return 0;
  double truncated = std::trunc(value);
  if (truncated >= 9.2233720368547758e18)
    return std::numeric_limits<int64_t>::max();
  if (truncated <= -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(truncated);
}

Tensor Tensor::castTo(Type type) const {
  Tensor result(type, shape);
  bool toBool = type.isInteger(1);
  int64_t count = getNumElements();
  for (int64_t i = 0; i < count; ++i) {
    if (result.floatElements) {
      result.floats[i] = getDouble(i);
      continue;
    }
    if (toBool)
      result.ints[i] = floatElements ? floats[i] != 0.0 : ints[i] != 0;
    else
      result.ints[i] = floatElements ? truncateToInt64(floats[i]) : ints[i];
  }
  result.roundToElementType();
  return result;
}

/// Reads `count` little-endian elements of `type` from `bytes`.
static LogicalResult readRawElements(ArrayRef<char> bytes, Type type,
                                     int64_t count, Tensor &tensor,
                                     Location loc) {
  unsigned width = type.isInteger(1) ? 8 : type.getIntOrFloatBitWidth();
  if (width % 8 != 0)
    return emitError(loc) << "constant of element type " << type
                          << " is not byte-addressable";
  size_t itemSize = width / 8;
  if (bytes.size() != itemSize * static_cast<size_t>(count))
    return emitError(loc) << "constant blob has " << bytes.size()
                          << " bytes, expected " << itemSize * count << " for "
                          << count << " elements of " << type;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * itemSize, itemSize);
    if (auto floatType = llvm::dyn_cast<FloatType>(type)) {
      llvm::APFloat value(floatType.getFloatSemantics(),
                          llvm::APInt(width, bits));
      bool losesInfo = false;
      value.convert(llvm::APFloat::IEEEdouble(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      tensor.setDouble(i, value.convertToDouble());
      continue;
    }
    llvm::APInt value(width, bits);
    tensor.setInt(i, type.isUnsignedInteger() || type.isInteger(1)
                         ? static_cast<int64_t>(value.getZExtValue())
                         : value.getSExtValue());
  }
  tensor.roundToElementType();
  return success();
}

FailureOr<Tensor> Tensor::fromAttr(ElementsAttr attr, Location loc) {
  auto type = llvm::cast<ShapedType>(attr.getType());
  Type elementType = type.getElementType();
  if (!type.hasStaticShape())
    return emitError(loc) << "constant has a dynamic shape";
  if (!llvm::isa<FloatType, IntegerType>(elementType))
    return emitError(loc) << "constant of element type " << elementType
                          << " is not supported";
  Tensor tensor(elementType, type.getShape());
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(attr)) {
    if (tensor.isFloat()) {
      for (auto [i, value] : llvm::enumerate(dense.getValues<APFloat>())) {
        bool losesInfo = false;
        APFloat copy = value;
        copy.convert(llvm::APFloat::IEEEdouble(),
                     llvm::APFloat::rmNearestTiesToEven, &losesInfo);
        tensor.floats[i] = copy.convertToDouble();
      }
      return tensor;
    }
    bool zeroExtend =
        elementType.isUnsignedInteger() || elementType.isInteger(1);
    for (auto [i, value] : llvm::enumerate(dense.getValues<APInt>()))
      tensor.ints[i] = zeroExtend ? static_cast<int64_t>(value.getZExtValue())
                                  : value.getSExtValue();
    return tensor;
  }
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attr)) {
    FailureOr<ArrayRef<char>> data = getResourceBlobData(resource, loc);
    if (failed(data) ||
        failed(readRawElements(*data, elementType, tensor.getNumElements(),
                               tensor, loc)))
      return failure();
    return tensor;
  }
  return emitError(loc) << "constant attribute " << attr
                        << " is neither dense nor dense_resource";
}
