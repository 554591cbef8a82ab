//===- FuseLayerNorm.cpp - decomposed layer and RMS norms to fused ops ----===//
//
// Exports before ONNX opset 17 (and RMSNorm before opset 23) spell a
// normalization as reductions and elementwise ops. Both forms are anchored at
// a ReduceMean: the mean of x for a layer norm, the mean of x^2 for an RMS
// norm. The matchers walk from there to the last op of the subgraph and either
// return what to build or say why the subgraph is not one they can replace
// exactly.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_FUSELAYERNORMPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kLayerNorm = "layer_norm";
static constexpr llvm::StringLiteral kRmsNorm = "rms_norm";

namespace {

/// A matched op and what it computes, to name it in a rejection reason.
struct MatchedOp {
  Operation *op;
  llvm::StringLiteral role;
};

/// A normalization subgraph that the fused op can replace exactly.
struct NormMatch {
  Value input;       // before a widening Cast when statistics are in f32
  Value scale, bias; // null when the subgraph has none
  int64_t axis = 0;  // first normalized dim, in [0, rank)
  float epsilon = 0;
  // In order; the last is the op the fused op replaces.
  SmallVector<MatchedOp> ops;
};

/// `numerator / sqrt(statistic + epsilon)`: the end shared by both forms.
struct NormTail {
  Value numerator;
  float epsilon = 0;
  SmallVector<MatchedOp> ops;
};

} // namespace

using NormResult = FusionMatch<NormMatch>;


static Type elementTypeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getElementType();
}

/// The first user of `value` that is an `OpTy`, or null.
template <typename OpTy> static OpTy findUser(Value value) {
  for (Operation *user : value.getUsers())
    if (auto op = llvm::dyn_cast<OpTy>(user))
      return op;
  return {};
}

/// The single user of `value` when it is an `OpTy`, or null.
template <typename OpTy> static OpTy findSingleUser(Value value) {
  if (!value.hasOneUse())
    return {};
  return llvm::dyn_cast<OpTy>(*value.getUsers().begin());
}

/// The operand of `op` other than `value`.
template <typename OpTy> static Value otherOperandOf(OpTy op, Value value) {
  return op.getLhs() == value ? op.getRhs() : op.getLhs();
}

/// The value a Pow or Mul squares, with the Pow's exponent left to check.
static Value squaredValue(Operation *op) {
  if (auto pow = llvm::dyn_cast_if_present<PowOp>(op))
    return pow.getLhs();
  if (auto mul = llvm::dyn_cast_if_present<MulOp>(op))
    if (mul.getLhs() == mul.getRhs())
      return mul.getLhs();
  return {};
}

/// Why `op` (a Pow or a self-Mul) is not a square of its base, if it is not.
static std::optional<std::string> checkSquare(Operation *op) {
  auto pow = llvm::dyn_cast<PowOp>(op);
  if (!pow)
    return std::nullopt;
  std::optional<double> exponent = getSplatValue(pow.getRhs());
  if (!exponent)
    return std::string("exponent of the square is not a constant");
  if (*exponent != 2.0)
    return llvm::formatv("exponent {0} is not 2", llvm::format("%g", *exponent))
        .str();
  return std::nullopt;
}

/// The first reduced dim when `op` averages the trailing dims and keeps them.
static FusionMatch<int64_t> matchTrailingReduction(ReduceMeanOp op,
                                                   StringRef what) {
  if (!op.getKeepdims())
    return nearMiss(what + " drops the reduced dims (keepdims = 0)");
  int64_t rank = shapeOf(op.getInput()).size();
  SmallVector<int64_t> axes;
  for (int64_t axis : op.getAxes())
    axes.push_back(normalizeAxis(axis, rank).value_or(axis));
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  llvm::sort(axes);
  int64_t first = rank - static_cast<int64_t>(axes.size());
  if (llvm::equal(axes, llvm::seq<int64_t>(first, rank)))
    return first;
  if (axes.size() == 1)
    return nearMiss(
        llvm::formatv("{0} over axis {1} is not the last dim", what, axes[0]));
  std::string list;
  llvm::raw_string_ostream os(list);
  llvm::interleaveComma(axes, os);
  return nearMiss(llvm::formatv("{0} over axes [{1}] is not the trailing dims",
                                what, list));
}

/// Statistics narrower than f32 would change precision once fused: the fused
/// ops compute them in at least f32.
static std::optional<std::string>
checkStatisticsType(Value value, StringRef statistic, StringRef kind) {
  Type type = elementTypeOf(value);
  if (type.getIntOrFloatBitWidth() >= 32)
    return std::nullopt;
  return llvm::formatv("{0} is computed in {1}; {2} computes statistics in "
                       "f32 or wider",
                       statistic, type, kind)
      .str();
}

