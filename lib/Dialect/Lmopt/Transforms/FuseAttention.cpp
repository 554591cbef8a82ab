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

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

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
  Value query, key, value;
  Value mask;              // additive float mask or i1 mask, may be null
  bool invertMask = false; // i1 mask that is true where positions are hidden
  int64_t numHeads = 0, valueHeadDim = 0;
  Value mergedHeads; // [B, Sq, H, Dv]; Shape ops of it are rebuilt
  double scale = 1.0;
  bool causal = false;
};

/// A packed `[B, S, H*D]` tensor split into heads by a reshape.
struct HeadSplit {
  Value packed;
  ReshapeOp reshape;
  int64_t numHeads = 0, headDim = 0;
};

} // namespace

static ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getShape();
}

static std::string formatPerm(ArrayRef<int64_t> perm) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(perm, os);
  os << "]";
  return text;
}

static std::string opName(Value value) {
  if (Operation *op = value.getDefiningOp())
    return ("'" + op->getName().getStringRef() + "'").str();
  return "a block argument";
}

/// The value of a one-element constant (a scalar that cannot change the
/// shape of what it multiplies).
static std::optional<double> getScalarConstant(Value value) {
  auto type = llvm::dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() != 1)
    return std::nullopt;
  return getSplatValue(value);
}

/// Peels `x * c` and `x / c` by scalar constants off `value`, folding them
/// into `scale`; stops at anything else. Fails with `reason` on a scale that
/// cannot be folded (not positive, not one element, computed at run time).
static LogicalResult peelScale(Value &value, double &scale,
                               std::string &reason) {
  while (Operation *op = value.getDefiningOp()) {
    if (!llvm::isa<MulOp, DivOp>(op))
      return success();
    bool isMul = llvm::isa<MulOp>(op);
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    Value factorValue = rhs, other = lhs;
    if (isMul && !isConstant(rhs) &&
        (isConstant(lhs) || shapeOf(lhs).size() < shapeOf(rhs).size()))
      std::swap(factorValue, other);
    auto factorType = llvm::cast<ShapedType>(factorValue.getType());
    bool scalarShaped =
        factorType.hasStaticShape() && factorType.getNumElements() == 1;
    if (!isConstant(factorValue)) {
      if (!scalarShaped)
        return success(); // a product of tensors, not a scale
      reason = "attention scale is computed at run time, not a constant";
      return failure();
    }
    std::optional<double> factor = getScalarConstant(factorValue);
    if (!factor) {
      reason = "attention scale is a constant with more than one value";
      return failure();
    }
    if (!(*factor > 0.0) || !std::isfinite(*factor)) {
      reason = "attention scale " + std::to_string(*factor) +
               " is not a positive finite constant";
      return failure();
    }
    if (other.getType() != op->getResult(0).getType()) {
      reason = "attention scale broadcasts the scores to a larger shape";
      return failure();
    }
    scale = isMul ? scale * *factor : scale / *factor;
    value = other;
  }
  return success();
}

/// Static size of trailing output dim `i` of `reshape`, from its type or its
/// constant shape element; `-1` elements are solved against `total`.
static std::optional<int64_t> getTailDim(ReshapeOp reshape, int64_t i) {
  int64_t fromType = shapeOf(reshape)[i];
  if (!ShapedType::isDynamic(fromType))
    return fromType;
  std::optional<ShapeElement> element = getShapeElement(reshape.getShape(), i);
  if (element && element->constant && *element->constant > 0)
    return element->constant;
  return std::nullopt;
}

