//===- FuseAttention.cpp - scaled-dot-product attention fusion ------------===//
//
// Exporters spell attention as some twenty ops: head-split reshapes and
// transposes, Q x K^T, a scale, masks, softmax, the context matmul and the
// head merge. The matcher walks that subgraph up from the softmax and accepts
// it only when each step is provably what `lmopt.attention` computes; every
// rejection carries the reason, which the pass reports as a near miss.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "FuseAttentionMatch.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>

namespace mlir::lmopt {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kKind = "attention";

namespace {

/// What `lmopt.attention` needs, read off a matched subgraph.
struct AttentionMatch {
  ReshapeOp merge; // the head-merge reshape the attention op replaces
  HeadSplit query, key, value;
  bool seqFirstMerge = false; // heads merged as [S, B, H*D]
  Value mask;                 // additive float mask or i1 mask, may be null
  Value bias;                 // additive score bias [1|B, 1|H, 1|Sq, Sk]
  bool invertMask = false;    // i1 mask that is true where positions are hidden
  int64_t numHeads = 0, valueHeadDim = 0;
  Value mergedHeads; // [B|Sq, Sq|B, H, Dv]; Shape ops of it are rebuilt
  double scale = 1.0;
  bool causal = false;
  bool zeroMaskedRows = false; // fully masked rows yield zeros
  // Shape ops of the context heads [B, H, Sq, Dv]; the rewrite rebuilds them.
  SmallVector<ShapeOp> contextShapes;
};

} // namespace

/// The one user of `value` besides Shape ops, which go to `shapes`; null
/// when there is none or more than one.
static Operation *getSoleUserBesidesShapes(Value value,
                                           SmallVectorImpl<ShapeOp> &shapes) {
  Operation *sole = nullptr;
  for (Operation *user : value.getUsers()) {
    if (auto shape = llvm::dyn_cast<ShapeOp>(user)) {
      shapes.push_back(shape);
      continue;
    }
    if (sole)
      return nullptr;
    sole = user;
  }
  return sole;
}

/// Whether `reshape` provably returns its rank-4 input as it is, with
/// `equivalent` sharing the input's first three dims: three dims proven
/// kept fix the fourth by the element count.
static bool isIdentityReshape(ReshapeOp reshape, Value equivalent) {
  if (shapeOf(reshape).size() != 4 || shapeOf(reshape.getInput()).size() != 4)
    return false;
  int64_t kept = 0;
  for (int64_t dim = 0; dim < 4; ++dim)
    kept += reshapeKeepsDim(reshape, dim,
                            dim < 3 ? ArrayRef<Value>(equivalent)
                                    : ArrayRef<Value>());
  return kept >= 3;
}

/// Sorts the additive terms of the scores (outermost first) into the mask
/// and the score bias: with a boolean mask the one term is the bias; of two,
/// the one spelled as a masked fill (where(cond, 0, fill)) is the mask, else
/// the outer one. The bias must be rank 4 with one element per key.
static LogicalResult assignAdditives(AttentionMatch &match,
                                     ArrayRef<Value> additives,
                                     ArrayRef<int64_t> scoresShape,
                                     std::string &reason) {
  if (additives.empty())
    return success();
  if (!match.mask && additives.size() == 1) {
    match.mask = additives[0];
    return success();
  }
  Value bias = additives.back();
  if (!match.mask) {
    match.mask = additives[0];
    if (matchSelectedMask(bias) && !matchSelectedMask(match.mask))
      std::swap(match.mask, bias);
  }
  ArrayRef<int64_t> shape = shapeOf(bias);
  if (shape.size() != 4) {
    reason = "score bias " + formatShape(shape) +
             " is not rank 4 [1|B, 1|H, 1|Sq, Sk]";
    return failure();
  }
  if (shape[3] == 1 && scoresShape[3] != 1) {
    reason = "score bias " + formatShape(shape) +
             " is constant along the keys; attention takes one element per "
             "key";
    return failure();
  }
  match.bias = bias;
  return success();
}

/// Matches the subgraph around `softmax`. On failure `reason` says why, or
/// is empty when the softmax is not attention at all.
static FailureOr<AttentionMatch> matchAttention(SoftmaxOp softmax,
                                                std::string &reason) {
  reason.clear();
  AttentionMatch match;
  ArrayRef<int64_t> scoresShape = shapeOf(softmax);
  if (scoresShape.size() != 4)
    return failure();
  if (normalizeAxis(softmax.getAxis(), 4) != 3) {
    reason = "softmax is over axis " + std::to_string(softmax.getAxis()) +
             ", not the last (key) axis";
    return failure();
  }

  // Scores side: masks, a score bias and scales between Q x K^T and the
  // softmax. Additive terms, outermost first: a mask and a bias.
  Value current = softmax.getInput();
  SmallVector<Value, 2> additives;
  bool sawScale = false;
  Value fillCondition;
  bool keepWhereTrue = true;
  bool finiteFill = false; // a where hides scores with the lowest float
  MatMulOp scoresMatMul;
  while (!scoresMatMul) {
    Operation *op = current.getDefiningOp();
    if (auto matmul = llvm::dyn_cast_or_null<MatMulOp>(op)) {
      scoresMatMul = matmul;
      break;
    }
    if (llvm::isa_and_nonnull<MulOp, DivOp>(op)) {
      Value before = current;
      if (failed(peelScale(current, match.scale, reason)))
        return failure();
      sawScale |= current != before;
      if (current != before)
        continue;
    }
    if (auto cast = llvm::dyn_cast_or_null<CastOp>(op)) {
      if (cast.getInput().getType() != cast.getType()) {
        reason = "scores are cast between the matmul and softmax";
        return failure();
      }
      current = cast.getInput();
      continue;
    }
    if (auto add = llvm::dyn_cast_or_null<AddOp>(op)) {
      bool lhsScores = reachesScoresMatMul(add.getLhs());
      bool rhsScores = reachesScoresMatMul(add.getRhs());
      if (lhsScores == rhsScores) {
        reason = "cannot tell scores from mask in the add before softmax";
        return failure();
      }
      Value scores = lhsScores ? add.getLhs() : add.getRhs();
      Value mask = lhsScores ? add.getRhs() : add.getLhs();
      // A boolean mask (a where above this add) leaves room for the bias
      // only; otherwise one additive mask and one bias.
      if (additives.size() == (fillCondition ? 1u : 2u)) {
        reason = "scores have more than one mask and one score bias; "
                 "attention takes one of each";
        return failure();
      }
      if (sawScale) {
        reason = "scores are scaled after the additive mask is added";
        return failure();
      }
      // The add may refine dynamic dims of the scores (a bias [1, H, ...]
      // names the head count Q x K^T left dynamic), not change them.
      if (getElementTypeOrSelf(scores.getType()) !=
              getElementTypeOrSelf(add.getType()) ||
          !isCompatibleShape(shapeOf(scores), shapeOf(add)) ||
          shapeOf(mask).size() > 4 ||
          !broadcastShapes(scoresShape, shapeOf(mask))) {
        reason = "additive mask does not broadcast to the [B, H, Sq, Sk] "
                 "scores";
        return failure();
      }
      additives.push_back(mask);
      current = scores;
      continue;
    }
    if (auto where = llvm::dyn_cast_or_null<WhereOp>(op)) {
      bool xFill = isMaskedFill(where.getX());
      bool yFill = isMaskedFill(where.getY());
      if (xFill == yFill) {
        reason = "where before softmax does not select between the scores "
                 "and -inf or the lowest float";
        return failure();
      }
      Value scores = xFill ? where.getY() : where.getX();
      finiteFill |= !isMinusInfFill(xFill ? where.getX() : where.getY());
      if (scores.getType() != where.getType() ||
          shapeOf(where.getCondition()).size() > 4 ||
          !broadcastShapes(scoresShape, shapeOf(where.getCondition()))) {
        reason = "boolean mask does not broadcast to the [B, H, Sq, Sk] "
                 "scores";
        return failure();
      }
      FailureOr<bool> causal = isCausalCondition(
          where.getCondition(), scoresShape[2], scoresShape[3], reason);
      if (failed(causal))
        return failure();
      if (*causal && xFill) {
        reason = "lower-triangular mask hides the past instead of the future";
        return failure();
      }
      if (*causal) {
        match.causal = true;
      } else {
        if (fillCondition || !additives.empty()) {
          reason = "scores have more than one mask; attention takes one";
          return failure();
        }
        fillCondition = where.getCondition();
        keepWhereTrue = !xFill;
      }
      current = scores;
      continue;
    }
    reason = "scores come from " + describeProducer(current) +
             ", not the Q x K^T matmul";
    return failure();
  }
  if (fillCondition) {
    match.mask = fillCondition;
    match.invertMask = !keepWhereTrue;
  }
  if (failed(assignAdditives(match, additives, scoresShape, reason)))
    return failure();
  bool sawAdditiveMask = match.mask && !fillCondition;

  // Q x K^T.
  FailureOr<HeadSplit> q =
      matchHeadSplit(scoresMatMul.getLhs(), "query", {0, 2, 1, 3}, match.scale,
                     reason, /*allowCache=*/false);
  if (failed(q))
    return failure();
  FailureOr<HeadSplit> k = matchHeadSplit(scoresMatMul.getRhs(), "key",
                                          {0, 2, 3, 1}, match.scale, reason);
  if (failed(k))
    return failure();

  // Probabilities to context, through SDPA's where(is_nan(p), 0, p) guard:
  // with it, a row whose scores are all -inf yields zeros instead of NaN.
  FailureOr<Value> guarded = matchNanGuard(softmax.getOutput(), reason);
  if (failed(guarded))
    return failure();
  match.zeroMaskedRows = static_cast<bool>(*guarded);
  if (match.zeroMaskedRows && finiteFill) {
    reason = "probabilities are guarded against NaN but the scores are "
             "masked with the lowest float, not -inf: a fully masked row "
             "averages the values instead of yielding zeros";
    return failure();
  }
  // A boolean mask spelled as an additive 0/fill mask becomes that boolean
  // mask where the two agree on fully masked rows: -inf rows are zeros only
  // with the guard, lowest-float rows average the values only without it.
  if (std::optional<SelectedMask> selected =
          sawAdditiveMask ? matchSelectedMask(match.mask) : std::nullopt;
      selected && selected->minusInf == match.zeroMaskedRows) {
    match.mask = selected->condition;
    match.invertMask = selected->hiddenWhereTrue;
  }
  Value probs = match.zeroMaskedRows ? *guarded : softmax.getOutput();
  MatMulOp context;
  while (!context) {
    if (!probs.hasOneUse()) {
      reason = "attention probabilities have other users";
      return failure();
    }
    Operation *user = *probs.getUsers().begin();
    if (auto dropout = llvm::dyn_cast<DropoutOp>(user)) {
      reason = dropout.getTraining()
                   ? "dropout in training mode between softmax and the "
                     "context matmul (lmopt-compile --train keeps it; "
                     "--disable-dropout removes it)"
                   : "dropout between softmax and the context matmul; run "
                     "lmopt-eliminate-dropout first";
      return failure();
    }
    if (auto cast = llvm::dyn_cast<CastOp>(user);
        cast && cast.getType() == cast.getInput().getType()) {
      probs = cast.getOutput();
      continue;
    }
    context = llvm::dyn_cast<MatMulOp>(user);
    if (!context || context.getLhs() != probs) {
      reason = "attention probabilities feed '" +
               user->getName().getStringRef().str() +
               "', not the context matmul";
      return failure();
    }
  }
  double valueScale = 1.0;
  FailureOr<HeadSplit> v = matchHeadSplit(context.getRhs(), "value",
                                          {0, 2, 1, 3}, valueScale, reason);
  if (failed(v))
    return failure();
  if (valueScale != 1.0) {
    reason = "value is scaled before the context matmul";
    return failure();
  }
  if (k->headsSplit != v->headsSplit) {
    reason = std::string(k->headsSplit ? "key" : "value") +
             " is concatenated with a cache in head-split layout [B, H, S, D] "
             "but " +
             (k->headsSplit ? "value" : "key") +
             " is not; attention takes both in one layout";
    return failure();
  }
  if (k->headsSplit && k->headDim != v->headDim) {
    reason = "cached key and value head sizes differ";
    return failure();
  }
  if (q->repeats != 1) {
    reason = "query heads are repeated (repeat_kv applies to key and value)";
    return failure();
  }
  if (k->numHeads != v->numHeads || k->repeats != v->repeats) {
    reason = "key and value head counts or repeats differ: key " +
             std::to_string(k->numHeads) + " heads x " +
             std::to_string(k->repeats) + ", value " +
             std::to_string(v->numHeads) + " heads x " +
             std::to_string(v->repeats);
    return failure();
  }
  // Grouped-query attention: repeat_kv gives every key/value head to a
  // group of `repeats` query heads.
  if (q->numHeads != k->numHeads * k->repeats || q->headDim != k->headDim) {
    reason = "query heads (" + std::to_string(q->numHeads) + " of size " +
             std::to_string(q->headDim) + ") do not match key heads (" +
             std::to_string(k->numHeads) + " x " + std::to_string(k->repeats) +
             " repeats of size " + std::to_string(k->headDim) + ")";
    return failure();
  }

  // Head merge: transpose [0, 2, 1, 3] and reshape to [B, S, H*D], or
  // nn.MultiheadAttention's transpose [2, 0, 1, 3] and reshape to
  // [S, B, H*D] or [S*B, H*D]. SDPA exports first reshape the context heads
  // to the shape they already have, read off Shape ops of them and of the
  // query heads; the rewrite rebuilds such Shape ops.
  Operation *next =
      getSoleUserBesidesShapes(context.getOutput(), match.contextShapes);
  if (auto reshape = llvm::dyn_cast_or_null<ReshapeOp>(next);
      reshape && isIdentityReshape(reshape, softmax.getOutput()))
    next = getSoleUserBesidesShapes(reshape.getOutput(), match.contextShapes);
  auto transpose = llvm::dyn_cast_or_null<TransposeOp>(next);
  if (!transpose || (transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3} &&
                     transpose.getPerm() != ArrayRef<int64_t>{2, 0, 1, 3})) {
    reason = "context is not merged back by a single transpose [0, 2, 1, 3] "
             "or [2, 0, 1, 3]";
    return failure();
  }
  match.seqFirstMerge = transpose.getPerm()[0] == 2;
  // The projection whose leading dims are the merged heads' leading dims,
  // when there is one before the rewrite.
  Value leading = match.seqFirstMerge != q->batchFirst ? q->source : Value();
  // Besides the merge, only Shape ops may read the merged heads (exports
  // compute the merge shape from them); the rewrite rebuilds those.
  for (Operation *user : transpose.getOutput().getUsers()) {
    if (llvm::isa<ShapeOp>(user) && (leading || !match.seqFirstMerge))
      continue;
    if (match.merge || !llvm::isa<ReshapeOp>(user)) {
      reason = "merged context heads have users besides the head-merge "
               "reshape";
      return failure();
    }
    match.merge = llvm::cast<ReshapeOp>(user);
  }
  int64_t mergedRank = match.merge ? shapeOf(match.merge).size() : 0;
  if (mergedRank != 2 && mergedRank != 3) {
    reason = "context heads are not merged by a reshape to [B, S, H*D] or "
             "[B*S, H*D]";
    return failure();
  }
  int64_t merged = q->numHeads * v->headDim;
  std::optional<ShapeElement> last =
      getShapeElement(match.merge.getShape(), mergedRank - 1);
  bool lastOk = shapeOf(match.merge).back() == merged ||
                (last && last->constant &&
                 (*last->constant == merged ||
                  (*last->constant == -1 && mergedRank == 3)));
  // A rank-2 merge flattens the leading dims too; with the last dim fixed
  // it holds the same elements in the same order as the rank-3 output.
  SmallVector<Value> equivalents;
  if (leading)
    equivalents.push_back(leading);
  bool leadingOk =
      mergedRank == 2 || (reshapeKeepsDim(match.merge, 0, equivalents) &&
                          reshapeKeepsDim(match.merge, 1, equivalents));
  if (!leadingOk || !lastOk) {
    reason = "context reshape does not provably merge heads into [" +
             std::string(match.seqFirstMerge ? "S, B, " : "B, S, ") +
             std::to_string(merged) + "]";
    return failure();
  }

