//===- FuseLinear.cpp - matrix products with epilogues to lmopt.linear ----===//
//
// Builds `lmopt.linear` in steps, each a pattern, so partial forms still fuse:
//   matmul(x, W) with a rank-2 W        -> linear(x, W)
//   matmul(x, transpose(Wt))            -> linear(x, Wt) {transpose_weight}
//   gemm(a, b, c) with alpha = beta = 1 -> linear(a, b, bias c)
//   add(linear(..), bias[N])            -> linear(.., bias)
//   gelu/relu(linear(..))               -> linear(..) {activation}
//   add(linear(..), r) with r shaped like the output -> linear(.., residual r)
// A step only absorbs a value the linear is the single producer for, and a
// residual add that feeds a layer norm is left for skip_layer_norm.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_FUSELINEARPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kLinear = "linear";
static constexpr llvm::StringLiteral kBias = "linear_bias";
static constexpr llvm::StringLiteral kActivation = "linear_activation";
static constexpr llvm::StringLiteral kResidual = "linear_residual";


/// True for tensors of a float element type, the only ones `lmopt.linear`
/// takes unquantized.
static bool isFloatTensor(Value value) {
  return llvm::isa<FloatType>(
      llvm::cast<ShapedType>(value.getType()).getElementType());
}

/// A linear whose result has this one user and no epilogue beyond `upTo`
/// (bias < activation < residual), so the user can be folded into it.
enum class Stage { Bias, Activation, Residual };

static std::optional<std::string> whyNotExtendable(LinearOp linear,
                                                   Stage stage) {
  if (!linear.getOutput().hasOneUse())
    return "the linear result has other users";
  if (linear.getResidual())
    return "the linear already has a residual add";
  if (stage <= Stage::Activation &&
      linear.getActivation() != Activation::none)
    return "the linear already has an activation";
  if (stage == Stage::Bias && linear.getBias())
    return "the linear already has a bias";
  return std::nullopt;
}

/// Rebuilds `linear` with some parts replaced, at `at`'s position and
/// location, and replaces `at` (the linear itself or the op folded into it)
/// with it.
static void rebuildLinear(PatternRewriter &rewriter, LinearOp linear,
                          Operation *at, Value bias, Value residual,
                          Activation activation) {
  rewriter.setInsertionPoint(at);
  auto fused = LinearOp::create(
      rewriter, at->getLoc(), at->getResult(0).getType(), linear.getInput(),
      linear.getWeight(), bias, residual, linear.getTransposeWeight(),
      activation, linear.getInputQuantization(), linear.getTransposeInput());
  rewriter.replaceOp(at, fused.getOutput());
  if (at != linear.getOperation())
    rewriter.eraseOp(linear);
}

namespace {

struct MatMulToLinear : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    if (shapeOf(op.getRhs()).size() != 2 || shapeOf(op.getLhs()).size() < 2)
      return rewriter.notifyMatchFailure(
          op, "not an activation times a rank-2 weight");
    if (!isFloatTensor(op.getLhs()))
      return rewriter.notifyMatchFailure(op, "integer product");
    Value weight = op.getRhs();
    bool transposed = false;
    auto transpose = weight.getDefiningOp<TransposeOp>();
    if (transpose && transpose.getPerm() == ArrayRef<int64_t>{1, 0}) {
      weight = transpose.getInput();
      transposed = true;
    }
    getFusionReport(getContext()).recordFused(kLinear, op.getLoc());
    rewriter.replaceOpWithNewOp<LinearOp>(
        op, op.getOutput().getType(), op.getLhs(), weight, Value(), Value(),
        transposed, Activation::none);
    return success();
  }
};