/// Walks from `heads` (an operand of a matmul) up to the reshape that split
/// a packed `[B, S, H*D]` tensor into heads; the transposes in between must
/// compose to `expectedPerm`. Scalar scales on the way fold into `scale`.
static FailureOr<HeadSplit> matchHeadSplit(Value heads, StringRef role,
                                           ArrayRef<int64_t> expectedPerm,
                                           double &scale, std::string &reason) {
  SmallVector<int64_t> perm = {0, 1, 2, 3};
  Value current = heads;
  ReshapeOp reshape;
  while (!reshape) {
    if (failed(peelScale(current, scale, reason)))
      return failure();
    Operation *op = current.getDefiningOp();
    if (auto transpose = llvm::dyn_cast_or_null<TransposeOp>(op)) {
      ArrayRef<int64_t> p = transpose.getPerm();
      if (p.size() != 4)
        break;
      for (int64_t &index : perm)
        index = p[index];
      current = transpose.getInput();
      continue;
    }
    if (auto concat = llvm::dyn_cast_or_null<ConcatOp>(op)) {
      if (shapeOf(concat).size() == 4 &&
          normalizeAxis(concat.getAxis(), 4) == 2) {
        reason =
            (role + " is concatenated with a cache in head-split layout [B, H, "
                    "S, D]; attention takes packed [B, S, H*D] key and value")
                .str();
        return failure();
      }
    }
    reshape = llvm::dyn_cast_or_null<ReshapeOp>(op);
    if (!reshape) {
      reason = (role + " heads come from " + opName(current) +
                ", not a reshape of a packed [B, S, H*D] tensor")
                   .str();
      return failure();
    }
  }
  if (!reshape) {
    reason = (role + " heads come from " + opName(current) +
              ", not a reshape of a packed [B, S, H*D] tensor")
                 .str();
    return failure();
  }
  if (ArrayRef<int64_t>(perm) != expectedPerm) {
    reason = (role + " heads are permuted by " + formatPerm(perm) +
              " instead of " + formatPerm(expectedPerm))
                 .str();
    return failure();
  }
  ArrayRef<int64_t> in = shapeOf(reshape.getInput());
  if (in.size() != 3 || shapeOf(reshape).size() != 4) {
    reason = (role + " reshape to heads has input rank " + Twine(in.size()) +
              ", expected a packed [B, S, H*D] tensor")
                 .str();
    return failure();
  }
  if (!reshapeKeepsDim(reshape, 0, {}) || !reshapeKeepsDim(reshape, 1, {})) {
    reason = (role + " reshape to heads does not provably keep the batch and "
                     "sequence dims")
                 .str();
    return failure();
  }
  std::optional<int64_t> numHeads = getTailDim(reshape, 2);
  std::optional<int64_t> headDim = getTailDim(reshape, 3);
  // With batch and sequence kept, a -1 in [H, D] is the hidden size divided
  // by the other one.
  auto solve = [&](std::optional<int64_t> &unknown, int64_t index,
                   std::optional<int64_t> known) {
    std::optional<ShapeElement> element =
        getShapeElement(reshape.getShape(), index);
    if (!unknown && known && *known > 0 && element && element->constant == -1 &&
        !ShapedType::isDynamic(in[2]) && in[2] % *known == 0)
      unknown = in[2] / *known;
  };
  solve(numHeads, 2, headDim);
  solve(headDim, 3, numHeads);
  if (!numHeads || !headDim || ShapedType::isDynamic(in[2]) ||
      *numHeads * *headDim != in[2]) {
    reason = (role + " reshape to heads does not split a static hidden dim "
                     "into static [H, D]")
                 .str();
    return failure();
  }
  HeadSplit split{reshape.getInput(), reshape, *numHeads, *headDim};
  if (failed(peelScale(split.packed, scale, reason)))
    return failure();
  return split;
}

