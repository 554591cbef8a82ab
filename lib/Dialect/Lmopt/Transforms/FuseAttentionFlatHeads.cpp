//===- FuseAttentionFlatHeads.cpp - heads flattened into the batch --------===//
//
// Some exports run attention as batched 3-D products over `[B*H, S, D]`:
// DeBERTa-v2 reshapes its `[B, H, S, D]` heads to `[B*H, S, D]`, multiplies
// with `bmm`, adds its relative-position terms to the `[B*H, S, S]` scores,
// and only then views them as `[B, H, S, S]` for the masked softmax; the
// probabilities go back to `[B*H, S, S]` for the context product. These
// rewrites bring that to the rank-4 form the attention matcher follows:
//
// - a 3-D matmul of two flattened rank-4 tensors (the right one possibly
//   transposed and scaled by a scalar) becomes the rank-4 matmul, flattened
//   after it;
// - a reshape back to rank 4 of `flat(x) + y` becomes `x + unflat(y)`;
// - a reshape back to rank 4 of `flat(x)` becomes `x`.
//
// Each flattening is proven by DimLayout to merge exactly dims 0 and 1
// (and each unflattening to undo it), so the rewrites move no element.
//
//===----------------------------------------------------------------------===//

#include "FuseAttentionMatch.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::lmopt;

/// The rank-4 tensor `flat` is a reshape of, when the reshape provably
/// merges its dims 0 and 1 and keeps 2 and 3: `[b, h, m, n]` to
/// `[b*h, m, n]`.
static Value unflattened(Value flat) {
  auto reshape = flat.getDefiningOp<ReshapeOp>();
  if (!reshape || shapeOf(flat).size() != 3 ||
      shapeOf(reshape.getInput()).size() != 4)
    return {};
  DimLayout layout(reshape.getInput());
  if (failed(layout.apply(reshape)))
    return {};
  ArrayRef<SmallVector<int64_t>> groups = layout.getGroups();
  if (groups.size() != 3 || groups[0] != ArrayRef<int64_t>{0, 1} ||
      groups[1] != ArrayRef<int64_t>{2} || groups[2] != ArrayRef<int64_t>{3})
    return {};
  return reshape.getInput();
}

/// True when `reshape` of the 3-D `flat`, itself `[b*h, m, n]` from the
/// rank-4 `source`, provably gives back `source`'s layout.
static bool undoesFlattening(ReshapeOp reshape, Value flat, Value source) {
  if (shapeOf(reshape).size() != 4)
    return false;
  DimLayout layout(source);
  if (failed(layout.apply(flat.getDefiningOp())) ||
      failed(layout.apply(reshape)))
    return false;
  ArrayRef<SmallVector<int64_t>> groups = layout.getGroups();
  for (int64_t i = 0; i < 4; ++i)
    if (groups[i] != ArrayRef<int64_t>{i})
      return false;
  return true;
}

/// `[b, h, m, n]` viewed as `[b*h, m, n]`: a reshape to (-1, m, n) with m and
/// n read off the value.
static Value flatten(PatternRewriter &rewriter, Location loc, Value value,
                     RankedTensorType type) {
  auto i64 = rewriter.getI64Type();
  Value minusOne = buildI64Vector(rewriter, loc, {-1});
  Value rows = ShapeOp::create(rewriter, loc, RankedTensorType::get({2}, i64),
                               value, rewriter.getI64IntegerAttr(2),
                               rewriter.getI64IntegerAttr(4));
  Value shape = ConcatOp::create(rewriter, loc, RankedTensorType::get({3}, i64),
                                 ValueRange{minusOne, rows},
                                 rewriter.getI64IntegerAttr(0));
  return ReshapeOp::create(rewriter, loc, type, value, shape,
                           rewriter.getBoolAttr(false));
}

