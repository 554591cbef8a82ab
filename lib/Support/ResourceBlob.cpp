//===- ResourceBlob.cpp - the bytes of a dense_resource constant ----------===//

#include "lmopt/Support/ResourceBlob.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

FailureOr<ArrayRef<char>>
mlir::lmopt::getResourceBlobData(DenseResourceElementsAttr attr, Location loc) {
  AsmResourceBlob *blob = attr.getRawHandle().getBlob();
  if (!blob)
    return emitError(loc) << "constant's dense_resource blob '"
                          << attr.getRawHandle().getKey() << "' has no data";
  return blob->getData();
}

size_t mlir::lmopt::getConstantElementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : (bits + 7) / 8;
}

FailureOr<ArrayRef<uint8_t>>
mlir::lmopt::getConstantBytes(ElementsAttr attr, Location loc,
                              std::vector<uint8_t> &storage) {
  auto type = llvm::cast<ShapedType>(attr.getType());
  Type elementType = type.getElementType();
  size_t itemSize = getConstantElementBytes(elementType);
  size_t count = type.getNumElements();
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attr)) {
    FailureOr<ArrayRef<char>> blobData = getResourceBlobData(resource, loc);
    if (failed(blobData))
      return failure();
    ArrayRef<char> data = *blobData;
    if (data.size() != itemSize * count)
      return emitError(loc)
             << "constant's dense_resource blob '"
             << resource.getRawHandle().getKey() << "' has " << data.size()
             << " bytes, expected " << itemSize * count << " for " << type;
    return ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data.data()),
                             data.size());
  }
  auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return emitError(loc) << "constant attribute of type " << type
                          << " is neither dense nor dense_resource";
  if (!dense.isSplat() && !elementType.isInteger(1)) {
    ArrayRef<char> raw = dense.getRawData();
    return ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(raw.data()),
                             raw.size());
  }
  storage.resize(itemSize * count);
  auto store = [&](size_t index, const APInt &bits) {
    uint64_t word = bits.getZExtValue();
    for (size_t b = 0; b < itemSize; ++b)
      storage[index * itemSize + b] = uint8_t(word >> (8 * b));
  };
  if (llvm::isa<FloatType>(elementType)) {
    for (auto [i, value] : llvm::enumerate(dense.getValues<APFloat>()))
      store(i, value.bitcastToAPInt());
  } else {
    for (auto [i, value] : llvm::enumerate(dense.getValues<APInt>()))
      store(i, value);
  }
  return ArrayRef<uint8_t>(storage);
}

FailureOr<DenseElementsAttr> mlir::lmopt::getDenseAttr(ElementsAttr attr,
                                                       Location loc) {
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(attr))
    return dense;
  std::vector<uint8_t> storage;
  FailureOr<ArrayRef<uint8_t>> bytes = getConstantBytes(attr, loc, storage);
  if (failed(bytes))
    return failure();
  auto type = llvm::cast<ShapedType>(attr.getType());
  Type elementType = type.getElementType();
  if (elementType.isInteger(1)) {
    SmallVector<bool> values(bytes->begin(), bytes->end());
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  size_t itemSize = getConstantElementBytes(elementType);
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> words;
  for (size_t i = 0; i < bytes->size(); i += itemSize) {
    uint64_t word = 0;
    for (size_t b = 0; b < itemSize; ++b)
      word |= uint64_t((*bytes)[i + b]) << (8 * b);
    words.emplace_back(width, word);
  }
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> values;
    for (const APInt &word : words)
      values.emplace_back(floatType.getFloatSemantics(), word);
    return DenseElementsAttr::get(type, values);
  }
  return DenseElementsAttr::get(type, words);
}