/// From `statistic` (the variance or mean square): `+ epsilon`, `sqrt`, then
/// a division by it, as Div or as Mul by its Reciprocal (or by `1 / sqrt`).
static FusionMatch<NormTail> matchNormTail(ReduceMeanOp statistic,
                                           StringRef statisticName,
                                           StringRef rootName) {
  NormTail tail;
  Value stat = statistic.getOutput();
  auto addEps = findUser<AddOp>(stat);
  if (!addEps)
    return nearMiss(statisticName + " is not followed by an add of epsilon");
  std::optional<double> epsilon = getSplatValue(otherOperandOf(addEps, stat));
  if (!epsilon)
    return nearMiss("epsilon is not a constant");
  if (addEps.getType() != stat.getType())
    return nearMiss("epsilon broadcasts the " + statisticName);
  tail.epsilon = static_cast<float>(*epsilon);
  if (static_cast<double>(tail.epsilon) != *epsilon)
    return nearMiss(llvm::formatv("epsilon {0} is not representable in f32",
                                  llvm::format("%g", *epsilon)));
  auto sqrt = findUser<SqrtOp>(addEps.getOutput());
  if (!sqrt)
    return nearMiss(statisticName +
                    " + epsilon is not followed by a square root");
  tail.ops = {{addEps, "epsilon add"}, {sqrt, "square root"}};

  Value root = sqrt.getOutput();
  for (Operation *user : root.getUsers()) {
    Value reciprocal;
    if (auto recip = llvm::dyn_cast<ReciprocalOp>(user)) {
      reciprocal = recip.getOutput();
    } else if (auto div = llvm::dyn_cast<DivOp>(user);
               div && div.getRhs() == root) {
      if (!isSplatNear(div.getLhs(), 1.0, 0)) {
        tail.numerator = div.getLhs();
        tail.ops.push_back({div, "normalized value"});
        break;
      }
      reciprocal = div.getOutput();
    }
    if (!reciprocal)
      continue;
    auto mul = findUser<MulOp>(reciprocal);
    if (!mul)
      continue;
    tail.numerator = otherOperandOf(mul, reciprocal);
    tail.ops.push_back({user, "reciprocal"});
    tail.ops.push_back({mul, "normalized value"});
    break;
  }
  if (!tail.numerator)
    return nearMiss(rootName + " is not used as a divisor");
  if (tail.ops.back().op->getResult(0).getType() != tail.numerator.getType())
    return nearMiss("division by the " + rootName +
                    " broadcasts the normalized value");
  return tail;
}

/// True when `param` can be the scale or bias of a norm over `normalized`
/// dims: it broadcasts to them without changing them (as the verifiers of the
/// fused ops require).
static bool isNormParam(Value param, ArrayRef<int64_t> normalized) {
  ArrayRef<int64_t> shape = shapeOf(param);
  if (shape.size() > normalized.size())
    return false;
  std::optional<SmallVector<int64_t>> merged =
      broadcastShapes(normalized, shape);
  return merged && isCompatibleShape(*merged, normalized);
}

/// Completes `match` from the normalized value `normalized` of `x`: the cast
/// back to the input type when the statistics were taken in f32, then the
/// scale (Mul) and, for a layer norm, the bias (Add). Checks last that no
/// intermediate value is used outside the subgraph.
static NormResult completeNorm(NormMatch match, Value x, Value normalized,
                               StringRef kind) {
  match.input = x;
  Value current = normalized;
  // Cast(x0 -> f32), statistics, Cast(-> type of x0): ONNX LayerNormalization
  // with stash_type = 1, which the fused op on x0 computes.
  if (auto castIn = x.getDefiningOp<CastOp>()) {
    Value narrow = castIn.getInput();
    auto castOut = findSingleUser<CastOp>(current);
    if (castOut && castOut.getType() == narrow.getType() &&
        llvm::isa<FloatType>(elementTypeOf(narrow)) &&
        elementTypeOf(narrow).getIntOrFloatBitWidth() <
            elementTypeOf(x).getIntOrFloatBitWidth()) {
      match.input = narrow;
      match.ops.push_back({castOut, "cast back"});
      current = castOut.getOutput();
    }
  }

  ArrayRef<int64_t> normalizedDims =
      shapeOf(match.input).drop_front(match.axis);
  if (auto mul = findSingleUser<MulOp>(current)) {
    Value scale = otherOperandOf(mul, current);
    if (scale != current && mul.getType() == current.getType() &&
        isNormParam(scale, normalizedDims)) {
      match.scale = scale;
      match.ops.push_back({mul, "scaled value"});
      current = mul.getOutput();
    }
  }
  if (kind == kLayerNorm) {
    if (auto add = findSingleUser<AddOp>(current)) {
      Value bias = otherOperandOf(add, current);
      if (bias != current && add.getType() == current.getType() &&
          isNormParam(bias, normalizedDims)) {
        match.bias = bias;
        match.ops.push_back({add, "shifted value"});
      }
    }
  }

  llvm::SmallPtrSet<Operation *, 16> inside;
  for (const MatchedOp &matched : match.ops)
    inside.insert(matched.op);
  for (const MatchedOp &matched : ArrayRef(match.ops).drop_back())
    for (Operation *user : matched.op->getUsers())
      if (!inside.contains(user))
        return nearMiss(
            llvm::formatv("the {0} has a use outside the {1}", matched.role,
                          kind == kLayerNorm ? "layer norm" : "RMS norm"));
  return match;
}

