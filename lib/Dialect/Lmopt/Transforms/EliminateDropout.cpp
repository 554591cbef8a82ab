//===- EliminateDropout.cpp - remove inference dropout --------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_ELIMINATEDROPOUTPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static bool isInert(DropoutOp op) {
  return !op.getTraining() || op.getRatio().isZero();
}

/// An all-true tensor shaped like `like`, built without knowing its dims.
static Value buildAllTrue(PatternRewriter &rewriter, Location loc,
                          Value like, RankedTensorType maskType) {
  if (maskType.hasStaticShape())
    return ConstantOp::create(rewriter, loc,
                              DenseElementsAttr::get(maskType, true));
  auto shapeType =
      RankedTensorType::get({maskType.getRank()}, rewriter.getI64Type());
  Value shape = ShapeOp::create(rewriter, loc, shapeType, like,
                                rewriter.getI64IntegerAttr(0), IntegerAttr());
  return ConstantOfShapeOp::create(rewriter, loc, maskType, shape,
                                   rewriter.getBoolAttr(true));
}

namespace {

struct EliminateInertDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if (!isInert(op))
      return rewriter.notifyMatchFailure(op, "training dropout with ratio > 0");
    if (!op.getMask().use_empty()) {
      auto maskType = llvm::cast<RankedTensorType>(op.getMask().getType());
      rewriter.replaceAllUsesWith(
          op.getMask(),
          buildAllTrue(rewriter, op.getLoc(), op.getInput(), maskType));
    }
    rewriter.replaceAllUsesWith(op.getOutput(), op.getInput());
    rewriter.eraseOp(op);
    return success();
  }
};

struct EliminateDropoutPass
    : lmopt::impl::EliminateDropoutPassBase<EliminateDropoutPass> {
  void runOnOperation() override {
    int64_t kept = 0, total = 0;
    getOperation()->walk([&](DropoutOp op) {
      ++total;
      kept += !isInert(op);
    });
    RewritePatternSet patterns(&getContext());
    populateEliminateDropoutPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numRemoved += total - kept;
    numKept += kept;
  }
};

} // namespace

void mlir::lmopt::populateEliminateDropoutPatterns(
    RewritePatternSet &patterns) {
  patterns.add<EliminateInertDropout>(patterns.getContext());
}