  match.query = *q;
  match.key = *k;
  match.value = *v;
  match.numHeads = q->numHeads;
  match.valueHeadDim = v->headDim;
  match.mergedHeads = transpose.getOutput();
  return match;
}

namespace {

/// Where a dim of rank-4 heads comes from once attention is fused: dim
/// `leadingDim` of the packed query (or the projection the merge keeps the
/// leading dims of), or the constant `size`.
struct HeadsDim {
  int64_t leadingDim = -1;
  int64_t size = 0;
};

} // namespace

/// Rebuilds `op`, a Shape of rank-4 heads whose dims are `dims`, from
/// `leading` and constants, so that the heads' producers can die.
static void replaceHeadsShape(PatternRewriter &rewriter, ShapeOp op,
                              ArrayRef<HeadsDim> dims, Value leading) {
  auto clamp = [](int64_t dim) {
    return std::clamp<int64_t>(dim < 0 ? dim + 4 : dim, 0, 4);
  };
  int64_t begin = clamp(static_cast<int64_t>(op.getStart()));
  int64_t end = op.getEnd() ? clamp(static_cast<int64_t>(*op.getEnd())) : 4;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto i64 = rewriter.getI64Type();
  SmallVector<Value> pieces;
  // Consecutive dims of `leading` become one Shape op, constants one
  // constant.
  for (int64_t dim = begin; dim < end;) {
    int64_t runEnd = dim + 1;
    if (dims[dim].leadingDim >= 0) {
      while (runEnd < end &&
             dims[runEnd].leadingDim == dims[runEnd - 1].leadingDim + 1)
        ++runEnd;
      int64_t first = dims[dim].leadingDim;
      pieces.push_back(ShapeOp::create(
          rewriter, loc, RankedTensorType::get({runEnd - dim}, i64), leading,
          rewriter.getI64IntegerAttr(first),
          rewriter.getI64IntegerAttr(first + runEnd - dim)));
    } else {
      while (runEnd < end && dims[runEnd].leadingDim < 0)
        ++runEnd;
      SmallVector<int64_t> sizes;
      for (int64_t d = dim; d < runEnd; ++d)
        sizes.push_back(dims[d].size);
      auto type = RankedTensorType::get({runEnd - dim}, i64);
      pieces.push_back(ConstantOp::create(
          rewriter, loc, DenseIntElementsAttr::get(type, sizes)));
    }
    dim = runEnd;
  }
  if (pieces.size() == 1) {
    rewriter.replaceOp(op, pieces.front());
    return;
  }
  if (pieces.empty()) {
    auto type = RankedTensorType::get({0}, i64);
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, DenseIntElementsAttr::get(type, ArrayRef<int64_t>{}));
    return;
  }
  rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), pieces,
                                        rewriter.getI64IntegerAttr(0));
}