/// Whether `cond` is a constant-bound slice of a constant lower-triangular
/// buffer selecting rows [Sk-Sq, Sk) and cols [0, Sk): a causal mask.
static FailureOr<bool> isCausalCondition(Value cond, int64_t sq, int64_t sk,
                                         std::string &reason) {
  while (auto cast = cond.getDefiningOp<CastOp>())
    cond = cast.getInput();
  int64_t rowBegin = 0, colBegin = 0;
  SmallVector<SliceOp> slices;
  while (auto slice = cond.getDefiningOp<SliceOp>()) {
    slices.push_back(slice);
    cond = slice.getInput();
    while (auto cast = cond.getDefiningOp<CastOp>())
      cond = cast.getInput();
  }
  auto constant = cond.getDefiningOp<ConstantOp>();
  if (slices.empty() || !constant)
    return false;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  ArrayRef<int64_t> shape = shapeOf(constant);
  if (!dense || shape.size() < 2 || shape.end()[-1] != shape.end()[-2])
    return false;
  int64_t size = shape.back();
  if (dense.getNumElements() != size * size ||
      !dense.getElementType().isSignlessInteger())
    return false;
  // Lower-triangular: element (i, j) is nonzero exactly when j <= i.
  int64_t index = 0;
  for (const APInt &element : dense.getValues<APInt>()) {
    int64_t i = index / size, j = index % size;
    ++index;
    if (element.isZero() == (j <= i))
      return false;
  }
  if (ShapedType::isDynamic(sq) || ShapedType::isDynamic(sk)) {
    reason = "causal mask is sliced at run-time sequence lengths; cannot "
             "prove it selects rows [Sk-Sq, Sk)";
    return failure();
  }
  int64_t rank = shape.size();
  int64_t rowEnd = size, colEnd = size;
  for (SliceOp slice : llvm::reverse(slices)) {
    auto read = [](Value v) -> std::optional<SmallVector<int64_t>> {
      if (!v)
        return std::nullopt;
      auto c = v.getDefiningOp<ConstantOp>();
      auto d = c ? llvm::dyn_cast<DenseIntElementsAttr>(c.getValue())
                 : DenseIntElementsAttr();
      if (!d)
        return std::nullopt;
      SmallVector<int64_t> out;
      for (const APInt &x : d.getValues<APInt>())
        out.push_back(x.getSExtValue());
      return out;
    };
    auto starts = read(slice.getStarts()), ends = read(slice.getEnds());
    auto axes = read(slice.getAxes());
    if (!axes) {
      axes.emplace();
      for (int64_t a = 0; starts && a < (int64_t)starts->size(); ++a)
        axes->push_back(a);
    }
    std::optional<SmallVector<int64_t>> steps = SmallVector<int64_t>();
    if (slice.getSteps())
      steps = read(slice.getSteps());
    if (!starts || !ends || !steps || starts->size() != ends->size() ||
        axes->size() != starts->size()) {
      reason = "causal mask is sliced at run-time bounds; cannot prove it "
               "selects rows [Sk-Sq, Sk)";
      return failure();
    }
    for (auto [i, axis] : llvm::enumerate(*axes)) {
      std::optional<int64_t> a = normalizeAxis(axis, rank);
      if (!steps->empty() && (*steps)[i] != 1)
        return false;
      if (!a || *a < rank - 2)
        continue;
      int64_t &begin = *a == rank - 2 ? rowBegin : colBegin;
      int64_t &end = *a == rank - 2 ? rowEnd : colEnd;
      int64_t extent = end - begin;
      auto clamp = [&](int64_t x) {
        x = x < 0 ? x + extent : x;
        return std::clamp<int64_t>(x, 0, extent);
      };
      int64_t newBegin = begin + clamp((*starts)[i]);
      int64_t newEnd = begin + clamp((*ends)[i]);
      begin = newBegin;
      end = std::max(newBegin, newEnd);
    }
  }
  if (rowBegin != sk - sq || rowEnd != sk || colBegin != 0 || colEnd != sk) {
    reason = "lower-triangular mask slice selects rows [" +
             std::to_string(rowBegin) + ", " + std::to_string(rowEnd) +
             ") and cols [" + std::to_string(colBegin) + ", " +
             std::to_string(colEnd) + "), not a causal mask for scores " +
             std::to_string(sq) + "x" + std::to_string(sk);
    return failure();
  }
  return true;
}

