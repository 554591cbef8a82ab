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

namespace {

/// matmul(flat(a), [scale](transpose(flat(b)) | flat(b))) as
/// flat(matmul(a, [scale](transpose(b) | b))).
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
    SmallVector<Operation *> scales;
    Value rhs = op.getRhs();
    while (llvm::isa_and_nonnull<MulOp, DivOp>(rhs.getDefiningOp())) {
      Operation *scale = rhs.getDefiningOp();
      Value tensor = scale->getOperand(0), scalar = scale->getOperand(1);
      if (llvm::isa<MulOp>(scale) && shapeOf(tensor).size() < 3)
        std::swap(tensor, scalar);
      auto scalarType = llvm::cast<ShapedType>(scalar.getType());
      if (!scalarType.hasStaticShape() || scalarType.getNumElements() != 1 ||
          shapeOf(scalar).size() > 1 || tensor.getType() != rhs.getType())
        return rewriter.notifyMatchFailure(op, "rhs is scaled by a tensor");
      scales.push_back(scale);
      rhs = tensor;
    }
    bool transposed = false;
    if (auto transpose = rhs.getDefiningOp<TransposeOp>()) {
      if (transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1})
        return rewriter.notifyMatchFailure(op, "rhs transpose is not [0,2,1]");
      transposed = true;
      rhs = transpose.getInput();
    }
    Value rhsHeads = unflattened(rhs);
    // [H, m, n] heads tiled over the batch as a concat of copies (a Tile of
    // the batch size known at import): [1, H, m, n] read by every batch.
    Value tiledHeads;
    if (auto concat = rhs.getDefiningOp<ConcatOp>();
        !rhsHeads && concat && concat.getAxis() == 0 &&
        concat.getInputs().size() == size_t(shapeOf(lhs)[0]) &&
        llvm::all_equal(concat.getInputs()) &&
        shapeOf(concat.getInputs()[0]).size() == 3 &&
        shapeOf(concat.getInputs()[0])[0] == shapeOf(lhs)[1] &&
        !ShapedType::isDynamic(shapeOf(lhs)[1]))
      tiledHeads = concat.getInputs()[0];
    if (!rhsHeads && !tiledHeads)
      return rewriter.notifyMatchFailure(op, "rhs is not flattened heads");
    // Heads shared by the whole batch and expanded to it (DeBERTa's
    // relative-position keys, [1, H, 2k, D]) are read once per head: the
    // rank-4 product broadcasts them.
    if (auto expand =
            rhsHeads ? rhsHeads.getDefiningOp<ExpandOp>() : ExpandOp()) {
      ArrayRef<int64_t> shared = shapeOf(expand.getInput());
      if (shared.size() == 4 && shared[0] == 1 &&
          dimsEqual(lhs, 1, expand.getInput(), 1) &&
          shared[2] == shapeOf(rhsHeads)[2] &&
          shared[3] == shapeOf(rhsHeads)[3] &&
          !ShapedType::isDynamic(shared[2]) &&
          !ShapedType::isDynamic(shared[3]))
        rhsHeads = expand.getInput();
    }
    if (rhsHeads) {
      bool sharedBatch = shapeOf(rhsHeads)[0] == 1;
      if ((!sharedBatch && !dimsEqual(lhs, 0, rhsHeads, 0)) ||
          !dimsEqual(lhs, 1, rhsHeads, 1))
        return rewriter.notifyMatchFailure(op, "operands' heads differ");
    } else {
      ArrayRef<int64_t> t = shapeOf(tiledHeads);
      rhsHeads = UnsqueezeOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get({1, t[0], t[1], t[2]},
                                getElementTypeOrSelf(tiledHeads.getType())),
          tiledHeads, rewriter.getDenseI64ArrayAttr({0}));
    }

    Location loc = op.getLoc();
    auto element = getElementTypeOrSelf(op.getType());
    Value right = rhsHeads;
    if (transposed) {
      ArrayRef<int64_t> s = shapeOf(rhsHeads);
      right = TransposeOp::create(
          rewriter, loc,
          RankedTensorType::get({s[0], s[1], s[3], s[2]}, element), right,
          rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}));
    }
    for (Operation *scale : llvm::reverse(scales)) {
      Value scalar = scale->getOperand(1);
      bool tensorFirst = shapeOf(scale->getOperand(0)).size() == 3;
      if (!tensorFirst)
        scalar = scale->getOperand(0);
      Value a = tensorFirst ? right : scalar, b = tensorFirst ? scalar : right;
      if (llvm::isa<MulOp>(scale))
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
      // the heads' type as it is (they infer nothing from the operand's).
      if (heads.getType() != op.getType() &&
          !llvm::all_of(op->getUsers(), [](Operation *user) {
            return llvm::isa<LmoptDialect>(user->getDialect()) &&
                   !user->hasTrait<OpTrait::SameOperandsAndResultType>();
          }))
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
