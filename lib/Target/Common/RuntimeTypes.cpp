//===- RuntimeTypes.cpp - MLIR element types to runtime dtypes ------------===//
//
// The plan builder's, the calibration runner's and the quantized steps'
// shared answer to "which runtime dtype holds this element type".
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/Common/RuntimeTypes.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
namespace rt = ::lmopt::runtime;

std::optional<rt::DType> mlir::lmopt::getRuntimeDType(Type type) {
  // A quantized tensor is stored as its integers, sub-byte widths one per
  // byte as the dialect's constants hold them.
  if (auto quantType = llvm::dyn_cast<quant::QuantizedType>(type)) {
    unsigned width = quantType.getStorageTypeIntegralWidth();
    if (width > 32)
      return std::nullopt;
    width = width <= 8 ? 8 : width <= 16 ? 16 : 32;
    type = IntegerType::get(type.getContext(), width,
                            quantType.isSigned() ? IntegerType::Signless
                                                 : IntegerType::Unsigned);
  }
  if (type.isF32())
    return rt::DType::F32;
  if (type.isF64())
    return rt::DType::F64;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isBF16())
    return rt::DType::BF16;
  auto integer = llvm::dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return rt::DType::Bool;
  case 8:
    return isUnsigned ? rt::DType::U8 : rt::DType::I8;
  case 16:
    return isUnsigned ? rt::DType::U16 : rt::DType::I16;
  case 32:
    return isUnsigned ? rt::DType::U32 : rt::DType::I32;
  case 64:
    return isUnsigned ? rt::DType::U64 : rt::DType::I64;
  default:
    return std::nullopt;
  }
}
