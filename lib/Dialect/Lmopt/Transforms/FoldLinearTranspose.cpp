//===- FoldLinearTranspose.cpp - products that read a transpose in place --===//
//
//   matmul(transpose(x), W) -> linear(x, W) {transpose_input}
//   linear(transpose(x), W) -> linear(x, W) {transpose_input}
// for rank-2, statically shaped x and W: the library reads x through its
// strides, so the transposed copy (a generated kernel in the backward
// pass's weight gradients) goes away once nothing else reads it.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_FOLDLINEARTRANSPOSEPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kKind = "linear_transposed_input";

/// The input of `lhs` when it is a rank-2 [1, 0] transpose that a product
/// with `rhs` may read in place, or why not.
static FailureOr<Value> transposedSource(Value lhs, Value rhs,
                                         std::string &why) {
  auto transpose = lhs.getDefiningOp<TransposeOp>();
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{1, 0}) {
    why = "the left operand is not a [1, 0] transpose";
    return failure();
  }
  Value source = transpose.getInput();
  auto sourceType = llvm::cast<RankedTensorType>(source.getType());
  auto rhsType = llvm::cast<RankedTensorType>(rhs.getType());
  if (sourceType.getRank() != 2 || rhsType.getRank() != 2 ||
      !sourceType.hasStaticShape() || !rhsType.hasStaticShape()) {
    why = "the operands are not rank-2 with static dims";
    return failure();
  }
  if (!llvm::isa<FloatType>(sourceType.getElementType()) ||
      sourceType.getElementType() != rhsType.getElementType()) {
    why = "the operands are not floats of one type";
    return failure();
  }
  return source;
}

namespace {

struct FoldMatMulTranspose : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<Value> source = transposedSource(op.getLhs(), op.getRhs(), why);
    if (failed(source))
      return rewriter.notifyMatchFailure(op, why);
    if (getElementTypeOrSelf(op.getOutput()) != getElementTypeOrSelf(op.getRhs()))
      return rewriter.notifyMatchFailure(op, "the result type differs");
    getFusionReport(getContext()).recordFused(kKind, op.getLoc());
    rewriter.replaceOpWithNewOp<LinearOp>(
        op, op.getOutput().getType(), *source, op.getRhs(), Value(), Value(),
        /*transpose_weight=*/false, Activation::none, InputQuantization::none,
        /*transpose_input=*/true);
    return success();
  }
};

struct FoldLinearInputTranspose : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getTransposeInput())
      return rewriter.notifyMatchFailure(op, "already reads a transpose");
    if (op.getInputQuantization() != InputQuantization::none)
      return rewriter.notifyMatchFailure(op, "quantizes its input");
    std::string why;
    FailureOr<Value> source =
        transposedSource(op.getInput(), op.getWeight(), why);
    if (failed(source))
      return rewriter.notifyMatchFailure(op, why);
    getFusionReport(getContext()).recordFused(kKind, op.getLoc());
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(*source);
      op.setTransposeInput(true);
    });
    return success();
  }
};

struct FoldLinearTransposePass
    : lmopt::impl::FoldLinearTransposePassBase<FoldLinearTransposePass> {
  void runOnOperation() override {
    getFusionReport(&getContext()).registerKind(kKind);
    RewritePatternSet patterns(&getContext());
    populateFoldLinearTransposePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::lmopt::populateFoldLinearTransposePatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldMatMulTranspose, FoldLinearInputTranspose>(
      patterns.getContext());
}
