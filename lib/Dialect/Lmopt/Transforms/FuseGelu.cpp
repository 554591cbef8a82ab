//===- FuseGelu.cpp - decomposed GELU subgraphs to lmopt.gelu -------------===//
//
// Exports spell GELU out elementwise:
//   erf form:  x * 0.5 * (1 + erf(x / sqrt(2)))
//   tanh form: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
// with the factors multiplied in any order. The anchor is the erf or tanh; the
// matcher walks up to find `x`, then down through the `1 +` and the products.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <variant>

namespace mlir::lmopt {
#define GEN_PASS_DEF_FUSEGELUPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kKind = "gelu";

namespace {
struct GeluMatch {
  Value input;
  Operation *root; // the last op of the subgraph, replaced by the gelu
  GeluApproximation approximate;
};
/// Not a GELU candidate at all: nothing to report.
struct NotCandidate {};
/// A partial match: reported as a near miss with this reason.
struct Rejected {
  std::string reason;
};
using GeluMatchResult = std::variant<GeluMatch, NotCandidate, Rejected>;
} // namespace

/// The single user of `value` when it is an `OpTy`.
template <typename OpTy>
static OpTy singleUser(Value value) {
  if (!value.hasOneUse())
    return {};
  return llvm::dyn_cast<OpTy>(*value.getUsers().begin());
}

/// Whether `value` is `x * c` (either order) with `c` a splat near `factor`;
/// binds `x`.
static bool isScaledBy(Value value, double factor, Value &x) {
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul)
    return false;
  for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    if (isSplatNear(b, factor, 1e-4)) {
      x = a;
      return true;
    }
  }
  return false;
}

/// From `onePlus` (= 1 + erf/tanh(...)) down to the op that yields
/// 0.5 * x * onePlus, in the three orders exports use.
static FailureOr<Operation *> matchHalfXProduct(Value onePlus, Value x,
                                                std::string &reason) {
  auto first = singleUser<MulOp>(onePlus);
  if (!first) {
    reason = "'1 + erf/tanh' is not used by exactly one multiply";
    return failure();
  }
  Value other = otherOperand(first, onePlus);
  // (x * (1 + e)) * 0.5
  if (other == x) {
    auto second = singleUser<MulOp>(first.getOutput());
    if (second && isSplatNear(otherOperand(second, first.getOutput()), 0.5))
      return second.getOperation();
    reason = "x * (1 + erf/tanh) is not multiplied by 0.5";
    return failure();
  }
  // (x * 0.5) * (1 + e)
  Value scaled;
  if (isScaledBy(other, 0.5, scaled)) {
    if (scaled == x)
      return first.getOperation();
    reason = "the factor 0.5 multiplies a value other than the GELU input";
    return failure();
  }
  // x * ((1 + e) * 0.5)
  if (isSplatNear(other, 0.5)) {
    auto second = singleUser<MulOp>(first.getOutput());
    if (second && otherOperand(second, first.getOutput()) == x)
      return second.getOperation();
    reason = "0.5 * (1 + erf/tanh) is not multiplied by the GELU input";
    return failure();
  }
  reason = "(1 + erf/tanh) is multiplied by neither x nor 0.5";
  return failure();
}

/// The `1 + anchor` add after an erf/tanh.
static FailureOr<Value> matchOnePlus(Value anchor, std::string &reason) {
  auto add = singleUser<AddOp>(anchor);
  if (!add || !isSplatNear(otherOperand(add, anchor), 1.0)) {
    reason = "the result is not only used by an add of 1";
    return failure();
  }
  return add.getOutput();
}

static GeluMatchResult finish(Value x, Value anchor,
                              GeluApproximation approximate) {
  std::string reason;
  FailureOr<Value> onePlus = matchOnePlus(anchor, reason);
  if (failed(onePlus))
    return Rejected{reason};
  FailureOr<Operation *> root = matchHalfXProduct(*onePlus, x, reason);
  if (failed(root))
    return Rejected{reason};
  if ((*root)->getResult(0).getType() != x.getType())
    return Rejected{"the result type differs from the input type"};
  return GeluMatch{x, *root, approximate};
}

