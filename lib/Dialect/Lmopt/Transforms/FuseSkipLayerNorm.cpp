//===- FuseSkipLayerNorm.cpp - residual add + layer norm ------------------===//
//
// A transformer layer ends each sublayer with `layer_norm(x + sublayer(x))`,
// and BERT-style embeddings with `layer_norm(word + position + token_type)`.
// Both become one `lmopt.skip_layer_norm`, whose `sum` result replaces the add
// for its other users (the next residual connection).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_FUSESKIPLAYERNORMPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kSkipLayerNorm = "skip_layer_norm";

namespace {
struct SkipMatch {
  AddOp add;
  Value input, skip;
};
} // namespace


/// The size of dim `dim` of `value` when the ops producing it show one that
/// its type lost (a Slice of a [1, N] buffer typed `?x?`): follows ops with
/// the shape of their first operand, the indices of a Gather, and the input
/// of a Slice for the dims it does not slice.
static int64_t traceDim(Value value, int64_t dim) {
  while (ShapedType::isDynamic(shapeOf(value)[dim])) {
    Operation *op = value.getDefiningOp();
    if (!op)
      return ShapedType::kDynamic;
    if (op->hasTrait<OpTrait::SameOperandsAndResultShape>() ||
        op->hasTrait<OpTrait::SameOperandsAndResultType>()) {
      value = op->getOperand(0);
      continue;
    }
    if (auto gather = llvm::dyn_cast<GatherOp>(op)) {
      int64_t dataRank = shapeOf(gather.getData()).size();
      int64_t indicesRank = shapeOf(gather.getIndices()).size();
      int64_t axis = normalizeAxis(gather.getAxis(), dataRank).value_or(0);
      if (dim >= axis && dim < axis + indicesRank) {
        value = gather.getIndices();
        dim -= axis;
      } else {
        value = gather.getData();
        if (dim >= axis)
          dim -= indicesRank - 1;
      }
      continue;
    }
    if (auto slice = llvm::dyn_cast<SliceOp>(op)) {
      DenseIntElementsAttr axes;
      if (!slice.getAxes() || !matchPattern(slice.getAxes(), m_Constant(&axes)))
        return ShapedType::kDynamic;
      int64_t rank = shapeOf(slice.getInput()).size();
      for (const APInt &axis : axes.getValues<APInt>())
        if (normalizeAxis(axis.getSExtValue(), rank) == dim)
          return ShapedType::kDynamic;
      value = slice.getInput();
      continue;
    }
    return ShapedType::kDynamic;
  }
  return shapeOf(value)[dim];
}

/// The shape of `value` with the dims `traceDim` recovers.
static SmallVector<int64_t> tracedShape(Value value) {
  SmallVector<int64_t> shape(shapeOf(value));
  for (auto [dim, size] : llvm::enumerate(shape))
    size = traceDim(value, dim);
  return shape;
}

/// True when an add operand of shape `operand` may be stretched to `sum` by
/// broadcasting: a different rank, or a dim that is (or may be) 1 where the
/// sum's is not. Two dynamic dims that tracing cannot resolve count as equal:
/// a residual add whose same-rank operands differed at run time would be a
/// broken model.
static bool mayBroadcast(ArrayRef<int64_t> operand, ArrayRef<int64_t> sum) {
  if (operand.size() != sum.size())
    return true;
  for (auto [dim, sumDim] : llvm::zip_equal(operand, sum)) {
    if (dim == sumDim)
      continue;
    bool mayBeOne = dim == 1 || ShapedType::isDynamic(dim);
    if (mayBeOne && sumDim != 1)
      return true;
  }
  return false;
}