/// True when `value`'s producers reach a rank-4 matmul through the ops
/// that may stand between Q x K^T and softmax.
static bool reachesScoresMatMul(Value value) {
  SmallVector<Value> worklist = {value};
  for (int steps = 0; !worklist.empty() && steps < 16; ++steps) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op)
      continue;
    if (llvm::isa<MatMulOp>(op) && shapeOf(op->getResult(0)).size() == 4)
      return true;
    if (llvm::isa<MulOp, DivOp, AddOp, CastOp>(op))
      llvm::append_range(worklist, op->getOperands());
    else if (auto where = llvm::dyn_cast<WhereOp>(op))
      worklist.append({where.getX(), where.getY()});
  }
  return false;
}

/// True when `value` is a splat of -inf or the lowest finite float, which
/// softmax turns into an exact zero.
static bool isMaskedFill(Value value) {
  std::optional<double> fill = getSplatValue(value);
  return fill && *fill <= -1.0e30;
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

  // Scores side: masks and scales between Q x K^T and the softmax.
  Value current = softmax.getInput();
  bool sawAdditiveMask = false, sawScale = false;
  Value fillCondition;
  bool keepWhereTrue = true;
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
      if (sawAdditiveMask || match.mask || fillCondition) {
        reason = "scores have more than one mask; attention takes one";
        return failure();
      }
      if (sawScale) {
        reason = "scores are scaled after the additive mask is added";
        return failure();
      }
      if (scores.getType() != add.getType() || shapeOf(mask).size() > 4 ||
          !broadcastShapes(scoresShape, shapeOf(mask))) {
        reason = "additive mask does not broadcast to the [B, H, Sq, Sk] "
                 "scores";
        return failure();
      }
      match.mask = mask;
      sawAdditiveMask = true;
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
        if (fillCondition || sawAdditiveMask) {
          reason = "scores have more than one mask; attention takes one";
          return failure();
        }
        fillCondition = where.getCondition();
        keepWhereTrue = !xFill;
      }
      current = scores;
      continue;
    }
    reason = "scores come from " + opName(current) + ", not the Q x K^T matmul";
    return failure();
  }
  if (fillCondition) {
    match.mask = fillCondition;
    match.invertMask = !keepWhereTrue;
  }

  // Q x K^T.
  FailureOr<HeadSplit> q = matchHeadSplit(scoresMatMul.getLhs(), "query",
                                          {0, 2, 1, 3}, match.scale, reason);
  if (failed(q))
    return failure();
  FailureOr<HeadSplit> k = matchHeadSplit(scoresMatMul.getRhs(), "key",
                                          {0, 2, 3, 1}, match.scale, reason);
  if (failed(k))
    return failure();

  // Probabilities to context.
  Value probs = softmax.getOutput();
  MatMulOp context;
  while (!context) {
    if (!probs.hasOneUse()) {
      reason = "attention probabilities have other users";
      return failure();
    }
    Operation *user = *probs.getUsers().begin();
    if (llvm::isa<DropoutOp>(user)) {
      reason = "dropout between softmax and the context matmul; run "
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
  if (q->numHeads != k->numHeads || q->numHeads != v->numHeads ||
      q->headDim != k->headDim) {
    reason = "query, key and value head counts or query/key head sizes "
             "differ";
    return failure();
  }

  // Head merge: transpose [0, 2, 1, 3] and reshape to [B, S, H*D].
  auto transpose =
      context.getOutput().hasOneUse()
          ? llvm::dyn_cast<TransposeOp>(*context.getOutput().getUsers().begin())
          : TransposeOp();
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3}) {
    reason = "context is not merged back by a single transpose [0, 2, 1, 3]";
    return failure();
  }
  // Besides the merge, only Shape ops may read the merged heads (exports
  // compute the merge shape from them); the rewrite rebuilds those.
  for (Operation *user : transpose.getOutput().getUsers()) {
    if (llvm::isa<ShapeOp>(user))
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
  // A rank-2 merge flattens [B, S] too; with the last dim fixed it holds the
  // same elements in the same order as the rank-3 attention output.
  bool leadingOk =
      mergedRank == 2 || (reshapeKeepsDim(match.merge, 0, {q->packed}) &&
                          reshapeKeepsDim(match.merge, 1, {q->packed}));
  if (!leadingOk || !lastOk) {
    reason = "context reshape does not provably merge heads into [B, S, " +
             std::to_string(merged) + "]";
    return failure();
  }

  match.query = q->packed;
  match.key = k->packed;
  match.value = v->packed;
  match.numHeads = q->numHeads;
  match.valueHeadDim = v->headDim;
  match.mergedHeads = transpose.getOutput();
  return match;
}

