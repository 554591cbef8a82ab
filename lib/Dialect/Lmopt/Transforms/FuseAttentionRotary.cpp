//===- FuseAttentionRotary.cpp - rotary embeddings before the head split --===//
//
// Llama-style exports rotate the queries and keys after splitting them into
// heads: rotary(transpose(reshape(proj, [B, S, H, D]), [0, 2, 1, 3]), cos,
// sin) with cos and sin [1|B, 1, S, D], shared by every head. The attention
// matcher walks from the heads to a packed [B, S, H*D] projection, which
// this form hides behind the rotary. The rewrite rotates the heads before
// the transpose (cos and sin transposed alike: still one row per position)
// and exposes the rotated projection packed:
//
//   r      = rotary(reshape(proj, [B, S, H, D]), cosT, sinT)
//   packed = reshape(r, [0, 0, H*D])               // [B, S, H*D]
//   heads  = transpose(reshape(packed, [0, 0, H, D]), [0, 2, 1, 3])
//
// The same elements are computed; attention then reads `packed`.
//
//===----------------------------------------------------------------------===//

#include "FuseAttentionMatch.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::lmopt;

namespace {

/// Head-split heads `transpose(reshape(packed, [B, S, H, D]), [0, 2, 1, 3])`
/// of a packed [B, S, H*D] projection with static H*D and D.
struct SplitHeads {
  ReshapeOp split;
  int64_t width = 0, headDim = 0;
};

std::optional<SplitHeads> matchSplitHeads(Value heads) {
  auto transpose = heads.getDefiningOp<TransposeOp>();
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
    return std::nullopt;
  auto split = transpose.getInput().getDefiningOp<ReshapeOp>();
  if (!split || shapeOf(split.getInput()).size() != 3)
    return std::nullopt;
  ArrayRef<int64_t> packed = shapeOf(split.getInput());
  ArrayRef<int64_t> shape = shapeOf(split);
  if (shape.size() != 4 || ShapedType::isDynamic(packed[2]) ||
      ShapedType::isDynamic(shape[3]) || packed[2] % shape[3] != 0)
    return std::nullopt;
  return SplitHeads{split, packed[2], shape[3]};
}

/// Whether cos and sin are shared by every head: [1|B, 1, S, R].
bool sharedByHeads(RotaryOp op) {
  return llvm::all_of(ValueRange{op.getCos(), op.getSin()}, [](Value table) {
    ArrayRef<int64_t> shape = shapeOf(table);
    return shape.size() == 4 && shape[1] == 1;
  });
}

/// The heads of `heads` with `op`'s rotation applied to the first
/// `rotaryDim` entries of each head before the head transpose, exposed
/// packed: transpose(reshape(reshape(rotated, [0, 0, H*D]), [0, 0, H, D])),
/// of type `type`.
Value rotateBeforeSplit(PatternRewriter &rewriter, RotaryOp op,
                        SplitHeads heads, int64_t rotaryDim, Type type) {
  Location loc = op.getLoc();
  auto perm = rewriter.getDenseI64ArrayAttr({0, 2, 1, 3});
  auto transposeTable = [&](Value table) -> Value {
    auto tableType = llvm::cast<RankedTensorType>(table.getType());
    ArrayRef<int64_t> s = tableType.getShape();
    return TransposeOp::create(
        rewriter, loc, tableType.clone({s[0], s[2], s[1], s[3]}), table, perm);
  };
  auto constant = [&](ArrayRef<int64_t> values) {
    return buildI64Vector(rewriter, loc, values);
  };
  Value cos = transposeTable(op.getCos());
  Value sin = op.getSin() == op.getCos() ? cos : transposeTable(op.getSin());
  auto headsType = llvm::cast<RankedTensorType>(heads.split.getType());
  ArrayRef<int64_t> shape = headsType.getShape();
  Value split = heads.split.getOutput();
  Value rotated;
  if (rotaryDim == heads.headDim) {
    rotated = RotaryOp::create(rewriter, loc, headsType, split, cos, sin);
  } else {
    // Rotate the first rotaryDim entries of each head, pass the rest.
    auto part = [&](int64_t begin, int64_t end) -> Value {
      return SliceOp::create(
          rewriter, loc,
          headsType.clone({shape[0], shape[1], shape[2], end - begin}), split,
          constant({begin}), constant({end}), constant({3}), Value());
    };
    Value first = part(0, rotaryDim);
    Value turned =
        RotaryOp::create(rewriter, loc, first.getType(), first, cos, sin);
    rotated =
        ConcatOp::create(rewriter, loc, headsType,
                         ValueRange{turned, part(rotaryDim, heads.headDim)},
                         rewriter.getI64IntegerAttr(3));
  }
  auto packedType =
      llvm::cast<RankedTensorType>(heads.split.getInput().getType());
  Value packedRotated =
      ReshapeOp::create(rewriter, loc, packedType, rotated,
                        constant({0, 0, heads.width}), BoolAttr());
  Value resplit = ReshapeOp::create(
      rewriter, loc, headsType, packedRotated,
      constant({0, 0, heads.width / heads.headDim, heads.headDim}), BoolAttr());
  return TransposeOp::create(rewriter, loc, type, resplit, perm);
}

/// Moves a rotary of head-split [B, H, S, D] heads above the head transpose.
struct HoistRotaryAboveHeadSplit : OpRewritePattern<RotaryOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RotaryOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<SplitHeads> heads = matchSplitHeads(op.getInput());
    if (!heads)
      return rewriter.notifyMatchFailure(
          op, "input is not transposed heads of a packed [B, S, H*D] tensor");
    if (!sharedByHeads(op))
      return rewriter.notifyMatchFailure(op, "cos/sin differ per head");
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, rotateBeforeSplit(rewriter, op, *heads,
                                             heads->headDim, op.getType()));
    return success();
  }
};

