//===- BuildUtils.cpp - shared builders for lmopt to linalg ---------------===//

#include "BuildUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::lmopt::linalg_lowering;

Type mlir::lmopt::linalg_lowering::getComputeType(Type elementType) {
  auto floatType = llvm::dyn_cast<FloatType>(elementType);
  if (floatType && floatType.getWidth() < 32)
    return Float32Type::get(elementType.getContext());
  return elementType;
}

Value mlir::lmopt::linalg_lowering::convertFloat(OpBuilder &b, Location loc,
                                                 Value value, Type to) {
  auto from = llvm::cast<FloatType>(value.getType());
  auto target = llvm::cast<FloatType>(to);
  if (from == target)
    return value;
  if (from.getWidth() < target.getWidth())
    return arith::ExtFOp::create(b, loc, target, value);
  return arith::TruncFOp::create(b, loc, target, value);
}

/// The dim of `type` that lines up with result dim `i`, or nullopt where the
/// operand has fewer dims.
static std::optional<int64_t> alignedDim(RankedTensorType type,
                                         int64_t resultRank, int64_t i) {
  int64_t j = i - (resultRank - type.getRank());
  if (j < 0)
    return std::nullopt;
  return j;
}

std::string mlir::lmopt::linalg_lowering::checkBroadcast(
    RankedTensorType resultType, ArrayRef<RankedTensorType> operandTypes) {
  int64_t rank = resultType.getRank();
  for (RankedTensorType type : operandTypes)
    if (type.getRank() > rank)
      return "operand rank exceeds the result rank";
  for (int64_t i = 0; i < rank; ++i) {
    bool anyDynamic = false,
         anyLarge = !ShapedType::isDynamic(resultType.getDimSize(i)) &&
                    resultType.getDimSize(i) > 1;
    for (RankedTensorType type : operandTypes) {
      std::optional<int64_t> j = alignedDim(type, rank, i);
      if (!j)
        continue;
      int64_t size = type.getDimSize(*j);
      anyDynamic |= ShapedType::isDynamic(size);
      anyLarge |= !ShapedType::isDynamic(size) && size > 1;
    }
    // A `?` facing a static size above 1 may be a run-time 1 that broadcasts,
    // which a static map cannot express.
    if (anyDynamic && anyLarge)
      return "dynamic dim " + std::to_string(i) +
             " may broadcast against a static size";
  }
  return "";
}

AffineMap
mlir::lmopt::linalg_lowering::getBroadcastMap(RankedTensorType operandType,
                                              RankedTensorType resultType) {
  MLIRContext *context = resultType.getContext();
  int64_t rank = resultType.getRank();
  int64_t offset = rank - operandType.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t j = 0; j < operandType.getRank(); ++j) {
    bool stretched = operandType.getDimSize(j) == 1 &&
                     resultType.getDimSize(j + offset) != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, context)
                              : getAffineDimExpr(j + offset, context));
  }
  return AffineMap::get(rank, 0, exprs, context);
}

SmallVector<AffineMap>
mlir::lmopt::linalg_lowering::getBroadcastMaps(RankedTensorType resultType,
                                               ValueRange operands) {
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(getBroadcastMap(
        llvm::cast<RankedTensorType>(operand.getType()), resultType));
  return maps;
}

void mlir::lmopt::linalg_lowering::buildDynamicDimChecks(OpBuilder &b,
                                                         Location loc,
                                                         int64_t resultRank,
                                                         ValueRange operands) {
  for (int64_t i = 0; i < resultRank; ++i) {
    SmallVector<std::pair<Value, int64_t>> dynamicDims;
    for (Value operand : operands) {
      auto type = llvm::cast<RankedTensorType>(operand.getType());
      std::optional<int64_t> j = alignedDim(type, resultRank, i);
      if (j && type.isDynamicDim(*j))
        dynamicDims.push_back({operand, *j});
    }
    if (dynamicDims.size() < 2)
      continue;
    Value first = tensor::DimOp::create(b, loc, dynamicDims.front().first,
                                        dynamicDims.front().second);
    for (auto [operand, j] : llvm::drop_begin(dynamicDims)) {
      Value size = tensor::DimOp::create(b, loc, operand, j);
      Value equal =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, first, size);
      cf::AssertOp::create(
          b, loc, equal,
          "dynamic dims that meet in a broadcast must be equal (dim " +
              std::to_string(i) + ")");
    }
  }
}

Value mlir::lmopt::linalg_lowering::buildEmptyForBroadcast(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    ValueRange operands) {
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < rank; ++i) {
    if (!resultType.isDynamicDim(i)) {
      sizes.push_back(b.getIndexAttr(resultType.getDimSize(i)));
      continue;
    }
    // The result dim is the operands' non-1 dim; a dynamic one is read at run
    // time (checkBroadcast guarantees no static size above 1 faces it).
    OpFoldResult size = b.getIndexAttr(1);
    for (Value operand : operands) {
      auto type = llvm::cast<RankedTensorType>(operand.getType());
      std::optional<int64_t> j = alignedDim(type, rank, i);
      if (!j)
        continue;
      if (type.isDynamicDim(*j)) {
        size = tensor::DimOp::create(b, loc, operand, *j).getResult();
        break;
      }
      if (type.getDimSize(*j) > 1)
        size = b.getIndexAttr(type.getDimSize(*j));
    }
    // An attribute would make the dim static and the type disagree.
    if (auto attr = llvm::dyn_cast<Attribute>(size))
      size = arith::ConstantIndexOp::create(
                 b, loc, llvm::cast<IntegerAttr>(attr).getInt())
                 .getResult();
    sizes.push_back(size);
  }
  return tensor::EmptyOp::create(b, loc, sizes, resultType.getElementType());
}

Value mlir::lmopt::linalg_lowering::buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    ValueRange operands, ScalarBodyFn body) {
  int64_t rank = resultType.getRank();
  buildDynamicDimChecks(b, loc, rank, operands);
  Value init = buildEmptyForBroadcast(b, loc, resultType, operands);
  SmallVector<AffineMap> maps = getBroadcastMaps(resultType, operands);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, operands, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}
