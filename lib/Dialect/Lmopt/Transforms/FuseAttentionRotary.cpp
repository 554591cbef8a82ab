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

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::lmopt;

namespace {

/// Moves a rotary of head-split [B, H, S, D] heads above the head transpose.
struct HoistRotaryAboveHeadSplit : OpRewritePattern<RotaryOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RotaryOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getInput().getDefiningOp<TransposeOp>();
    if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
      return rewriter.notifyMatchFailure(op, "input is not transposed heads");
    auto split = transpose.getInput().getDefiningOp<ReshapeOp>();
    if (!split || shapeOf(split.getInput()).size() != 3)
      return rewriter.notifyMatchFailure(op, "heads are not a reshape of a "
                                             "packed [B, S, H*D] tensor");
    ArrayRef<int64_t> packed = shapeOf(split.getInput());
    ArrayRef<int64_t> heads = shapeOf(split);
    if (heads.size() != 4 || ShapedType::isDynamic(packed[2]) ||
        ShapedType::isDynamic(heads[3]) || packed[2] % heads[3] != 0)
      return rewriter.notifyMatchFailure(op, "head size or width is dynamic");
    // cos and sin must be shared by every head: [1|B, 1, S, D].
    for (Value table : {op.getCos(), op.getSin()}) {
      ArrayRef<int64_t> shape = shapeOf(table);
      if (shape.size() != 4 || shape[1] != 1)
        return rewriter.notifyMatchFailure(op, "cos/sin differ per head");
    }
    const int64_t width = packed[2], headDim = heads[3];
    Location loc = op.getLoc();
    auto perm = rewriter.getDenseI64ArrayAttr({0, 2, 1, 3});
    auto transposeTable = [&](Value table) -> Value {
      auto type = llvm::cast<RankedTensorType>(table.getType());
      ArrayRef<int64_t> s = type.getShape();
      return TransposeOp::create(rewriter, loc,
                                 RankedTensorType::get({s[0], s[2], s[1], s[3]},
                                                       type.getElementType()),
                                 table, perm);
    };
    auto shapeConstant = [&](ArrayRef<int64_t> values) -> Value {
      auto type = RankedTensorType::get({int64_t(values.size())},
                                        rewriter.getI64Type());
      return ConstantOp::create(rewriter, loc,
                                DenseIntElementsAttr::get(type, values));
    };
    rewriter.setInsertionPoint(op);
    Value cos = transposeTable(op.getCos());
    Value sin = op.getSin() == op.getCos() ? cos : transposeTable(op.getSin());
    auto headsType = llvm::cast<RankedTensorType>(split.getType());
    Value rotated =
        RotaryOp::create(rewriter, loc, headsType, split.getOutput(), cos, sin);
    auto packedType = llvm::cast<RankedTensorType>(split.getInput().getType());
    Value packedRotated =
        ReshapeOp::create(rewriter, loc, packedType, rotated,
                          shapeConstant({0, 0, width}), BoolAttr());
    Value resplit = ReshapeOp::create(
        rewriter, loc, headsType, packedRotated,
        shapeConstant({0, 0, width / headDim, headDim}), BoolAttr());
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), resplit, perm);
    return success();
  }
};

} // namespace

void mlir::lmopt::populateHoistRotaryPatterns(RewritePatternSet &patterns) {
  patterns.add<HoistRotaryAboveHeadSplit>(patterns.getContext());
}
