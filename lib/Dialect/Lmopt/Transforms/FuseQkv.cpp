//===- FuseQkv.cpp - merge linears that share an input --------------------===//
//
// Q, K and V projections read the same hidden state. One GEMM with the three
// weights side by side reads that input once and fills the device better; a
// split on the last axis gives back the three results.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_FUSEQKVPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kKind = "qkv";

namespace {

/// Linears reading one value that can become a single GEMM, in block order.
struct QkvMatch {
  SmallVector<LinearOp> linears;
};

} // namespace

/// The contents of a constant as raw row-major bytes, splats expanded.
static FailureOr<SmallVector<char>> getConstantBytes(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return failure();
  auto type = llvm::cast<ShapedType>(constant.getType());
  Type elementType = type.getElementType();
  if (!elementType.isIntOrFloat() || elementType.isInteger(1) ||
      elementType.getIntOrFloatBitWidth() % 8 != 0)
    return failure();
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  ArrayRef<char> data;
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue()))
    data = dense.getRawData();
  else if (auto resource =
               llvm::dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
    data = resource.getData();
  else
    return failure();
  int64_t total = type.getNumElements() * elementBytes;
  if (static_cast<int64_t>(data.size()) == total)
    return SmallVector<char>(data);
  if (static_cast<int64_t>(data.size()) != elementBytes)
    return failure(); // a missing resource blob or an unexpected encoding
  SmallVector<char> bytes;
  bytes.reserve(total);
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    bytes.append(data.begin(), data.end());
  return bytes;
}

static bool isResourceConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  return constant && llvm::isa<DenseResourceElementsAttr>(constant.getValue());
}

/// Why `linear` cannot join a merged projection, or an empty string.
static std::string rejectLinear(LinearOp linear, LinearOp first) {
  if (linear.getActivation() != Activation::none)
    return "linear has a fused activation";
  if (linear.getResidual())
    return "linear has a fused residual";
  if (linear.getTransposeInput())
    return "linear reads its input transposed";
  if (!isConstant(linear.getWeight()) ||
      failed(getConstantBytes(linear.getWeight())))
    return "weight is not a constant";
  if (Value bias = linear.getBias())
    if (failed(getConstantBytes(bias)))
      return "bias is not a constant";
  if (!llvm::cast<ShapedType>(linear.getWeight().getType()).hasStaticShape())
    return "weight shape is not static";
  if (linear->getBlock() != first->getBlock())
    return "linears are in different blocks";
  if (linear.getTransposeWeight() != first.getTransposeWeight())
    return "weights have different layouts (transpose_weight differs)";
  auto type = llvm::cast<ShapedType>(linear.getWeight().getType());
  auto firstType = llvm::cast<ShapedType>(first.getWeight().getType());
  if (type.getElementType() != firstType.getElementType())
    return "weights have different element types";
  int64_t contraction = linear.getTransposeWeight() ? 1 : 0;
  if (type.getDimSize(contraction) != firstType.getDimSize(contraction))
    return "weights have different contraction sizes";
  if (linear.getType() != first.getType() &&
      llvm::cast<ShapedType>(linear.getType()).getShape().drop_back() !=
          llvm::cast<ShapedType>(first.getType()).getShape().drop_back())
    return "results have different leading dims";
  if (Value bias = linear.getBias())
    if (llvm::cast<ShapedType>(bias.getType()).getElementType() !=
        type.getElementType())
      return "bias and weight element types differ";
  return "";
}

/// The linears whose input is `input`, those of the first one's block first,
/// in block order.
static SmallVector<LinearOp> getLinearUsers(Value input) {
  SmallVector<LinearOp> users;
  for (Operation *user : input.getUsers())
    if (auto linear = llvm::dyn_cast<LinearOp>(user))
      if (linear.getInput() == input && !llvm::is_contained(users, linear))
        users.push_back(linear);
  std::stable_sort(users.begin(), users.end(), [](LinearOp a, LinearOp b) {
    return a->getBlock() == b->getBlock() && a->isBeforeInBlock(b);
  });
  return users;
}

/// The linears reading `input` that merge into one, or the reason they do not
/// (an empty reason when fewer than two linears read it).
static FailureOr<QkvMatch> matchQkv(Value input, std::string &reason) {
  reason.clear();
  SmallVector<LinearOp> users = getLinearUsers(input);
  if (users.size() < 2)
    return failure();

  // The first linear that could merge sets layout and types for the rest.
  QkvMatch match;
  std::string firstReason;
  for (LinearOp linear : users) {
    LinearOp first = match.linears.empty() ? linear : match.linears.front();
    std::string why = rejectLinear(linear, first);
    if (why.empty()) {
      match.linears.push_back(linear);
      continue;
    }
    if (firstReason.empty())
      firstReason = why;
  }
  if (match.linears.size() >= 2)
    return match;
  reason = (Twine(users.size()) + " linears share an input but " +
            (firstReason.empty() ? "they cannot merge" : firstReason))
               .str();
  return failure();
}