/// Partial rotary (GPT-NeoX, Phi: only the first R entries of each head
/// rotate), `concat(rotary(heads[..., :R]), heads[..., R:])` on the last
/// axis of head-split heads, moved above the head transpose like a whole
/// one.
struct HoistPartialRotaryAboveHeadSplit : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 2 || shapeOf(op).size() != 4 ||
        normalizeAxis(op.getAxis(), 4) != 3)
      return rewriter.notifyMatchFailure(op, "not two parts of the last axis");
    auto rotary = op.getInputs()[0].getDefiningOp<RotaryOp>();
    if (!rotary || !sharedByHeads(rotary))
      return rewriter.notifyMatchFailure(op, "first part is no shared rotary");
    const int64_t rotaryDim = shapeOf(rotary).back(),
                  headDim = shapeOf(op).back();
    if (ShapedType::isDynamic(rotaryDim) || ShapedType::isDynamic(headDim) ||
        rotaryDim >= headDim)
      return rewriter.notifyMatchFailure(op, "sizes are not static");
    Value source = sliceOfLastDim(rotary.getInput(), 0, false, rotaryDim);
    if (!source || sliceOfLastDim(op.getInputs()[1], rotaryDim, /*toEnd=*/true,
                                  0) != source)
      return rewriter.notifyMatchFailure(op, "parts are not one head's");
    std::optional<SplitHeads> heads = matchSplitHeads(source);
    if (!heads || heads->headDim != headDim)
      return rewriter.notifyMatchFailure(
          op, "heads are not transposed heads of a packed [B, S, H*D] tensor");
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, rotateBeforeSplit(rewriter, rotary, *heads,
                                             rotaryDim, op.getType()));
    return success();
  }
};

} // namespace

void mlir::lmopt::populateHoistRotaryPatterns(RewritePatternSet &patterns) {
  patterns.add<HoistRotaryAboveHeadSplit, HoistPartialRotaryAboveHeadSplit>(
      patterns.getContext());
}
