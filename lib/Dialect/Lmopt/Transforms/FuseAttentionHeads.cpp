//===- FuseAttentionHeads.cpp - Q, K and V split into heads ---------------===//
//
// The attention matcher's view of the matmul operands: the walk from the
// heads up through transposes, reshapes and scalar scales to the packed
// projection (or KV cache concat) they were split from, proven dim by dim;
// and the rewrites that bring other QKV layouts to that packed one.
//
//===----------------------------------------------------------------------===//

#include "FuseAttentionMatch.h"
#include "LinearWeights.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;

static std::string formatPerm(ArrayRef<int64_t> perm) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(perm, os);
  os << "]";
  return text;
}

bool mlir::lmopt::usersTakeAnyShape(Operation *op) {
  return llvm::all_of(op->getUsers(), [](Operation *user) {
    return llvm::isa<LmoptDialect>(user->getDialect()) &&
           !user->hasTrait<OpTrait::SameOperandsAndResultType>();
  });
}

std::string mlir::lmopt::describeProducer(Value value) {
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

/// The value of a one-element tensor computed from constants and tensor
/// dims whose sizes are provably constant (getStaticDim): DeBERTa divides
/// its keys by `sqrt(float(q.size(-1)) * 3)`, a head size the types may
/// leave dynamic.
static std::optional<double> evaluateScalar(Value value, int depth = 0) {
  auto type = llvm::dyn_cast<ShapedType>(value.getType());
  if (depth > 16 || !type || !type.hasStaticShape() ||
      type.getNumElements() != 1)
    return std::nullopt;
  if (std::optional<double> constant = getScalarConstant(value))
    return constant;
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  auto operand = [&](unsigned i) {
    return evaluateScalar(op->getOperand(i), depth + 1);
  };
  if (llvm::isa<CastOp>(op)) {
    Type to = getElementTypeOrSelf(value.getType());
    std::optional<double> x = operand(0);
    if (!x ||
        (!to.isF32() && !to.isF64() && !to.isInteger(64) && !to.isInteger(32)))
      return std::nullopt;
    return to.isInteger(64) || to.isInteger(32) ? std::trunc(*x) : *x;
  }
  if (llvm::isa<SqrtOp>(op)) {
    std::optional<double> x = operand(0);
    if (!x || *x < 0)
      return std::nullopt;
    return std::sqrt(*x);
  }
  if (llvm::isa<MulOp, DivOp, AddOp, SubOp>(op)) {
    std::optional<double> lhs = operand(0), rhs = operand(1);
    if (!lhs || !rhs)
      return std::nullopt;
    if (llvm::isa<MulOp>(op))
      return *lhs * *rhs;
    if (llvm::isa<AddOp>(op))
      return *lhs + *rhs;
    if (llvm::isa<SubOp>(op))
      return *lhs - *rhs;
    // Integer division truncates, as the op does.
    if (*rhs == 0)
      return std::nullopt;
    bool integer = getElementTypeOrSelf(value.getType()).isInteger();
    return integer ? std::trunc(*lhs / *rhs) : *lhs / *rhs;
  }
  // A dim read from a Shape: one element of a shape vector.
  Value shapeVector;
  if (auto squeeze = llvm::dyn_cast<SqueezeOp>(op))
    shapeVector = squeeze.getInput();
  else if (llvm::isa<GatherOp, SliceOp, ShapeOp>(op))
    shapeVector = value;
  if (!shapeVector)
    return std::nullopt;
  std::optional<ShapeElement> element = getShapeElement(shapeVector, 0);
  if (!element)
    return std::nullopt;
  if (element->constant)
    return double(*element->constant);
  if (std::optional<int64_t> size = getStaticDim(element->source, element->dim))
    return double(*size);
  return std::nullopt;
}

LogicalResult mlir::lmopt::peelScale(Value &value, double &scale,
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
    std::optional<double> factor;
    if (!isConstant(factorValue)) {
      if (!scalarShaped)
        return success(); // a product of tensors, not a scale
      factor = evaluateScalar(factorValue);
      if (!factor) {
        reason = "attention scale is computed at run time from values that "
                 "are not constants";
        return failure();
      }
    } else {
      factor = getScalarConstant(factorValue);
    }
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

/// Whether `op` can stand between a packed projection and its heads: a
/// transpose or reshape between rank-3 and rank-4 tensors.
static bool isHeadLayoutOp(Operation *op) {
  if (!llvm::isa_and_nonnull<TransposeOp, ReshapeOp>(op))
    return false;
  int64_t in = shapeOf(op->getOperand(0)).size();
  int64_t out = shapeOf(op->getResult(0)).size();
  return (in == 3 || in == 4) && (out == 3 || out == 4);
}

/// Replays `chain` (ops from the heads up to just below `source`) on the
/// layout of `source` = [A0, A1, E] and checks that the heads come out as
/// `expectedPerm` of [B, S, H, D], with the batch either A0 (a packed
/// [B, S, H*D] projection) or A1 (nn.MultiheadAttention's [S, B, E]).
static FailureOr<HeadSplit>
matchLayout(Value source, ArrayRef<Operation *> chain, StringRef role,
            ArrayRef<int64_t> expectedPerm, std::string &reason) {
  ArrayRef<int64_t> in = shapeOf(source);
  auto noSplit = [&] {
    reason = (role + " reshape to heads does not split a static hidden dim "
                     "into static [H, D]")
                 .str();
    return failure();
  };
  if (in.size() != 3 || ShapedType::isDynamic(in[2]))
    return noSplit();
  DimLayout layout(source);
  for (Operation *op : llvm::reverse(chain)) {
    if (succeeded(layout.apply(op)))
      continue;
    if (op != chain.back()) {
      reason = (role + " heads are regrouped by a reshape that does not "
                       "provably keep the batch, sequence and head dims")
                   .str();
      return failure();
    }
    if (layout.failedOnStaticSize())
      return noSplit();
    reason = (role + " reshape to heads does not provably keep the batch and "
                     "sequence dims")
                 .str();
    return failure();
  }
  if (layout.getNumAtoms() != 4)
    return noSplit();
  SmallVector<int64_t> perm;
  for (ArrayRef<int64_t> group : layout.getGroups()) {
    if (group.size() != 1) {
      reason = (role + " heads are not a transpose of [B, S, H, D]").str();
      return failure();
    }
    perm.push_back(group.front());
  }
  // Batch and sequence swapped: the projection is [S, B, E].
  SmallVector<int64_t> swapped =
      llvm::map_to_vector(perm, [](int64_t p) { return p < 2 ? 1 - p : p; });
  bool batchFirst = ArrayRef<int64_t>(perm) == expectedPerm;
  if (!batchFirst && ArrayRef<int64_t>(swapped) != expectedPerm) {
    reason = (role + " heads are permuted by " + formatPerm(perm) +
              " instead of " + formatPerm(expectedPerm))
                 .str();
    return failure();
  }
  return HeadSplit{source, batchFirst, layout.getAtomSize(2),
                   layout.getAtomSize(3)};
}

/// Whether `op` concatenates head-split `[B, H, S, D]` tensors on the
/// sequence axis, as a KV cache joins the new heads.
static bool isHeadSplitConcat(Operation *op) {
  auto concat = llvm::dyn_cast_or_null<ConcatOp>(op);
  return concat && concat.getInputs().size() == 2 &&
         shapeOf(concat).size() == 4 && normalizeAxis(concat.getAxis(), 4) == 2;
}

/// Checks that `chain` (ops from the matmul operand up to `what`, a tensor
/// in head-split layout [B, H, S, D]) is transposes only and brings
/// [B, H, S, D] to `expectedPerm` of [B, S, H, D].
static LogicalResult matchHeadSplitChain(ArrayRef<Operation *> chain,
                                         StringRef role, StringRef what,
                                         ArrayRef<int64_t> expectedPerm,
                                         std::string &reason) {
  SmallVector<int64_t> perm = {0, 2, 1, 3}; // [B, H, S, D] of [B, S, H, D]
  for (Operation *op : llvm::reverse(chain)) {
    auto transpose = llvm::dyn_cast<TransposeOp>(op);
    if (!transpose) {
      reason = (role + " " + what +
                " in head-split layout [B, H, S, D] is reshaped before the "
                "matmul")
                   .str();
      return failure();
    }
    perm = llvm::map_to_vector(transpose.getPerm(),
                               [&](int64_t p) { return perm[p]; });
  }
  if (ArrayRef<int64_t>(perm) != expectedPerm) {
    reason = (role + " " + what +
              " in head-split layout [B, H, S, D] reaches the matmul "
              "permuted by " +
              formatPerm(perm) + " instead of " + formatPerm(expectedPerm))
                 .str();
    return failure();
  }
  return success();
}

/// Matches `concat(cache [B, H, P, D], newHeads, axis = 2)` reached from the
/// matmul operand through the transposes in `chain`: the new heads must be a
/// proven head split of a packed projection, and the chain must bring
/// [B, H, S, D] to `expectedPerm` of [B, S, H, D]. The concat itself becomes
/// the head-split key or value.
static FailureOr<HeadSplit>
matchCachedHeads(ConcatOp concat, ArrayRef<Operation *> chain, StringRef role,
                 ArrayRef<int64_t> expectedPerm, std::string &reason) {
  if (failed(matchHeadSplitChain(chain, role, "cache concat", expectedPerm,
                                 reason)))
    return failure();
  double newScale = 1.0;
  FailureOr<HeadSplit> split =
      matchHeadSplit(concat.getInputs()[1], role, {0, 2, 1, 3}, newScale,
                     reason, /*allowCache=*/false);
  if (failed(split))
    return failure();
  if (newScale != 1.0) {
    reason = (role + " heads are scaled before joining the cache, which the "
                     "scale does not reach")
                 .str();
    return failure();
  }
  return HeadSplit{concat.getResult(), /*batchFirst=*/true, split->numHeads,
                   split->headDim, /*headsSplit=*/true};
}

/// Whether element `index` of the shape `shape` (of an op whose input has
/// `inputRank` dims) provably is dim `dim` of `heads`: a constant equal to
/// its static size, a dim traced to it, or `keepsZero` and a constant 0
/// (ONNX's copy of the input's dim, the same dim here).
static bool isHeadsDim(Value shape, int64_t index, Value heads, int64_t dim,
                       bool keepsZero) {
  std::optional<ShapeElement> element = getShapeElement(shape, index);
  if (!element)
    return false;
  int64_t size = shapeOf(heads)[dim];
  if (element->constant)
    return (keepsZero && *element->constant == 0) ||
           (!ShapedType::isDynamic(size) && *element->constant == size);
  return dimsEqual(element->source, element->dim, heads, dim);
}

/// `where(shape == -1, 1, shape)`, which TorchScript exports put on an
/// Expand's shape, keeps every dim and constant but -1; peels it.
static Value peelExpandShapeGuard(Value shape) {
  auto where = shape.getDefiningOp<WhereOp>();
  if (!where)
    return shape;
  auto equal = where.getCondition().getDefiningOp<EqualOp>();
  std::optional<double> one = getSplatValue(where.getX());
  if (!equal || equal.getLhs() != where.getY() || !one || *one != 1.0)
    return shape;
  std::optional<double> minusOne = getSplatValue(equal.getRhs());
  return minusOne && *minusOne == -1.0 ? where.getY() : shape;
}

namespace {
/// A matched repeat_kv: `heads` [B, G, S, D], each head repeated `repeats`
/// times; `headCount`, when set, is the constant G the expand's shape names,
/// which the head split of `heads` must prove.
struct RepeatKv {
  Value heads;
  int64_t repeats = 1;
  std::optional<int64_t> headCount;
};
} // namespace

/// Llama's `repeat_kv`: `reshape(expand(unsqueeze(x, 2), [B, G, n, S, D]),
/// [B, G*n, S, D])` repeats each of x's G heads n times. Matches when `op`
/// is that reshape with every other dim proven kept (G possibly a constant
/// left to the caller to prove).
static std::optional<RepeatKv> matchRepeatKv(Operation *op) {
  auto reshape = llvm::dyn_cast_or_null<ReshapeOp>(op);
  if (!reshape || shapeOf(reshape).size() != 4 ||
      shapeOf(reshape.getInput()).size() != 5)
    return std::nullopt;
  auto expand = reshape.getInput().getDefiningOp<ExpandOp>();
  auto unsqueeze =
      expand ? expand.getInput().getDefiningOp<UnsqueezeOp>() : UnsqueezeOp();
  if (!unsqueeze || unsqueeze.getAxes() != ArrayRef<int64_t>{2} ||
      shapeOf(unsqueeze.getInput()).size() != 4)
    return std::nullopt;
  Value heads = unsqueeze.getInput();
  Value target = peelExpandShapeGuard(expand.getShape());
  std::optional<ShapeElement> repeat = getShapeElement(target, 2);
  if (!repeat || !repeat->constant || *repeat->constant < 1)
    return std::nullopt;
  // Expand keeps a dim where its shape says 1 or the dim itself. The
  // head count may be a constant where the heads' type leaves it dynamic
  // (the dynamo export): the caller checks it against the head split.
  RepeatKv match{heads, *repeat->constant, std::nullopt};
  static const int64_t kExpandDims[] = {0, 1, -1, 2, 3};
  for (int64_t i : {0, 1, 3, 4}) {
    std::optional<ShapeElement> element = getShapeElement(target, i);
    if (element && element->constant == 1)
      continue;
    if (isHeadsDim(target, i, heads, kExpandDims[i], false))
      continue;
    if (i != 1 || !element || !element->constant)
      return std::nullopt;
    match.headCount = *element->constant;
  }
  // The reshape keeps batch, sequence and head size; the element count
  // then makes the head dim G*n.
  bool keepsZero = !reshape.getAllowzero();
  Value shape = reshape.getShape();
  if (!isHeadsDim(shape, 0, heads, 0, keepsZero) ||
      !isHeadsDim(shape, 2, heads, 2, false) ||
      !isHeadsDim(shape, 3, heads, 3, false))
    return std::nullopt;
  return match;
}

/// Matches repeat_kv (`repeatOp`) reached from the matmul operand through
/// the transposes in `chain`, and the heads it repeats.
static FailureOr<HeadSplit>
matchRepeatedHeads(const RepeatKv &repeat, ArrayRef<Operation *> chain,
                   StringRef role, ArrayRef<int64_t> expectedPerm,
                   double &scale, std::string &reason, bool allowCache) {
  if (failed(matchHeadSplitChain(chain, role, "repeat_kv of heads",
                                 expectedPerm, reason)))
    return failure();
  FailureOr<HeadSplit> split = matchHeadSplit(repeat.heads, role, {0, 2, 1, 3},
                                              scale, reason, allowCache);
  if (failed(split))
    return failure();
  if (repeat.headCount && *repeat.headCount != split->numHeads) {
    reason = (role + " repeat_kv expands " + Twine(*repeat.headCount) +
              " heads, but its input has " + Twine(split->numHeads))
                 .str();
    return failure();
  }
  if (split->repeats != 1) {
    reason =
        (role + " heads are repeated twice (repeat_kv of repeat_kv)").str();
    return failure();
  }
  split->repeats = repeat.repeats;
  return split;
}

namespace {

/// Heads [B, S, H, D] of the part [begin, begin + H*D) of the last dim of
/// `packed` ([B, S, W]): reshape(slice(packed), [0, 0, H, D]), of type
/// `headsType`.
Value headsOfPart(PatternRewriter &rewriter, Location loc, Value packed,
                  int64_t begin, int64_t numHeads, int64_t headDim,
                  Type headsType) {
  auto type = llvm::cast<RankedTensorType>(packed.getType());
  ArrayRef<int64_t> shape = type.getShape();
  const int64_t width = numHeads * headDim;
  Value part =
      SliceOp::create(rewriter, loc, type.clone({shape[0], shape[1], width}),
                      packed, buildI64Vector(rewriter, loc, {begin}),
                      buildI64Vector(rewriter, loc, {begin + width}),
                      buildI64Vector(rewriter, loc, {2}), Value());
  return ReshapeOp::create(
      rewriter, loc, headsType, part,
      buildI64Vector(rewriter, loc, {0, 0, numHeads, headDim}), BoolAttr());
}

/// Q, K and V taken from one reshape of a packed QKV projection (ModernBERT;
/// `unbind` exports as a Split or as one Slice per part):
///
///   grouped = reshape(qkv, [B, S, G, H, D])
///   heads_i = squeeze(split(grouped, axis 2, [1] * G)[i], axis 2)
///          or squeeze(slice(grouped, [i], [i + 1], axis 2), axis 2)
///
/// becomes a slice of the projection's last dim and a reshape,
///
///   heads_i = reshape(slice(qkv, [i*H*D], [(i+1)*H*D], axis 2), [0, 0, H, D])
///
/// the same elements, so that the attention matcher finds each part as a
/// packed [B, S, H*D] projection (the attention step then reads it in
/// place, as it does GPT-2's).
struct SplitGroupedHeads : OpRewritePattern<SqueezeOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Which of the G groups `part` (a rank-5 split result or slice on axis
  /// 2) holds, and the grouped tensor.
  static std::optional<std::pair<Value, int64_t>> getGroup(Value part) {
    if (auto split = part.getDefiningOp<SplitOp>()) {
      ArrayRef<int64_t> sizes = split.getSplitSizes();
      if (normalizeAxis(split.getAxis(), 5) != 2 ||
          llvm::any_of(sizes, [](int64_t size) { return size != 1; }))
        return std::nullopt;
      return std::make_pair(
          split.getInput(),
          int64_t(llvm::cast<OpResult>(part).getResultNumber()));
    }
    auto slice = part.getDefiningOp<SliceOp>();
    if (!slice || shapeOf(slice.getInput()).size() != 5)
      return std::nullopt;
    std::optional<SingleAxisSlice> sliced = getSingleAxisSlice(slice);
    if (!sliced || sliced->axis != 2 || sliced->range.count != 1)
      return std::nullopt;
    return std::make_pair(slice.getInput(), sliced->range.start);
  }

  LogicalResult matchAndRewrite(SqueezeOp op,
                                PatternRewriter &rewriter) const override {
    if (shapeOf(op.getInput()).size() != 5 || op.getAxes().size() != 1 ||
        normalizeAxis(op.getAxes()[0], 5) != 2)
      return rewriter.notifyMatchFailure(op, "does not squeeze dim 2 of 5");
    std::optional<std::pair<Value, int64_t>> group = getGroup(op.getInput());
    auto reshape =
        group ? group->first.getDefiningOp<ReshapeOp>() : ReshapeOp();
    if (!reshape)
      return rewriter.notifyMatchFailure(op, "not a group of a reshape");
    ArrayRef<int64_t> packed = shapeOf(reshape.getInput());
    ArrayRef<int64_t> grouped = shapeOf(reshape);
    if (packed.size() != 3)
      return rewriter.notifyMatchFailure(op, "not [B, S, G, H, D]");
    const int64_t width = packed[2], groups = grouped[2], headDim = grouped[4];
    if (ShapedType::isDynamic(width) || ShapedType::isDynamic(groups) ||
        ShapedType::isDynamic(headDim) || width % (groups * headDim) != 0)
      return rewriter.notifyMatchFailure(op, "sizes are not static");
    const int64_t part = width / groups, heads = part / headDim;
    if (!ShapedType::isDynamic(grouped[3]) && grouped[3] != heads)
      return rewriter.notifyMatchFailure(op, "heads do not fill the width");
    if (!reshapeKeepsDim(reshape, 0, {}) || !reshapeKeepsDim(reshape, 1, {}))
      return rewriter.notifyMatchFailure(op, "batch or sequence regrouped");
    rewriter.replaceOp(op, headsOfPart(rewriter, op.getLoc(),
                                       reshape.getInput(), group->second * part,
                                       heads, headDim, op.getType()));
    return success();
  }
};

/// A projection `x W (+ b)` by constants: a linear (no residual, input
/// unquantized, not transposed), or the matmul and bias add it is before
/// linear fusion.
struct Projection {
  LinearOp linear;
  MatMulOp matmul;
  AddOp add; // the bias add of `matmul`, when there is one
};

std::optional<Projection> matchProjection(Value value) {
  if (auto linear = value.getDefiningOp<LinearOp>()) {
    if (linear.getResidual() || linear.getTransposeInput() ||
        linear.getInputQuantization() != InputQuantization::none)
      return std::nullopt;
    return Projection{linear, {}, {}};
  }
  Projection projection;
  if ((projection.add = value.getDefiningOp<AddOp>())) {
    for (Value operand : {projection.add.getLhs(), projection.add.getRhs()})
      if (auto matmul = operand.getDefiningOp<MatMulOp>())
        projection.matmul = matmul;
    if (!projection.matmul || !projection.matmul->hasOneUse())
      return std::nullopt;
  } else if (!(projection.matmul = value.getDefiningOp<MatMulOp>())) {
    return std::nullopt;
  }
  if (shapeOf(projection.matmul.getRhs()).size() != 2)
    return std::nullopt;
  return projection;
}

/// `projection` with its output columns reordered (column i of the result
/// is column order[i] of the old one), or null when its weight or bias is
/// not a constant f32.
Value permuteColumns(PatternRewriter &rewriter, Projection projection,
                     ArrayRef<int64_t> order) {
  std::string why;
  Value weightValue = projection.linear ? projection.linear.getWeight()
                                        : projection.matmul.getRhs();
  Value biasValue;
  if (projection.linear) {
    biasValue = projection.linear.getBias();
  } else if (projection.add) {
    biasValue = projection.add.getLhs() == projection.matmul.getResult()
                    ? projection.add.getRhs()
                    : projection.add.getLhs();
    if (shapeOf(biasValue).size() != 1)
      return {};
  }
  bool transposed = projection.linear && projection.linear.getTransposeWeight();
  FailureOr<WeightMatrix> weight = readMatrix(weightValue, transposed, why);
  FailureOr<WeightMatrix> bias = biasValue
                                     ? readMatrix(biasValue, false, why)
                                     : FailureOr<WeightMatrix>(WeightMatrix());
  const int64_t width = int64_t(order.size());
  if (failed(weight) || failed(bias) || weight->outWidth() != width)
    return {};
  Operation *root = projection.linear
                        ? projection.linear.getOperation()
                        : (projection.add ? projection.add.getOperation()
                                          : projection.matmul.getOperation());
  rewriter.setInsertionPoint(root);
  Value newWeight =
      cutConstant(rewriter, weightValue, *weight, weight->inWidth(), width,
                  keepOutputs(*weight, order), "grouped_qkv");
  Value newBias =
      biasValue ? cutConstant(rewriter, biasValue, *bias, 1, width,
                              keepOutputs(*bias, order), "grouped_qkv_bias")
                : Value();
  if (projection.linear) {
    auto linear = cast<LinearOp>(rewriter.clone(*projection.linear));
    linear.getWeightMutable().assign(newWeight);
    if (newBias)
      linear.getBiasMutable().assign(newBias);
    return linear.getOutput();
  }
  auto matmul = cast<MatMulOp>(rewriter.clone(*projection.matmul));
  matmul.getRhsMutable().assign(newWeight);
  if (!projection.add)
    return matmul.getResult();
  auto add = cast<AddOp>(rewriter.clone(*projection.add));
  bool biasFirst = projection.add.getLhs() == biasValue;
  add.getLhsMutable().assign(biasFirst ? newBias : matmul.getResult());
  add.getRhsMutable().assign(biasFirst ? matmul.getResult() : newBias);
  return add.getResult();
}

/// Q, K and V interleaved per head in one projection (GPT-NeoX):
///
///   heads   = transpose(reshape(qkv, [B, S, H, G*D]), [0, 2, 1, 3])
///   part_g  = heads[..., g*D : (g+1)*D]
///
/// where qkv is a projection by constants read by nothing else (a linear,
/// or the matmul and bias add before linear fusion). Its output columns
/// are permuted at compile time to [G][H][D] (all heads of Q, then of K,
/// then of V), so that each part is a slice of the projection's last dim
/// split into heads, as a packed one is:
///
///   part_g  = transpose(reshape(qkv'[..., g*H*D : (g+1)*H*D], [0, 0, H, D]))
struct UninterleaveHeads : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> packed = shapeOf(op.getInput());
    ArrayRef<int64_t> grouped = shapeOf(op);
    if (packed.size() != 3 || grouped.size() != 4 ||
        ShapedType::isDynamic(packed[2]) || ShapedType::isDynamic(grouped[3]) ||
        packed[2] % grouped[3] != 0)
      return rewriter.notifyMatchFailure(op, "not [B, S, W] to [B, S, H, G*D]");
    std::optional<Projection> projection = matchProjection(op.getInput());
    if (!projection || !op.getInput().hasOneUse())
      return rewriter.notifyMatchFailure(op, "not the sole reader of a "
                                             "projection by constants");
    if (!reshapeKeepsDim(op, 0, {}) || !reshapeKeepsDim(op, 1, {}))
      return rewriter.notifyMatchFailure(op, "batch or sequence regrouped");
    const int64_t width = packed[2], groupWidth = grouped[3],
                  numHeads = width / groupWidth;
    // Every reader takes one head-dim-wide part of the transposed heads.
    int64_t headDim = 0;
    // (part, its offset along the last axis, its width)
    SmallVector<std::tuple<Value, int64_t, int64_t>> parts;
    SmallVector<Operation *> readers;
    for (Operation *user : op->getUsers()) {
      auto transpose = llvm::dyn_cast<TransposeOp>(user);
      if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
        return rewriter.notifyMatchFailure(op, "heads are not transposed");
      for (Operation *reader : transpose->getUsers()) {
        readers.push_back(reader);
        if (auto split = llvm::dyn_cast<SplitOp>(reader)) {
          if (normalizeAxis(split.getAxis(), 4) != 3)
            return rewriter.notifyMatchFailure(op, "heads are split whole");
          int64_t offset = 0;
          for (auto [result, size] :
               llvm::zip(split.getOutputs(), split.getSplitSizes())) {
            parts.push_back({result, offset, size});
            offset += size;
          }
          continue;
        }
        auto slice = llvm::dyn_cast<SliceOp>(reader);
        std::optional<SingleAxisSlice> sliced =
            slice ? getSingleAxisSlice(slice) : std::nullopt;
        if (!sliced || sliced->axis != 3 || sliced->range.step != 1)
          return rewriter.notifyMatchFailure(op, "heads are read whole");
        parts.push_back(
            {slice.getOutput(), sliced->range.start, sliced->range.count});
      }
    }
    for (auto [part, offset, size] : parts) {
      if (headDim && size != headDim)
        return rewriter.notifyMatchFailure(op, "parts differ in width");
      headDim = size;
      if (headDim <= 0 || groupWidth % headDim != 0 || offset % headDim != 0)
        return rewriter.notifyMatchFailure(op, "parts are not head-dim wide");
    }
    if (parts.empty() || headDim == groupWidth)
      return rewriter.notifyMatchFailure(op, "no interleaved parts");
    // Column g*H*D + h*D + d of the new projection is h*G*D + g*D + d's.
    const int64_t groups = groupWidth / headDim;
    SmallVector<int64_t> order;
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t h = 0; h < numHeads; ++h)
        for (int64_t d = 0; d < headDim; ++d)
          order.push_back(h * groupWidth + g * headDim + d);
    Value regrouped = permuteColumns(rewriter, *projection, order);
    if (!regrouped)
      return rewriter.notifyMatchFailure(op, "weights are not constants");
    auto packedType = llvm::cast<RankedTensorType>(op.getInput().getType());
    auto headsType =
        packedType.clone({packed[0], packed[1], numHeads, headDim});
    Location loc = op.getLoc();
    for (auto [partValue, offset, size] : parts) {
      rewriter.setInsertionPointAfterValue(partValue);
      Value heads = headsOfPart(rewriter, loc, regrouped,
                                offset / headDim * numHeads * headDim, numHeads,
                                headDim, headsType);
      Value transposed =
          TransposeOp::create(rewriter, loc, partValue.getType(), heads,
                              rewriter.getDenseI64ArrayAttr({0, 2, 1, 3}));
      rewriter.replaceAllUsesWith(partValue, transposed);
    }
    for (Operation *reader : readers)
      rewriter.eraseOp(reader);
    return success();
  }
};

} // namespace