/// `layer_norm(add(a, b))` over the last dim with 1-D scale and bias, where
/// the input operand has the sum's shape and the skip operand has it or
/// broadcasts to it (a [1, S, H] position embedding). The input is the operand
/// that is itself an add when one is (the inner add of an embedding sum),
/// else the one with the sum's type; addition commutes exactly, so the order
/// is only cosmetic.
static FusionMatch<SkipMatch> matchSkipLayerNorm(LayerNormOp norm) {
  auto add = norm.getInput().getDefiningOp<AddOp>();
  if (!add)
    return notCandidate();
  auto sumType = llvm::cast<RankedTensorType>(add.getType());
  int64_t rank = sumType.getRank();
  int64_t axis = normalizeAxis(norm.getAxis(), rank).value_or(norm.getAxis());
  if (rank == 0 || axis != rank - 1)
    return nearMiss(llvm::formatv(
        "layer norm over dims [{0}, {1}) is not over the last dim only", axis,
        rank));
  int64_t hidden = sumType.getShape().back();
  for (auto [name, param] : {std::pair("scale", norm.getScale()),
                             std::pair("bias", norm.getBias())}) {
    if (!param)
      continue;
    ArrayRef<int64_t> shape = shapeOf(param);
    if (shape.size() != 1 ||
        (shape[0] != hidden && !ShapedType::isDynamic(shape[0]) &&
         !ShapedType::isDynamic(hidden)))
      return nearMiss(llvm::formatv("{0} of shape {1} is not {2}", name,
                                    formatShape(shape), formatShape({hidden})));
  }

  // skip_layer_norm broadcasts its skip operand, not its input: the input is
  // an operand of the sum's full shape, preferably the inner add of an
  // embedding sum.
  SkipMatch match{add, add.getLhs(), add.getRhs()};
  auto isFull = [&](Value operand) {
    return operand.getType() == sumType &&
           !mayBroadcast(tracedShape(operand), sumType.getShape());
  };
  bool lhsFull = isFull(match.input), rhsFull = isFull(match.skip);
  if (!lhsFull && !rhsFull)
    return nearMiss(llvm::formatv(
        "neither add operand has the sum's shape {0} (input {1} broadcasts)",
        formatShape(sumType.getShape()),
        formatShape(tracedShape(match.input))));
  if (!lhsFull || (rhsFull && match.skip.getDefiningOp<AddOp>() &&
                   !match.input.getDefiningOp<AddOp>()))
    std::swap(match.input, match.skip);

  // The fused op is created at the layer norm, so every other user of the sum
  // must come after it.
  DominanceInfo dominance;
  for (Operation *user : add->getUsers())
    if (user != norm && !dominance.properlyDominates(norm.getOperation(), user))
      return nearMiss("the sum is used before the layer norm");
  return match;
}

namespace {

struct FuseSkipLayerNormPattern : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp norm,
                                PatternRewriter &rewriter) const override {
    FusionMatch<SkipMatch> match = matchSkipLayerNorm(norm);
    if (!match.succeeded())
      return rewriter.notifyMatchFailure(
          norm, match.isCandidate() ? match.getReason() : "not fed by an add");
    Location anchor = norm.getLoc();
    Location loc = rewriter.getFusedLoc({anchor, match->add.getLoc()});
    Type type = norm.getType();
    auto fused = SkipLayerNormOp::create(
        rewriter, loc, type, type, match->input, match->skip, norm.getScale(),
        norm.getBias(), norm.getEpsilonAttr());
    rewriter.replaceAllUsesWith(match->add.getOutput(), fused.getSum());
    rewriter.replaceOp(norm, fused.getOutput());
    rewriter.eraseOp(match->add);
    getFusionReport(getContext()).recordFused(kSkipLayerNorm, anchor);
    return success();
  }
};

struct FuseSkipLayerNormPass
    : lmopt::impl::FuseSkipLayerNormPassBase<FuseSkipLayerNormPass> {
  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    report.registerKind(kSkipLayerNorm);
    RewritePatternSet patterns(&getContext());
    populateFuseSkipLayerNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // What is left did not match: say why.
    getOperation()->walk([&](LayerNormOp norm) {
      FusionMatch<SkipMatch> match = matchSkipLayerNorm(norm);
      if (match.isNearMiss())
        report.recordNearMiss(kSkipLayerNorm, norm.getLoc(), match.getReason());
    });
  }
};

} // namespace

void mlir::lmopt::populateFuseSkipLayerNormPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FuseSkipLayerNormPattern>(patterns.getContext());
}
