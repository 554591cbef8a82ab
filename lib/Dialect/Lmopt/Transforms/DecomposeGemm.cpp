//===- DecomposeGemm.cpp - the Gemms that did not become linears ----------===//
//
//   gemm(A, B, C) {alpha, beta, trans_a, trans_b}
//     -> add(mul(matmul(op(A), op(B)), alpha), mul(C, beta))
// with op() a [1, 0] transpose where asked and the scalings and the C term
// only where they change something. `lmopt-fuse-linear` turns the Gemms of
// exported Linear layers into linears first; what is left (a run-time B,
// alpha or beta other than 1) runs as a matrix product and a kernel.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_DECOMPOSEGEMMPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

namespace {

struct DecomposeGemm : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Type element = resultType.getElementType();
    auto transposed = [&](Value v, bool transpose) -> Value {
      if (!transpose)
        return v;
      auto type = llvm::cast<RankedTensorType>(v.getType());
      auto swapped = RankedTensorType::get(
          {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
      return TransposeOp::create(rewriter, loc, swapped, v,
                                 ArrayRef<int64_t>{1, 0})
          .getOutput();
    };
    auto scalar = [&](double value) -> Value {
      auto type = RankedTensorType::get({}, element);
      return ConstantOp::create(
                 rewriter, loc,
                 DenseElementsAttr::get(
                     type, rewriter.getFloatAttr(element, value)))
          .getOutput();
    };
    Value a = transposed(op.getA(), op.getTransA());
    Value b = transposed(op.getB(), op.getTransB());
    Value result =
        MatMulOp::create(rewriter, loc, resultType, a, b).getOutput();
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    if (alpha != 1.0)
      result = MulOp::create(rewriter, loc, resultType, result, scalar(alpha))
                   .getOutput();
    if (Value c = op.getC(); c && beta != 0.0) {
      if (beta != 1.0)
        c = MulOp::create(rewriter, loc, c.getType(), c, scalar(beta))
                .getOutput();
      result = AddOp::create(rewriter, loc, resultType, result, c).getOutput();
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DecomposeGemmPass
    : lmopt::impl::DecomposeGemmPassBase<DecomposeGemmPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeGemm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