/// Weights concatenated along the output dim: dim 0 of `[N, K]` weights
/// (transpose_weight) or dim 1 of `[K, N]` weights.
static Value buildMergedWeight(PatternRewriter &rewriter, Location loc,
                               ArrayRef<LinearOp> linears) {
  LinearOp first = linears.front();
  auto firstType = llvm::cast<ShapedType>(first.getWeight().getType());
  Type elementType = firstType.getElementType();
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  bool transposed = first.getTransposeWeight();
  int64_t contraction = firstType.getDimSize(transposed ? 1 : 0);

  SmallVector<SmallVector<char>> parts;
  SmallVector<int64_t> widths;
  bool anyResource = false;
  for (LinearOp linear : linears) {
    parts.push_back(*getConstantBytes(linear.getWeight()));
    auto type = llvm::cast<ShapedType>(linear.getWeight().getType());
    widths.push_back(type.getDimSize(transposed ? 0 : 1));
    anyResource |= isResourceConstant(linear.getWeight());
  }
  int64_t total = 0;
  for (int64_t width : widths)
    total += width;

  SmallVector<char> bytes;
  bytes.reserve(total * contraction * elementBytes);
  if (transposed) {
    for (const SmallVector<char> &part : parts)
      bytes.append(part.begin(), part.end());
  } else {
    for (int64_t row = 0; row < contraction; ++row)
      for (auto [part, width] : llvm::zip(parts, widths)) {
        const char *begin = part.data() + row * width * elementBytes;
        bytes.append(begin, begin + width * elementBytes);
      }
  }

  SmallVector<int64_t> shape = transposed
                                   ? SmallVector<int64_t>{total, contraction}
                                   : SmallVector<int64_t>{contraction, total};
  return buildConstant(rewriter, loc, RankedTensorType::get(shape, elementType),
                       bytes, "qkv_weight", anyResource);
}

/// Biases concatenated; a missing one contributes zeros. Null when none.
static Value buildMergedBias(PatternRewriter &rewriter, Location loc,
                             ArrayRef<LinearOp> linears) {
  if (llvm::none_of(linears, [](LinearOp l) { return l.getBias(); }))
    return {};
  LinearOp first = linears.front();
  Type elementType =
      llvm::cast<ShapedType>(first.getWeight().getType()).getElementType();
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  bool anyResource = false;
  SmallVector<char> bytes;
  for (LinearOp linear : linears) {
    auto weightType = llvm::cast<ShapedType>(linear.getWeight().getType());
    int64_t width = weightType.getDimSize(first.getTransposeWeight() ? 0 : 1);
    if (Value bias = linear.getBias()) {
      SmallVector<char> part = *getConstantBytes(bias);
      bytes.append(part.begin(), part.end());
      anyResource |= isResourceConstant(bias);
      continue;
    }
    bytes.append(width * elementBytes, 0); // +0.0 and integer 0 are all-zero
  }
  auto type = RankedTensorType::get(
      {static_cast<int64_t>(bytes.size()) / elementBytes}, elementType);
  return buildConstant(rewriter, loc, type, bytes, "qkv_bias", anyResource);
}

namespace {

struct FuseSharedInputLinears : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<QkvMatch> match = matchQkv(op.getInput(), reason);
    if (failed(match))
      return rewriter.notifyMatchFailure(
          op, reason.empty() ? "no other linear reads this input" : reason);
    // Anchor on the first linear so that each group is rewritten once.
    LinearOp first = match->linears.front();
    if (op != first)
      return rewriter.notifyMatchFailure(op, "not the first linear of a group");

    rewriter.setInsertionPoint(first);
    Location loc = first.getLoc();
    Value weight = buildMergedWeight(rewriter, loc, match->linears);
    Value bias = buildMergedBias(rewriter, loc, match->linears);

    SmallVector<int64_t> sizes;
    for (LinearOp linear : match->linears) {
      auto type = llvm::cast<ShapedType>(linear.getWeight().getType());
      sizes.push_back(type.getDimSize(first.getTransposeWeight() ? 0 : 1));
    }
    int64_t total = 0;
    for (int64_t size : sizes)
      total += size;
    auto firstType = llvm::cast<RankedTensorType>(first.getType());
    SmallVector<int64_t> shape(firstType.getShape());
    shape.back() = total;
    auto mergedType = RankedTensorType::get(shape, firstType.getElementType());

    auto merged = LinearOp::create(
        rewriter, loc, mergedType, first.getInput(), weight, bias,
        /*residual=*/Value(), first.getTransposeWeightAttr(),
        first.getActivationAttr());
    SmallVector<Type> resultTypes;
    for (LinearOp linear : match->linears)
      resultTypes.push_back(linear.getType());
    auto split =
        SplitOp::create(rewriter, loc, resultTypes, merged.getOutput(),
                        rewriter.getI64IntegerAttr(firstType.getRank() - 1),
                        rewriter.getDenseI64ArrayAttr(sizes));
    for (auto [linear, result] : llvm::zip(match->linears, split.getOutputs()))
      rewriter.replaceOp(linear, result);
    getFusionReport(rewriter.getContext()).recordFused(kKind, loc);
    return success();
  }
};

struct FuseQkvPass : lmopt::impl::FuseQkvPassBase<FuseQkvPass> {
  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    report.registerKind(kKind);
    RewritePatternSet patterns(&getContext());
    populateFuseQkvPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    // Inputs still read by several linears are near misses.
    llvm::SetVector<Value> inputs;
    getOperation()->walk([&](LinearOp op) { inputs.insert(op.getInput()); });
    for (Value input : inputs) {
      std::string reason;
      FailureOr<QkvMatch> match = matchQkv(input, reason);
      if (failed(match) && !reason.empty())
        report.recordNearMiss(kKind, getLinearUsers(input).front().getLoc(),
                              reason);
    }
  }
};

} // namespace

void mlir::lmopt::populateFuseQkvPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseSharedInputLinears>(patterns.getContext());
}