/// Why a gemm cannot become a linear, or nullopt when it can.
static std::optional<std::string> whyNotLinear(GemmOp op) {
  if (!isFloatTensor(op.getA()))
    return "gemm on integer operands";
  if (!op.getAlpha().isExactlyValue(1.0))
    return "gemm alpha is not 1";
  if (op.getC() && !op.getBeta().isExactlyValue(1.0))
    return "gemm beta is not 1";
  if (op.getTransA())
    return "gemm transposes its first operand";
  if (Value c = op.getC()) {
    ArrayRef<int64_t> bias = shapeOf(c);
    int64_t n = shapeOf(op.getOutput())[1];
    if (bias.size() != 1 || (bias[0] != n && !ShapedType::isDynamic(n)))
      return "gemm operand 'c' of shape " +
             std::to_string(bias.empty() ? 0 : bias[0]) +
             " is not a 1-D bias over the output columns";
  }
  return std::nullopt;
}

struct GemmToLinear : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    if (std::optional<std::string> why = whyNotLinear(op))
      return rewriter.notifyMatchFailure(op, *why);
    getFusionReport(getContext()).recordFused(kLinear, op.getLoc());
    rewriter.replaceOpWithNewOp<LinearOp>(
        op, op.getOutput().getType(), op.getA(), op.getB(), op.getC(),
        Value(), op.getTransB(), Activation::none);
    return success();
  }
};

/// The linear operand of a commutative add and the other operand.
static std::optional<std::pair<LinearOp, Value>> splitAdd(AddOp add) {
  if (auto linear = add.getLhs().getDefiningOp<LinearOp>())
    return std::pair(linear, add.getRhs());
  if (auto linear = add.getRhs().getDefiningOp<LinearOp>())
    return std::pair(linear, add.getLhs());
  return std::nullopt;
}

/// Why `add` cannot be folded into its linear operand as a bias.
static std::optional<std::string> whyNotBias(LinearOp linear, Value other,
                                             AddOp add) {
  ArrayRef<int64_t> bias = shapeOf(other);
  if (bias.size() != 1)
    return std::nullopt; // not a bias-shaped add: maybe a residual
  if (add.getOutput().getType() != linear.getOutput().getType())
    return "the bias add broadcasts the linear result";
  return whyNotExtendable(linear, Stage::Bias);
}

struct FoldBiasAdd : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto operands = splitAdd(op);
    if (!operands || shapeOf(operands->second).size() != 1)
      return rewriter.notifyMatchFailure(op, "not linear + 1-D bias");
    auto [linear, bias] = *operands;
    if (std::optional<std::string> why = whyNotBias(linear, bias, op))
      return rewriter.notifyMatchFailure(op, *why);
    getFusionReport(getContext()).recordFused(kBias, op.getLoc());
    rebuildLinear(rewriter, linear, op, bias, Value(), Activation::none);
    return success();
  }
};

template <typename ActivationOp>
static Activation activationOf(ActivationOp op);
template <>
Activation activationOf(GeluOp op) {
  return op.getApproximate() == GeluApproximation::tanh ? Activation::gelu_tanh
                                                        : Activation::gelu;
}
template <>
Activation activationOf(ReluOp) {
  return Activation::relu;
}

/// The linear an activation applies to: its input, or the input of a reshape
/// in between (GPT-2's Conv1D computes on [B*S, K] and reshapes back before
/// the GELU; an elementwise op commutes with the reshape).
static std::pair<LinearOp, ReshapeOp> linearBehindActivation(Value input) {
  if (auto linear = input.getDefiningOp<LinearOp>())
    return {linear, ReshapeOp()};
  auto reshape = input.getDefiningOp<ReshapeOp>();
  if (!reshape || !reshape.getOutput().hasOneUse())
    return {};
  return {reshape.getInput().getDefiningOp<LinearOp>(), reshape};
}