/// `transpose(value, [1, 0, 2])`: [S, B, E] to [B, S, E] and back.
static Value swapLeadingDims(PatternRewriter &rewriter, Location loc,
                             Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> shape = type.getShape();
  auto swapped = RankedTensorType::get({shape[1], shape[0], shape[2]},
                                       type.getElementType());
  return TransposeOp::create(rewriter, loc, swapped, value,
                             rewriter.getDenseI64ArrayAttr({1, 0, 2}));
}

namespace {

struct FuseScaledDotProductAttention : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<AttentionMatch> match = matchAttention(op, reason);
    if (failed(match))
      return rewriter.notifyMatchFailure(
          op, reason.empty() ? "softmax is not over attention scores" : reason);

    // nn.MultiheadAttention's [S, B, E] projections become [B, S, E].
    auto pack = [&](const HeadSplit &split) -> Value {
      if (split.batchFirst || split.headsSplit)
        return split.source;
      rewriter.setInsertionPointAfterValue(split.source);
      return swapLeadingDims(rewriter, split.source.getLoc(), split.source);
    };
    Value query = pack(match->query);
    Value key = pack(match->key);
    Value value = pack(match->value);

    // Merged heads are [B|Sq, Sq|B, H, Dv], context heads [B, H, Sq, Dv].
    int64_t heads = match->numHeads, headDim = match->valueHeadDim;
    Value leading = match->seqFirstMerge ? match->query.source : query;
    for (Operation *user : llvm::to_vector(match->mergedHeads.getUsers()))
      if (auto shape = llvm::dyn_cast<ShapeOp>(user))
        replaceHeadsShape(rewriter, shape,
                          {{0}, {1}, {-1, heads}, {-1, headDim}}, leading);
    for (ShapeOp shape : match->contextShapes)
      replaceHeadsShape(rewriter, shape, {{0}, {-1, heads}, {1}, {-1, headDim}},
                        query);