/// Rebuilds `shape(mergedHeads)` as `[B, Sq]` of the packed query and the
/// constant `[H, Dv]`, so that the heads' producers can die.
static void replaceMergedHeadsShape(PatternRewriter &rewriter, ShapeOp op,
                                    const AttentionMatch &match) {
  auto clamp = [](int64_t dim) {
    return std::clamp<int64_t>(dim < 0 ? dim + 4 : dim, 0, 4);
  };
  int64_t begin = clamp(static_cast<int64_t>(op.getStart()));
  int64_t end = op.getEnd() ? clamp(static_cast<int64_t>(*op.getEnd())) : 4;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto i64 = rewriter.getI64Type();
  SmallVector<Value> pieces;
  if (begin < std::min<int64_t>(end, 2)) {
    int64_t count = std::min<int64_t>(end, 2) - begin;
    pieces.push_back(
        ShapeOp::create(rewriter, loc, RankedTensorType::get({count}, i64),
                        match.query, rewriter.getI64IntegerAttr(begin),
                        rewriter.getI64IntegerAttr(begin + count)));
  }
  SmallVector<int64_t> tail;
  for (int64_t dim = std::max<int64_t>(begin, 2); dim < end; ++dim)
    tail.push_back(dim == 2 ? match.numHeads : match.valueHeadDim);
  if (!tail.empty()) {
    auto type = RankedTensorType::get({(int64_t)tail.size()}, i64);
    pieces.push_back(ConstantOp::create(rewriter, loc,
                                        DenseIntElementsAttr::get(type, tail)));
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

    for (Operation *user : llvm::to_vector(match->mergedHeads.getUsers()))
      if (auto shape = llvm::dyn_cast<ShapeOp>(user))
        replaceMergedHeadsShape(rewriter, shape, *match);

    rewriter.setInsertionPoint(match->merge);
    Location loc = match->merge.getLoc();
    Value mask = match->mask;
    if (mask && match->invertMask)
      mask = NotOp::create(rewriter, loc, mask);
    auto mergedType = llvm::cast<RankedTensorType>(match->merge.getType());
    ArrayRef<int64_t> queryShape = shapeOf(match->query);
    auto resultType = RankedTensorType::get(
        {queryShape[0], queryShape[1], match->numHeads * match->valueHeadDim},
        mergedType.getElementType());
    auto attention = AttentionOp::create(
        rewriter, loc, resultType, match->query, match->key, match->value, mask,
        rewriter.getI64IntegerAttr(match->numHeads),
        rewriter.getF32FloatAttr(static_cast<float>(match->scale)),
        match->causal ? rewriter.getBoolAttr(true) : BoolAttr());
    if (mergedType.getRank() == 3 && mergedType == resultType)
      rewriter.replaceOp(match->merge, attention.getOutput());
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(
          match->merge, mergedType, attention.getOutput(),
          match->merge.getShape(), match->merge.getAllowzeroAttr());
    getFusionReport(op->getContext()).recordFused(kKind, op.getLoc());
    return success();
  }
};

struct FuseAttentionPass
    : lmopt::impl::FuseAttentionPassBase<FuseAttentionPass> {
  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    report.registerKind(kKind);
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