/// The rank-4 heads a 3-D product's right operand `rhs` (under any
/// transpose) stands for, given the left one's rank-4 heads `lhs`: a
/// flattening of heads with lhs's batch and heads; one of heads shared by
/// the batch and expanded to it (DeBERTa's relative-position keys, read as
/// `[1, H, m, n]` by the broadcasting product); or, in `tiled`, `[H, m, n]`
/// heads concatenated once per batch (a Tile of a batch size known at
/// import), which the caller unsqueezes to `[1, H, m, n]`.
struct RightHeads {
  Value heads;
  Value tiled;
};
static std::optional<RightHeads> findRightHeads(Value rhs, Value lhs) {
  ArrayRef<int64_t> l = shapeOf(lhs);
  if (Value heads = unflattened(rhs)) {
    if (auto expand = heads.getDefiningOp<ExpandOp>()) {
      ArrayRef<int64_t> shared = shapeOf(expand.getInput()),
                        wide = shapeOf(heads);
      if (shared.size() == 4 && shared[0] == 1 &&
          dimsEqual(lhs, 1, expand.getInput(), 1) && shared[2] == wide[2] &&
          shared[3] == wide[3] && !ShapedType::isDynamic(shared[2]) &&
          !ShapedType::isDynamic(shared[3]))
        return RightHeads{expand.getInput(), {}};
    }
    if (!dimsEqual(lhs, 0, heads, 0) || !dimsEqual(lhs, 1, heads, 1))
      return std::nullopt;
    return RightHeads{heads, {}};
  }
  auto concat = rhs.getDefiningOp<ConcatOp>();
  if (!concat || concat.getAxis() != 0 || ShapedType::isDynamic(l[0]) ||
      ShapedType::isDynamic(l[1]) ||
      concat.getInputs().size() != size_t(l[0]) ||
      !llvm::all_equal(concat.getInputs()))
    return std::nullopt;
  Value tile = concat.getInputs()[0];
  if (shapeOf(tile).size() != 3 || shapeOf(tile)[0] != l[1])
    return std::nullopt;
  return RightHeads{{}, tile};
}

namespace {

/// A scalar scale on the right operand, replayed on the rank-4 one.
struct PeeledScale {
  Operation *op;
  Value scalar;
  bool tensorFirst;
};

/// matmul(flat(a), [scale](transpose(b) | b)) with b flattened, expanded or
/// tiled heads, as flat(matmul(a, [scale](transpose(b) | b))) over rank-4
/// heads.
struct UnflattenHeadsMatMul : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    if (shapeOf(op).size() != 3 || shapeOf(op.getLhs()).size() != 3 ||
        shapeOf(op.getRhs()).size() != 3)
      return failure();
    Value lhs = unflattened(op.getLhs());
    if (!lhs)
      return rewriter.notifyMatchFailure(op, "lhs is not flattened heads");
    // Scalar scales on the right, outermost first.
    SmallVector<PeeledScale> scales;
    Value rhs = op.getRhs();
    while (llvm::isa_and_nonnull<MulOp, DivOp>(rhs.getDefiningOp())) {
      Operation *scale = rhs.getDefiningOp();
      Value tensor = scale->getOperand(0), scalar = scale->getOperand(1);
      bool tensorFirst =
          !llvm::isa<MulOp>(scale) || shapeOf(tensor).size() == 3;
      if (!tensorFirst)
        std::swap(tensor, scalar);
      auto scalarType = llvm::cast<ShapedType>(scalar.getType());
      if (!scalarType.hasStaticShape() || scalarType.getNumElements() != 1 ||
          shapeOf(scalar).size() > 1 || tensor.getType() != rhs.getType())
        return rewriter.notifyMatchFailure(op, "rhs is scaled by a tensor");
      scales.push_back({scale, scalar, tensorFirst});
      rhs = tensor;
    }
    bool transposed = false;
    if (auto transpose = rhs.getDefiningOp<TransposeOp>()) {
      if (transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1})
        return rewriter.notifyMatchFailure(op, "rhs transpose is not [0,2,1]");
      transposed = true;
      rhs = transpose.getInput();
    }
    std::optional<RightHeads> found = findRightHeads(rhs, lhs);
    if (!found)
      return rewriter.notifyMatchFailure(
          op, "rhs is not heads of the lhs's batch and head count");

    Location loc = op.getLoc();
    auto element = getElementTypeOrSelf(op.getType());
    Value right = found->heads;
    if (found->tiled) {
      ArrayRef<int64_t> t = shapeOf(found->tiled);
      right = UnsqueezeOp::create(
          rewriter, loc, RankedTensorType::get({1, t[0], t[1], t[2]}, element),
          found->tiled, rewriter.getDenseI64ArrayAttr({0}));
    }
    if (transposed) {
      ArrayRef<int64_t> s = shapeOf(right);
      right = TransposeOp::create(
          rewriter, loc,
          RankedTensorType::get({s[0], s[1], s[3], s[2]}, element), right,
          rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}));
    }
    for (const PeeledScale &scale : llvm::reverse(scales)) {
      Value a = scale.tensorFirst ? right : scale.scalar;
      Value b = scale.tensorFirst ? scale.scalar : right;
      if (llvm::isa<MulOp>(scale.op))
        right = MulOp::create(rewriter, loc, right.getType(), a, b);
      else
        right = DivOp::create(rewriter, loc, right.getType(), a, b);
    }
    // Rows and columns as static as either form knows them.
    ArrayRef<int64_t> l = shapeOf(lhs), r = shapeOf(right), flat = shapeOf(op);
    auto known = [](int64_t a, int64_t b) {
      return ShapedType::isDynamic(a) ? b : a;
    };
    auto productType = RankedTensorType::get(
        {l[0], l[1], known(l[2], flat[1]), known(r[3], flat[2])}, element);
    Value product = MatMulOp::create(rewriter, loc, productType, lhs, right);
    rewriter.replaceOp(op, flatten(rewriter, loc, product,
                                   llvm::cast<RankedTensorType>(op.getType())));
    return success();
  }
};