    rewriter.setInsertionPoint(match->merge);
    Location loc = match->merge.getLoc();
    Value mask = match->mask;
    if (mask && match->invertMask)
      mask = NotOp::create(rewriter, loc, mask);
    auto mergedType = llvm::cast<RankedTensorType>(match->merge.getType());
    ArrayRef<int64_t> queryShape = shapeOf(query);
    auto resultType = RankedTensorType::get(
        {queryShape[0], queryShape[1], match->numHeads * match->valueHeadDim},
        mergedType.getElementType());
    Value output =
        AttentionOp::create(
            rewriter, loc, resultType, query, key, value, mask, match->bias,
            rewriter.getI64IntegerAttr(match->numHeads),
            rewriter.getF32FloatAttr(static_cast<float>(match->scale)),
            match->causal ? rewriter.getBoolAttr(true) : BoolAttr(),
            match->key.headsSplit ? rewriter.getBoolAttr(true) : BoolAttr(),
            match->zeroMaskedRows ? rewriter.getBoolAttr(true) : BoolAttr(),
            match->key.repeats != 1
                ? rewriter.getI64IntegerAttr(match->key.numHeads)
                : IntegerAttr())
            .getOutput();
    if (match->seqFirstMerge)
      output = swapLeadingDims(rewriter, loc, output);
    // The merge is proven to give [B, S, H*D]; where its type only knows
    // less (a shape computed at run time), lmopt users take the output's
    // type as it is, so that no reshape (and no shape arithmetic for it)
    // stays behind.
    auto outputType = llvm::cast<RankedTensorType>(output.getType());
    bool usersTakeOutputType =
        mergedType.getRank() == 3 &&
        isCompatibleShape(outputType.getShape(), mergedType.getShape()) &&
        usersTakeAnyShape(match->merge);
    if (mergedType == outputType || usersTakeOutputType)
      rewriter.replaceOp(match->merge, output);
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(match->merge, mergedType, output,
                                             match->merge.getShape(),
                                             match->merge.getAllowzeroAttr());
    getFusionReport(op->getContext()).recordFused(kKind, op.getLoc());
    return success();
  }
};

struct FuseAttentionPass
    : lmopt::impl::FuseAttentionPassBase<FuseAttentionPass> {
  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    report.registerKind(kKind);
    // Heads grouped or interleaved in one QKV projection become slices of
    // it, and rotary embeddings of split heads move above the head split,
    // so that the attention matcher finds the (rotated) projections packed.
    {
      RewritePatternSet hoist(&getContext());
      populateHeadLayoutPatterns(hoist);
      populateHoistRotaryPatterns(hoist);
      populateFlatHeadsPatterns(hoist);
      if (failed(applyPatternsGreedily(getOperation(), std::move(hoist))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateFuseAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    getOperation()->walk([&](SoftmaxOp op) {
      std::string reason;
      if (failed(matchAttention(op, reason)) && !reason.empty())
        report.recordNearMiss(kKind, op.getLoc(), reason);
    });
  }
};

} // namespace

void mlir::lmopt::populateFuseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseScaledDotProductAttention>(patterns.getContext());
}