static GeluMatchResult matchErfGelu(ErfOp erf) {
  Value input = erf.getInput();
  Value x;
  if (auto div = input.getDefiningOp<DivOp>()) {
    if (!isSplatNear(div.getRhs(), std::sqrt(2.0), 1e-4))
      return Rejected{"erf input is not divided by sqrt(2)"};
    x = div.getLhs();
  } else if (!isScaledBy(input, 1.0 / std::sqrt(2.0), x)) {
    return Rejected{"erf input is not x / sqrt(2) or x * (1 / sqrt(2))"};
  }
  return finish(x, erf.getOutput(), GeluApproximation::none);
}

/// x + 0.044715 * x^3, with the cube as Pow(x, 3) or x * x * x.
static bool isCubicTerm(Value value, Value &x) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add)
    return false;
  for (auto [candidate, term] : {std::pair(add.getLhs(), add.getRhs()),
                                 std::pair(add.getRhs(), add.getLhs())}) {
    Value cube;
    if (!isScaledBy(term, 0.044715, cube))
      continue;
    if (auto pow = cube.getDefiningOp<PowOp>();
        pow && pow.getLhs() == candidate && isSplatNear(pow.getRhs(), 3.0)) {
      x = candidate;
      return true;
    }
    if (auto mul = cube.getDefiningOp<MulOp>()) {
      Value square = otherOperand(mul, candidate);
      auto sq = square ? square.getDefiningOp<MulOp>() : MulOp();
      if (sq && sq.getLhs() == candidate && sq.getRhs() == candidate) {
        x = candidate;
        return true;
      }
    }
  }
  return false;
}

static GeluMatchResult matchTanhGelu(TanhOp tanh) {
  Value inner;
  if (!isScaledBy(tanh.getInput(), std::sqrt(2.0 / M_PI), inner))
    return NotCandidate{};
  Value x;
  if (!isCubicTerm(inner, x))
    return Rejected{"tanh argument is not sqrt(2/pi) * (x + 0.044715 * x^3)"};
  return finish(x, tanh.getOutput(), GeluApproximation::tanh);
}

static void replaceWithGelu(PatternRewriter &rewriter, const GeluMatch &match,
                            Location anchorLoc) {
  rewriter.setInsertionPoint(match.root);
  auto gelu = GeluOp::create(
      rewriter, match.root->getLoc(), match.input.getType(), match.input,
      GeluApproximationAttr::get(rewriter.getContext(), match.approximate));
  getFusionReport(rewriter.getContext()).recordFused(kKind, anchorLoc);
  rewriter.replaceOp(match.root, gelu.getOutput());
}

namespace {

template <typename AnchorOp, GeluMatchResult (*Matcher)(AnchorOp)>
struct FuseGeluPattern : OpRewritePattern<AnchorOp> {
  using OpRewritePattern<AnchorOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AnchorOp op,
                                PatternRewriter &rewriter) const override {
    GeluMatchResult result = Matcher(op);
    if (auto *rejected = std::get_if<Rejected>(&result))
      return rewriter.notifyMatchFailure(op, rejected->reason);
    if (std::holds_alternative<NotCandidate>(result))
      return rewriter.notifyMatchFailure(op, "not a GELU subgraph");
    replaceWithGelu(rewriter, std::get<GeluMatch>(result), op.getLoc());
    return success();
  }
};

struct FuseGeluPass : lmopt::impl::FuseGeluPassBase<FuseGeluPass> {
  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    report.registerKind(kKind);
    RewritePatternSet patterns(&getContext());
    populateFuseGeluPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // What is left did not match: say why.
    getOperation()->walk([&](Operation *op) {
      GeluMatchResult result = NotCandidate{};
      if (auto erf = llvm::dyn_cast<ErfOp>(op))
        result = matchErfGelu(erf);
      else if (auto tanh = llvm::dyn_cast<TanhOp>(op))
        result = matchTanhGelu(tanh);
      if (auto *rejected = std::get_if<Rejected>(&result))
        report.recordNearMiss(kKind, op->getLoc(), rejected->reason);
    });
  }
};

} // namespace

void mlir::lmopt::populateFuseGeluPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseGeluPattern<ErfOp, matchErfGelu>,
               FuseGeluPattern<TanhOp, matchTanhGelu>>(patterns.getContext());
}
