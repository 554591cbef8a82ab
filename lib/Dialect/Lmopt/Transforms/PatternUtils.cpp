//===- PatternUtils.cpp - matching helpers for fusion patterns ------------===//

#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

std::optional<double> lmopt::getSplatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || (!dense.isSplat() && dense.getNumElements() != 1))
    return std::nullopt;
  Type elementType = dense.getElementType();
  if (llvm::isa<FloatType>(elementType))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (elementType.isSignlessInteger() && !elementType.isInteger(1))
    return static_cast<double>(
        (*dense.getValues<APInt>().begin()).getSExtValue());
  return std::nullopt;
}

bool lmopt::isSplatNear(Value value, double expected, double tolerance) {
  std::optional<double> actual = getSplatValue(value);
  if (!actual)
    return false;
  double scale = std::max(1.0, std::fabs(expected));
  return std::fabs(*actual - expected) <= tolerance * scale;
}

bool lmopt::isConstant(Value value) {
  return static_cast<bool>(value.getDefiningOp<ConstantOp>());
}