/// `ReduceMean(x)` starting `(x - mean) / sqrt(mean((x - mean)^2) + eps)`.
static NormResult matchLayerNorm(ReduceMeanOp mean) {
  Value x = mean.getInput();
  auto sub = findUser<SubOp>(mean.getOutput());
  if (!sub || !llvm::isa<FloatType>(elementTypeOf(x)) || shapeOf(x).empty())
    return notCandidate();
  if (sub.getLhs() == mean.getOutput())
    return nearMiss("subtraction is mean - x, not x - mean");
  if (sub.getLhs() != x)
    return nearMiss("the mean is subtracted from a value other than its input");
  FusionMatch<int64_t> axis = matchTrailingReduction(mean, "reduction");
  if (!axis.succeeded())
    return axis.getMismatch();
  if (auto why = checkStatisticsType(x, "mean", kLayerNorm))
    return nearMiss(*why);

  Value centered = sub.getOutput();
  Operation *square = nullptr;
  for (Operation *user : centered.getUsers())
    if (squaredValue(user) == centered)
      square = user;
  if (!square)
    return nearMiss("variance is not computed from the centered value");
  if (auto why = checkSquare(square))
    return nearMiss(*why);
  auto variance = findUser<ReduceMeanOp>(square->getResult(0));
  if (!variance)
    return nearMiss("squared centered value is not averaged");
  FusionMatch<int64_t> varianceAxis =
      matchTrailingReduction(variance, "variance reduction");
  if (!varianceAxis.succeeded())
    return varianceAxis.getMismatch();
  if (*varianceAxis != *axis)
    return nearMiss("variance is reduced over other dims than the mean");
  FusionMatch<NormTail> tail =
      matchNormTail(variance, "variance", "standard deviation");
  if (!tail.succeeded())
    return tail.getMismatch();
  if (tail->numerator != centered)
    return nearMiss("standard deviation divides a value other than x - mean");

  NormMatch match;
  match.axis = *axis;
  match.epsilon = tail->epsilon;
  match.ops = {{mean, "mean"},
               {sub, "centered value"},
               {square, "square"},
               {variance, "variance"}};
  llvm::append_range(match.ops, tail->ops);
  return completeNorm(std::move(match), x, tail->ops.back().op->getResult(0),
                      kLayerNorm);
}

/// `ReduceMean(x^2)` starting `x / sqrt(mean(x^2) + eps)`.
static NormResult matchRmsNorm(ReduceMeanOp meanSquare) {
  Operation *square = meanSquare.getInput().getDefiningOp();
  Value x = squaredValue(square);
  if (!x || !llvm::isa<FloatType>(elementTypeOf(x)) || shapeOf(x).empty() ||
      !findUser<AddOp>(meanSquare.getOutput()))
    return notCandidate();
  // The variance of a layer norm is the layer norm's to report.
  if (auto sub = x.getDefiningOp<SubOp>())
    if (sub.getRhs().getDefiningOp<ReduceMeanOp>() ||
        sub.getLhs().getDefiningOp<ReduceMeanOp>())
      return notCandidate();
  if (auto why = checkSquare(square))
    return nearMiss(*why);
  FusionMatch<int64_t> axis = matchTrailingReduction(meanSquare, "reduction");
  if (!axis.succeeded())
    return axis.getMismatch();
  if (auto why = checkStatisticsType(x, "mean square", kRmsNorm))
    return nearMiss(*why);
  FusionMatch<NormTail> tail =
      matchNormTail(meanSquare, "mean square", "root mean square");
  if (!tail.succeeded())
    return tail.getMismatch();
  if (tail->numerator != x)
    return nearMiss("root mean square divides a value other than the one "
                    "squared");

  NormMatch match;
  match.axis = *axis;
  match.epsilon = tail->epsilon;
  match.ops = {{square, "square"}, {meanSquare, "mean square"}};
  llvm::append_range(match.ops, tail->ops);
  return completeNorm(std::move(match), x, tail->ops.back().op->getResult(0),
                      kRmsNorm);
}

