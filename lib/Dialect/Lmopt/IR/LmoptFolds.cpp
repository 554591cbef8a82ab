//===- LmoptFolds.cpp - folders and canonicalization patterns -------------===//
//
// Only rewrites that are always profitable and exact live here; everything
// that needs a cost model or a choice is a graph pass.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::lmopt;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

OpFoldResult IdentityOp::fold(FoldAdaptor) { return getInput(); }

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto inputType = llvm::cast<RankedTensorType>(getInput().getType());
  auto resultType = llvm::cast<RankedTensorType>(getOutput().getType());
  if (!resultType.hasStaticShape())
    return {};
  int64_t rank = inputType.getRank();
  // I64Attr getters return uint64_t; ONNX attributes are signed.
  int64_t start = static_cast<int64_t>(getStart());
  start = start < 0 ? start + rank : start;
  start = std::clamp<int64_t>(start, 0, rank);
  ArrayRef<int64_t> dims =
      inputType.getShape().slice(start, resultType.getDimSize(0));
  if (llvm::any_of(dims, ShapedType::isDynamic))
    return {};
  return DenseElementsAttr::get(resultType, dims);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  auto type = llvm::cast<RankedTensorType>(getOutput().getType());
  if (type.hasStaticShape() && getInput().getType() == type)
    return getInput();
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPerm()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getInput();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 &&
      getInputs().front().getType() == getOutput().getType())
    return getInputs().front();
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor) {
  auto type = llvm::cast<RankedTensorType>(getOutput().getType());
  if (type.hasStaticShape() && getInput().getType() == type)
    return getInput();
  return {};
}

OpFoldResult QuantizeOp::fold(FoldAdaptor) {
  // Requantizing with the parameters the value was dequantized from is exact.
  auto dequantize = getInput().getDefiningOp<DequantizeOp>();
  if (dequantize && dequantize.getInput().getType() == getOutput().getType())
    return dequantize.getInput();
  return {};
}

namespace {

/// transpose(transpose(x, p1), p2) -> transpose(x, p1 o p2).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a transpose");
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(inner.getPerm()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getOutput().getType(),
                                             inner.getInput(), perm);
    return success();
  }
};

/// reshape(reshape(x)) -> reshape(x) when the outer result is static, so the
/// outer shape operand (whose 0 entries refer to the inner result) can be
/// replaced by a constant.
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a reshape");
    auto type = llvm::cast<RankedTensorType>(op.getOutput().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "result shape is not static");
    auto shapeType = RankedTensorType::get({type.getRank()},
                                           rewriter.getI64Type());
    Value shape = ConstantOp::create(
        rewriter, op.getLoc(),
        DenseElementsAttr::get(shapeType, type.getShape()));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, inner.getInput(), shape);
    return success();
  }
};

/// Dropout outside training, or with ratio 0, is the identity and its mask is
/// all true.
struct RemoveInertDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getTraining() && !op.getRatio().isZero())
      return rewriter.notifyMatchFailure(op, "training dropout with ratio > 0");
    Value mask;
    if (!op.getMask().use_empty()) {
      auto maskType = llvm::cast<RankedTensorType>(op.getMask().getType());
      if (!maskType.hasStaticShape())
        return rewriter.notifyMatchFailure(
            op, "mask is used and its shape is dynamic");
      mask = ConstantOp::create(rewriter, op.getLoc(),
                                DenseElementsAttr::get(maskType, true));
    }
    rewriter.replaceAllUsesWith(op.getOutput(), op.getInput());
    if (mask)
      rewriter.replaceAllUsesWith(op.getMask(), mask);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposeReshapes>(context);
}

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<RemoveInertDropout>(context);
}