/// reshape(flat(x) + y) back to rank 4 as x + reshape(y), and
/// reshape(flat(x)) as x.
struct UnflattenHeadsReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    if (shapeOf(op).size() != 4 || shapeOf(op.getInput()).size() != 3)
      return failure();
    Value input = op.getInput();
    if (Value heads = unflattened(input)) {
      if (!undoesFlattening(op, input, heads) ||
          !isCompatibleShape(shapeOf(heads), shapeOf(op)))
        return rewriter.notifyMatchFailure(op, "does not undo the flattening");
      // Where the types differ in what they know of a dim, lmopt users take
      // the heads' type as it is.
      if (heads.getType() != op.getType() && !usersTakeAnyShape(op))
        return rewriter.notifyMatchFailure(op, "users need the reshape's type");
      rewriter.replaceOp(op, heads);
      return success();
    }
    auto add = input.getDefiningOp<AddOp>();
    if (!add || add.getLhs().getType() != add.getType() ||
        add.getRhs().getType() != add.getType())
      return rewriter.notifyMatchFailure(op, "not an add of equal types");
    for (bool lhsFlat : {true, false}) {
      Value flat = lhsFlat ? add.getLhs() : add.getRhs();
      Value other = lhsFlat ? add.getRhs() : add.getLhs();
      Value heads = unflattened(flat);
      // The layout follows the add: it keeps the flattened type.
      if (!heads || !undoesFlattening(op, flat, heads) ||
          heads.getType() != op.getType())
        continue;
      Location loc = op.getLoc();
      Value term = ReshapeOp::create(rewriter, loc, op.getType(), other,
                                     op.getShape(), op.getAllowzeroAttr());
      rewriter.replaceOpWithNewOp<AddOp>(
          op, op.getType(), lhsFlat ? heads : term, lhsFlat ? term : heads);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no flattened heads in the add");
  }
};

} // namespace

void mlir::lmopt::populateFlatHeadsPatterns(RewritePatternSet &patterns) {
  patterns.add<UnflattenHeadsMatMul, UnflattenHeadsReshape>(
      patterns.getContext());
}