void mlir::lmopt::populateHeadLayoutPatterns(RewritePatternSet &patterns) {
  patterns.add<SplitGroupedHeads, UninterleaveHeads>(patterns.getContext());
}

FailureOr<HeadSplit> mlir::lmopt::matchHeadSplit(Value heads, StringRef role,
                                                 ArrayRef<int64_t> expectedPerm,
                                                 double &scale,
                                                 std::string &reason,
                                                 bool allowCache) {
  struct Candidate {
    Value source;
    size_t chainSize;
    double scale;
  };
  SmallVector<Operation *> chain;
  SmallVector<Candidate> candidates;
  Value current = heads;
  double walkScale = scale;
  for (int step = 0; step < 32; ++step) {
    // Past a candidate, what lies further up may be no part of attention.
    if (failed(peelScale(current, walkScale, reason))) {
      if (candidates.empty())
        return failure();
      break;
    }
    if (!chain.empty() && llvm::isa<ReshapeOp>(chain.back()) &&
        shapeOf(current).size() == 3)
      candidates.push_back({current, chain.size(), walkScale});
    Operation *op = current.getDefiningOp();
    if (candidates.empty() && isHeadSplitConcat(op)) {
      if (!allowCache) {
        reason = (role + " heads joining a cache are themselves a "
                         "concatenation")
                     .str();
        return failure();
      }
      FailureOr<HeadSplit> split = matchCachedHeads(
          llvm::cast<ConcatOp>(op), chain, role, expectedPerm, reason);
      if (succeeded(split))
        scale = walkScale;
      return split;
    }
    if (candidates.empty())
      if (std::optional<RepeatKv> repeat = matchRepeatKv(op)) {
        scale = walkScale;
        return matchRepeatedHeads(*repeat, chain, role, expectedPerm, scale,
                                  reason, allowCache);
      }
    if (!isHeadLayoutOp(op))
      break;
    chain.push_back(op);
    current = op->getOperand(0);
  }
  if (candidates.empty()) {
    reason = (role + " heads come from " + describeProducer(current) +
              ", not a reshape of a packed [B, S, H*D] tensor")
                 .str();
    return failure();
  }
  for (const Candidate &candidate : candidates) {
    FailureOr<HeadSplit> split = matchLayout(
        candidate.source,
        ArrayRef<Operation *>(chain).take_front(candidate.chainSize), role,
        expectedPerm, reason);
    if (succeeded(split)) {
      scale = candidate.scale;
      return split;
    }
  }
  return failure();
}
