//===- MaskOps.cpp - ONNX Trilu -------------------------------------------===//
//
// Trilu keeps the elements on one side of the k-th diagonal of the last two
// dims and zeroes the rest. It becomes the ops lmopt already has, as a
// causal mask would be written by hand: the column index minus the row index
// compared with k selects between the input and zero. Static dims give
// constant index vectors; dynamic ones a range over the dim read at run time,
// so a mask over a dynamic sequence length stays dynamic.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

static RankedTensorType typeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

static Value createI64Scalar(NodeContext &ctx, int64_t value) {
  auto type = RankedTensorType::get({}, ctx.getBuilder().getI64Type());
  return ctx
      .createOp<ConstantOp>(DenseElementsAttr::get(
          type, ctx.getBuilder().getI64IntegerAttr(value)))
      .getOutput();
}

Value mlir::lmopt::onnx_import::createAxisIndices(NodeContext &ctx,
                                                  Value input, int64_t axis) {
  OpBuilder &b = ctx.getBuilder();
  Type i64 = b.getI64Type();
  int64_t size = typeOf(input).getDimSize(axis);
  if (!ShapedType::isDynamic(size)) {
    SmallVector<int64_t> iota(size);
    std::iota(iota.begin(), iota.end(), 0);
    return ctx.createConstant(KnownInts::vector(iota), i64);
  }
  Value dim = ctx.createOp<ShapeOp>(RankedTensorType::get({1}, i64), input,
                                    b.getI64IntegerAttr(axis),
                                    b.getI64IntegerAttr(axis + 1))
                  .getOutput();
  Value scalar =
      ctx.createOp<ReshapeOp>(RankedTensorType::get({}, i64), dim,
                              ctx.createConstant(KnownInts::vector({}), i64),
                              b.getBoolAttr(false))
          .getOutput();
  return ctx
      .createOp<RangeOp>(RankedTensorType::get({ShapedType::kDynamic}, i64),
                         createI64Scalar(ctx, 0), scalar,
                         createI64Scalar(ctx, 1))
      .getOutput();
}

static LogicalResult convertTrilu(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 2)))
    return failure();
  FailureOr<int64_t> upper = ctx.getInt("upper", 1);
  if (failed(upper))
    return failure();
  Value input = ctx.getInput(0);
  RankedTensorType type = typeOf(input);
  int64_t rank = type.getRank();
  if (rank < 2)
    return ctx.emitError() << "input must have rank 2 or more, got " << type;
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> given = ctx.getConstantInts(1, "k");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return ctx.emitError()
             << "'k' must hold one value, got " << given->size();
    k = given->front();
  }
  // An empty tensor has nothing to mask.
  if (llvm::is_contained(type.getShape(), 0)) {
    ctx.setOutput(0, input);
    return success();
  }
  // Past the matrix's extent every k behaves alike; clamping keeps k +- 1
  // from overflowing.
  int64_t limit = int64_t(1) << 62;
  k = std::clamp(k, -limit, limit);

  OpBuilder &b = ctx.getBuilder();
  Type i64 = b.getI64Type();
  int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
  Value rowIndices = createAxisIndices(ctx, input, rank - 2);
  Value column = ctx.createOp<ReshapeOp>(
                        RankedTensorType::get({rows, 1}, i64), rowIndices,
                        ctx.createConstant(KnownInts::vector({-1, 1}), i64),
                        b.getBoolAttr(false))
                     .getOutput();
  Value colIndices = createAxisIndices(ctx, input, rank - 1);
  auto matrix = RankedTensorType::get({rows, cols}, i64);
  Value offset = ctx.createOp<SubOp>(matrix, colIndices, column).getOutput();
  // Upper keeps col - row >= k, lower keeps col - row <= k.
  auto maskType = RankedTensorType::get({rows, cols}, b.getI1Type());
  Value keep = *upper ? ctx.createOp<GreaterOp>(maskType, offset,
                                                createI64Scalar(ctx, k - 1))
                            .getOutput()
                      : ctx.createOp<LessOp>(maskType, offset,
                                             createI64Scalar(ctx, k + 1))
                            .getOutput();
  Type elementType = type.getElementType();
  Value zero =
      ctx.createOp<ConstantOp>(
             DenseElementsAttr::get(RankedTensorType::get({}, elementType),
                                    b.getZeroAttr(elementType)))
          .getOutput();
  ctx.setOutput(0, ctx.createOp<WhereOp>(type, keep, input, zero).getOutput());
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kMaskConverters[] = {
    {"", "Trilu", 14, kMax, convertTrilu},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getMaskConverters() {
  return kMaskConverters;
}
