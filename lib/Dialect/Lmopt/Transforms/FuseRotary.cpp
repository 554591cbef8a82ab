//===- FuseRotary.cpp - rotate-half rotary embeddings to lmopt.rotary -----===//
//
// Hugging Face's Llama family applies rotary position embeddings as
//   x * cos + rotate_half(x) * sin,  rotate_half(x) = concat(-x2, x1)
// with x1, x2 the halves of the last dim, once for the queries and once for
// the keys of every layer. The anchor is the concat of rotate_half; the
// matcher checks its halves, then walks down through `* sin` to the add with
// `x * cos` (operands of the products and the sum in either order).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_FUSEROTARYPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kKind = "rotary";

namespace {
struct RotaryMatch {
  Value input, cos, sin;
  AddOp root; // replaced by the rotary
};
} // namespace

using RotaryResult = FusionMatch<RotaryMatch>;

static RotaryResult matchRotary(ConcatOp concat) {
  if (concat.getInputs().size() != 2)
    return notCandidate();
  auto neg = concat.getInputs()[0].getDefiningOp<NegOp>();
  if (!neg)
    return notCandidate();
  // rotate_half: concat(-x[..., half:], x[..., :half]) along the last dim.
  ArrayRef<int64_t> outShape = shapeOf(concat.getOutput());
  if (outShape.empty() || ShapedType::isDynamic(outShape.back()) ||
      outShape.back() % 2 != 0)
    return notCandidate();
  int64_t half = outShape.back() / 2;
  Value x = sliceOfLastDim(neg.getInput(), half, /*toEnd=*/true, 0);
  if (!x || sliceOfLastDim(concat.getInputs()[1], 0, false, half) != x)
    return notCandidate();
  if (normalizeAxis(concat.getAxis(), outShape.size()) !=
      int64_t(outShape.size()) - 1)
    return nearMiss("rotate_half concatenates along axis " +
                    llvm::Twine(concat.getAxis()) + ", not the last");
  if (concat.getOutput().getType() != x.getType())
    return nearMiss("rotate_half's type differs from its input's");
  // rotate_half(x) * sin + x * cos.
  if (!concat.getOutput().hasOneUse())
    return nearMiss("rotate_half has more than one user");
  auto sinMul = dyn_cast<MulOp>(*concat.getOutput().getUsers().begin());
  if (!sinMul)
    return nearMiss("rotate_half is not multiplied by a sin table");
  Value sin = otherOperand(sinMul, concat.getOutput());
  if (!sinMul.getOutput().hasOneUse())
    return nearMiss("rotate_half(x) * sin has more than one user");
  auto add = dyn_cast<AddOp>(*sinMul.getOutput().getUsers().begin());
  if (!add)
    return nearMiss("rotate_half(x) * sin is not added to x * cos");
  auto cosMul = otherOperand(add, sinMul.getOutput()).getDefiningOp<MulOp>();
  Value cos = cosMul ? otherOperand(cosMul, x) : Value();
  if (!cos)
    return nearMiss("rotate_half(x) * sin is added to something other than "
                    "x times a cos table");
  if (cos.getType() != sin.getType())
    return nearMiss("the cos and sin tables have different types");
  if (add.getOutput().getType() != x.getType())
    return nearMiss("the tables broadcast the sum beyond the input's shape");
  return RotaryMatch{x, cos, sin, add};
}

namespace {

struct FuseRotaryPattern : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    RotaryResult result = matchRotary(op);
    if (!result.succeeded())
      return rewriter.notifyMatchFailure(
          op, result.isNearMiss() ? result.getReason() : "not rotate_half");
    AddOp root = result->root;
    rewriter.setInsertionPoint(root);
    auto rotary =
        RotaryOp::create(rewriter, root.getLoc(), result->input.getType(),
                         result->input, result->cos, result->sin);
    getFusionReport(rewriter.getContext()).recordFused(kKind, op.getLoc());
    rewriter.replaceOp(root, rotary.getOutput());
    return success();
  }
};

struct FuseRotaryPass : lmopt::impl::FuseRotaryPassBase<FuseRotaryPass> {
  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    report.registerKind(kKind);
    RewritePatternSet patterns(&getContext());
    populateFuseRotaryPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // What is left did not match: say why.
    getOperation()->walk([&](ConcatOp op) {
      RotaryResult result = matchRotary(op);
      if (result.isNearMiss())
        report.recordNearMiss(kKind, op.getLoc(), result.getReason());
    });
  }
};

} // namespace

void mlir::lmopt::populateFuseRotaryPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseRotaryPattern>(patterns.getContext());
}