template <typename ActivationOp>
struct FoldActivation : OpRewritePattern<ActivationOp> {
  using OpRewritePattern<ActivationOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ActivationOp op,
                                PatternRewriter &rewriter) const override {
    auto [linear, reshape] = linearBehindActivation(op.getInput());
    if (!linear)
      return rewriter.notifyMatchFailure(op, "input is not a linear");
    if (std::optional<std::string> why =
            whyNotExtendable(linear, Stage::Activation))
      return rewriter.notifyMatchFailure(op, *why);
    getFusionReport(this->getContext()).recordFused(kActivation, op.getLoc());
    if (!reshape) {
      rebuildLinear(rewriter, linear, op, linear.getBias(), Value(),
                    activationOf(op));
      return success();
    }
    // Activate before the reshape: linear -> reshape -> activation becomes
    // linear{activation} -> reshape.
    rebuildLinear(rewriter, linear, linear, linear.getBias(), Value(),
                  activationOf(op));
    rewriter.replaceOp(op, reshape.getOutput());
    return success();
  }
};

/// Why `add` cannot become the residual of its linear operand.
static std::optional<std::string> whyNotResidual(LinearOp linear, Value other,
                                                 AddOp add) {
  if (other.getType() != linear.getOutput().getType() ||
      add.getOutput().getType() != linear.getOutput().getType())
    return "the residual add broadcasts";
  for (Operation *user : add.getOutput().getUsers())
    if (llvm::isa<LayerNormOp, SkipLayerNormOp>(user))
      return "the sum feeds a layer norm; left for skip_layer_norm";
  return whyNotExtendable(linear, Stage::Residual);
}

struct FoldResidualAdd : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto operands = splitAdd(op);
    if (!operands || shapeOf(operands->second).size() < 2)
      return rewriter.notifyMatchFailure(op, "not linear + residual");
    auto [linear, residual] = *operands;
    if (std::optional<std::string> why = whyNotResidual(linear, residual, op))
      return rewriter.notifyMatchFailure(op, *why);
    getFusionReport(getContext()).recordFused(kResidual, op.getLoc());
    rebuildLinear(rewriter, linear, op, linear.getBias(), residual,
                  linear.getActivation());
    return success();
  }
};

struct FuseLinearPass : lmopt::impl::FuseLinearPassBase<FuseLinearPass> {
  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    for (StringRef kind : {kLinear, kBias, kActivation, kResidual})
      report.registerKind(kind);
    RewritePatternSet patterns(&getContext());
    populateFuseLinearPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    reportNearMisses(report);
  }

  /// Explains the gemms, adds and activations next to a linear that stayed.
  void reportNearMisses(FusionReport &report) {
    getOperation()->walk([&](Operation *op) {
      if (auto gemm = llvm::dyn_cast<GemmOp>(op)) {
        if (std::optional<std::string> why = whyNotLinear(gemm))
          report.recordNearMiss(kLinear, op->getLoc(), *why);
        return;
      }
      if (auto add = llvm::dyn_cast<AddOp>(op)) {
        auto operands = splitAdd(add);
        if (!operands)
          return;
        auto [linear, other] = *operands;
        bool isBias = shapeOf(other).size() == 1;
        std::optional<std::string> why =
            isBias ? whyNotBias(linear, other, add)
                   : whyNotResidual(linear, other, add);
        if (why)
          report.recordNearMiss(isBias ? kBias : kResidual, op->getLoc(),
                                *why);
        return;
      }
      if (llvm::isa<GeluOp, ReluOp>(op)) {
        LinearOp linear = linearBehindActivation(op->getOperand(0)).first;
        if (!linear)
          return;
        if (std::optional<std::string> why =
                whyNotExtendable(linear, Stage::Activation))
          report.recordNearMiss(kActivation, op->getLoc(), *why);
      }
    });
  }
};

} // namespace

void mlir::lmopt::populateFuseLinearPatterns(RewritePatternSet &patterns) {
  patterns.add<MatMulToLinear, GemmToLinear, FoldBiasAdd, FoldResidualAdd,
               FoldActivation<GeluOp>, FoldActivation<ReluOp>>(
      patterns.getContext());
}