/// Ones shaped like the normalized dims (1s where they are dynamic), the
/// scale of a norm that has none.
static Value buildUnitScale(PatternRewriter &rewriter, Location loc,
                            const NormMatch &match) {
  auto inputType = llvm::cast<RankedTensorType>(match.input.getType());
  SmallVector<int64_t> shape(inputType.getShape().drop_front(match.axis));
  if (llvm::any_of(shape, ShapedType::isDynamic))
    shape.assign(shape.size(), 1);
  auto type = RankedTensorType::get(shape, inputType.getElementType());
  return ConstantOp::create(
      rewriter, loc,
      DenseElementsAttr::get(
          type, rewriter.getFloatAttr(inputType.getElementType(), 1.0)));
}

static void replaceNorm(PatternRewriter &rewriter, const NormMatch &match,
                        StringRef kind) {
  Operation *last = match.ops.back().op;
  SmallVector<Location> locs;
  for (const MatchedOp &matched : match.ops)
    locs.push_back(matched.op->getLoc());
  Location loc = rewriter.getFusedLoc(locs);
  rewriter.setInsertionPoint(last);
  Value scale =
      match.scale ? match.scale : buildUnitScale(rewriter, loc, match);
  Type type = match.input.getType();
  int64_t axis = match.axis - static_cast<int64_t>(shapeOf(match.input).size());
  Value fused;
  if (kind == kLayerNorm)
    fused = LayerNormOp::create(rewriter, loc, type, match.input, scale,
                                match.bias, rewriter.getI64IntegerAttr(axis),
                                rewriter.getF32FloatAttr(match.epsilon));
  else
    fused = RmsNormOp::create(rewriter, loc, type, match.input, scale,
                              rewriter.getI64IntegerAttr(axis),
                              rewriter.getF32FloatAttr(match.epsilon));
  rewriter.replaceOp(last, fused);
  for (const MatchedOp &matched : llvm::reverse(match.ops))
    if (matched.op != last && matched.op->use_empty())
      rewriter.eraseOp(matched.op);
}

namespace {

using NormMatcher = NormResult (*)(ReduceMeanOp);

/// Rewrites the normalization anchored at a ReduceMean into `kind`.
struct FuseNormPattern : OpRewritePattern<ReduceMeanOp> {
  FuseNormPattern(MLIRContext *context, StringRef kind, NormMatcher matcher)
      : OpRewritePattern(context), kind(kind), matcher(matcher) {}

  LogicalResult matchAndRewrite(ReduceMeanOp op,
                                PatternRewriter &rewriter) const override {
    NormResult match = matcher(op);
    if (!match.succeeded())
      return rewriter.notifyMatchFailure(
          op, match.isCandidate() ? match.getReason() : "not a candidate");
    Location anchor = op.getLoc();
    replaceNorm(rewriter, *match, kind);
    getFusionReport(getContext()).recordFused(kind, anchor);
    return success();
  }

  StringRef kind;
  NormMatcher matcher;
};

struct FuseLayerNormPass
    : lmopt::impl::FuseLayerNormPassBase<FuseLayerNormPass> {
  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    report.registerKind(kLayerNorm);
    report.registerKind(kRmsNorm);
    RewritePatternSet patterns(&getContext());
    populateFuseLayerNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // What is left did not match: say why.
    getOperation()->walk([&](ReduceMeanOp op) {
      for (auto [kind, matcher] : {std::pair(kLayerNorm, &matchLayerNorm),
                                   std::pair(kRmsNorm, &matchRmsNorm)}) {
        NormResult match = matcher(op);
        if (match.isNearMiss())
          report.recordNearMiss(kind, op.getLoc(), match.getReason());
      }
    });
  }
};

} // namespace

void mlir::lmopt::populateFuseLayerNormPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<FuseNormPattern>(context, kLayerNorm, &matchLayerNorm);
  patterns.add<FuseNormPattern>(context, kRmsNorm, &matchRmsNorm);
}
