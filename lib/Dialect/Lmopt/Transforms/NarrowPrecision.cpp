//===- NarrowPrecision.cpp - f16/bf16 islands for GEMMs and attention -----===//
//
// The GPU's tensor cores multiply f16 and bf16; everything around the matrix
// products (norms, softmax, residual sums) keeps f32. So each f32 linear,
// matmul and attention becomes an island: operands narrowed (constants here,
// once), the op in half precision, results widened back. The casts between
// two islands cancel exactly.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "QuantizeWeights.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Format/Float16.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::lmopt {
#define GEN_PASS_DEF_NARROWPRECISIONPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

static constexpr llvm::StringLiteral kHalfPrecisionKind = "half_precision";

static Type elementTypeOf(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getElementType();
}

static bool isF32Tensor(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

/// The operands an island narrows: every operand but attention's mask,
/// which the attention steps read as f32 or i1 whatever the query's type.
static SmallVector<unsigned> getNarrowedOperands(Operation *op) {
  SmallVector<unsigned> indices;
  auto attention = dyn_cast<AttentionOp>(op);
  for (OpOperand &operand : op->getOpOperands())
    if (!attention || operand.get() != attention.getMask())
      indices.push_back(operand.getOperandNumber());
  return indices;
}

/// An f32 linear, matmul or attention: all narrowed operands and all
/// results f32 (a quantized weight or a half-precision model is not). With
/// `wideResults`, a linear or a matmul with a rank-2 right operand.
static bool isIslandCandidate(Operation *op, bool wideResults) {
  if (!isa<LinearOp, MatMulOp, AttentionOp>(op))
    return false;
  if (wideResults) {
    if (isa<AttentionOp>(op))
      return false;
    if (auto matmul = dyn_cast<MatMulOp>(op);
        matmul && (llvm::cast<RankedTensorType>(matmul.getRhs().getType())
                           .getRank() != 2 ||
                   llvm::cast<RankedTensorType>(matmul.getLhs().getType())
                           .getRank() < 2))
      return false;
    if (auto linear = dyn_cast<LinearOp>(op);
        linear && linear.getInputQuantization() != InputQuantization::none)
      return false;
  }
  return llvm::all_of(
             getNarrowedOperands(op),
             [&](unsigned i) { return isF32Tensor(op->getOperand(i)); }) &&
         llvm::all_of(op->getResults(), isF32Tensor);
}

/// A cast from f16 or bf16 to f32.
static bool isWideningFromHalf(CastOp cast) {
  Type from = elementTypeOf(cast.getInput());
  return (from.isF16() || from.isBF16()) &&
         elementTypeOf(cast.getOutput()).isF32();
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

namespace {
/// A constant converted to half precision: its bits, or the first element
/// that does not fit.
struct HalfConstant {
  std::vector<uint16_t> bits;
  int64_t outOfRange = -1;
  float outOfRangeValue = 0.0f;
};
} // namespace

/// Rounds `values` to nearest even in `half`; a finite value that would
/// become infinite is out of range.
static HalfConstant convertToHalf(ArrayRef<float> values, FloatType half) {
  HalfConstant result;
  result.bits.reserve(values.size());
  bool f16 = half.isF16();
  for (auto [i, x] : llvm::enumerate(values)) {
    uint16_t bits = f16 ? rt::floatToHalf(x) : rt::floatToBFloat16(x);
    float back = f16 ? rt::halfToFloat(bits) : rt::bfloat16ToFloat(bits);
    if (std::isfinite(x) && !std::isfinite(back) && result.outOfRange < 0) {
      result.outOfRange = static_cast<int64_t>(i);
      result.outOfRangeValue = x;
    }
    result.bits.push_back(bits);
  }
  return result;
}

/// A `dense_resource` constant of `type` holding `bits`, named after the
/// f32 constant it replaces when that had a name.
static Value createHalfConstant(OpBuilder &builder, ConstantOp original,
                                RankedTensorType type,
                                ArrayRef<uint16_t> bits) {
  std::string key = "half_constant";
  if (auto resource =
          llvm::dyn_cast<DenseResourceElementsAttr>(original.getValue()))
    key = (resource.getRawHandle().getKey() + "_" +
           (type.getElementType().isF16() ? "f16" : "bf16"))
              .str();
  ArrayRef<char> bytes(reinterpret_cast<const char *>(bits.data()),
                       bits.size() * sizeof(uint16_t));
  auto attr = DenseResourceElementsAttr::get(
      type, key,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(uint16_t)));
  return ConstantOp::create(builder, original.getLoc(), attr).getOutput();
}

//===----------------------------------------------------------------------===//
// Islands
//===----------------------------------------------------------------------===//

namespace {
/// Builds the islands of one function; remembers each value's half copy so
/// that the islands reading one value share its cast or constant.
class IslandBuilder {
public:
  IslandBuilder(FloatType half, bool wideResults)
      : half(half), wideResults(wideResults) {}

  /// Rewrites `op` (an island candidate) to compute in `half`; false when a
  /// constant operand is out of range (warned, `op` left f32).
  bool narrow(Operation *op);

  int64_t numConstants = 0;

private:
  /// The half copy of the f32 `value`, built at its definition.
  Value getHalf(Value value, const HalfConstant *constant);

  FloatType half;
  bool wideResults;
  DenseMap<Value, Value> halfOf;
};
} // namespace

Value IslandBuilder::getHalf(Value value, const HalfConstant *constant) {
  if (Value known = halfOf.lookup(value))
    return known;
  auto type = llvm::cast<RankedTensorType>(value.getType()).clone(half);
  OpBuilder builder(value.getContext());
  builder.setInsertionPointAfterValue(value);
  Value narrowed;
  if (constant) {
    narrowed = createHalfConstant(builder, value.getDefiningOp<ConstantOp>(),
                                  type, constant->bits);
    ++numConstants;
  } else {
    narrowed = CastOp::create(builder, value.getLoc(), type, value).getOutput();
  }
  halfOf[value] = narrowed;
  return narrowed;
}

bool IslandBuilder::narrow(Operation *op) {
  // Convert the constants first: one out of range keeps the op f32.
  SmallVector<unsigned> indices = getNarrowedOperands(op);
  // Wide results: only the two matrix operands.
  if (wideResults)
    indices.resize(2);
  SmallVector<std::optional<HalfConstant>> constants(indices.size());
  for (auto [slot, index] : llvm::enumerate(indices)) {
    Value operand = op->getOperand(index);
    if (halfOf.count(operand))
      continue;
    FailureOr<std::vector<float>> values = readF32Constant(operand);
    if (failed(values))
      continue;
    HalfConstant converted = convertToHalf(*values, half);
    if (converted.outOfRange >= 0) {
      op->emitWarning() << "'" << op->getName() << "' (node '"
                        << describeNode(op->getLoc())
                        << "') stays f32: operand " << index << " element "
                        << converted.outOfRange << " = "
                        << converted.outOfRangeValue << " is beyond " << half
                        << "'s range";
      getFusionReport(op->getContext())
          .recordNearMiss(kHalfPrecisionKind, op->getLoc(),
                          "a constant operand is beyond " +
                              Twine(half.isF16() ? "f16" : "bf16") +
                              "'s range");
      return false;
    }
    constants[slot] = std::move(converted);
  }

  for (auto [slot, index] : llvm::enumerate(indices)) {
    Value operand = op->getOperand(index);
    // The f32 constants left unused go with the cleanup below (erasing them
    // here could hand their address to a new value `halfOf` still maps).
    op->setOperand(
        index, getHalf(operand, constants[slot] ? &*constants[slot] : nullptr));
  }
  OpBuilder builder(op->getContext());
  if (wideResults) {
    // The product reads the half operands and writes f32: a matmul becomes
    // the linear that does so.
    if (auto matmul = dyn_cast<MatMulOp>(op)) {
      builder.setInsertionPoint(op);
      auto linear = LinearOp::create(
          builder, op->getLoc(), matmul.getType(), matmul.getLhs(),
          matmul.getRhs(), /*bias=*/Value(), /*residual=*/Value(),
          /*transpose_weight=*/false, Activation::none,
          InputQuantization::none);
      matmul.getResult().replaceAllUsesWith(linear.getOutput());
      op->erase();
      op = linear;
    }
    getFusionReport(op->getContext())
        .recordFused(kHalfPrecisionKind, op->getLoc());
    return true;
  }
  builder.setInsertionPointAfter(op);
  for (OpResult result : op->getResults()) {
    auto f32Type = llvm::cast<RankedTensorType>(result.getType());
    result.setType(f32Type.clone(half));
    auto widen = CastOp::create(builder, op->getLoc(), f32Type, result);
    result.replaceAllUsesExcept(widen.getOutput(), widen);
  }
  getFusionReport(op->getContext())
      .recordFused(kHalfPrecisionKind, op->getLoc());
  return true;
}

//===----------------------------------------------------------------------===//
// Cleanup patterns
//===----------------------------------------------------------------------===//

namespace {

/// `op(widen(x))` -> `widen(op(x))` for an op that only moves elements:
/// exact, and it brings the widening cast next to the next island's
/// narrowing one (a fused QKV projection's split feeding attention).
template <typename OpTy> struct SinkWideningCast : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto widen = op->getOperand(0).template getDefiningOp<CastOp>();
    if (!widen || !isWideningFromHalf(widen))
      return rewriter.notifyMatchFailure(op, "data not widened from f16/bf16");
    Type half = elementTypeOf(widen.getInput());
    Operation *narrow = rewriter.clone(*op);
    narrow->setOperand(0, widen.getInput());
    SmallVector<Value> widened;
    for (auto [result, original] :
         llvm::zip_equal(narrow->getResults(), op->getResults())) {
      auto type = llvm::cast<RankedTensorType>(original.getType());
      result.setType(type.clone(half));
      widened.push_back(
          CastOp::create(rewriter, op.getLoc(), type, result).getOutput());
    }
    rewriter.replaceOp(op, widened);
    return success();
  }
};

/// `narrow(widen(x))` -> `x` when the narrowing gives back `x`'s type: f32
/// holds every f16 and bf16 value, so the pair is the identity.
struct FoldHalfRoundTrip : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto widen = op.getInput().getDefiningOp<CastOp>();
    if (!widen || !isWideningFromHalf(widen))
      return rewriter.notifyMatchFailure(op, "input not widened from f16/bf16");
    if (widen.getInput().getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "not narrowed back to its type");
    rewriter.replaceOp(op, widen.getInput());
    return success();
  }
};

/// `narrow(op(x))` -> `op(narrow(x))` for an op that moves every element
/// of `x` once (a transpose, a reshape, a squeeze or an unsqueeze): exact,
/// moves half the bytes, and the narrowed `x` is the one a linear reading
/// `x` already has (CSE). A weight gradient reads its activation and its
/// output gradient transposed or flattened to rank 2, while the forward
/// linear and the input gradient read them as they are; without this each
/// would get a second cast, and the f32 activation would stay alive until
/// the backward only to be cast again.
template <typename OpTy> struct HoistNarrowingCast : OpRewritePattern<CastOp> {
  using OpRewritePattern<CastOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto mover = op.getInput().template getDefiningOp<OpTy>();
    Type to = elementTypeOf(op.getOutput());
    if (!mover || !elementTypeOf(mover->getOperand(0)).isF32() ||
        !(to.isF16() || to.isBF16()))
      return rewriter.notifyMatchFailure(op, "not a narrowed f32 data move");
    auto inputType =
        llvm::cast<RankedTensorType>(mover->getOperand(0).getType());
    Value narrowed = CastOp::create(rewriter, op.getLoc(), inputType.clone(to),
                                    mover->getOperand(0));
    Operation *moved = rewriter.clone(*mover);
    moved->setOperand(0, narrowed);
    moved->getResult(0).setType(op.getType());
    rewriter.replaceOp(op, moved->getResults());
    return success();
  }
};

} // namespace

void mlir::lmopt::populateNarrowPrecisionCleanupPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<SinkWideningCast<ReshapeOp>, SinkWideningCast<SqueezeOp>,
               SinkWideningCast<UnsqueezeOp>, SinkWideningCast<TransposeOp>,
               SinkWideningCast<SliceOp>, SinkWideningCast<SplitOp>,
               FoldHalfRoundTrip, HoistNarrowingCast<TransposeOp>,
               HoistNarrowingCast<ReshapeOp>, HoistNarrowingCast<SqueezeOp>,
               HoistNarrowingCast<UnsqueezeOp>>(context);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct NarrowPrecisionPass
    : mlir::lmopt::impl::NarrowPrecisionPassBase<NarrowPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FloatType half;
    if (dtype == "f16")
      half = Float16Type::get(context);
    else if (dtype == "bf16")
      half = BFloat16Type::get(context);
    else {
      getOperation()->emitError() << "lmopt-narrow-precision: unknown dtype '"
                                  << dtype << "'; expected f16 or bf16";
      return signalPassFailure();
    }
    getFusionReport(context).registerKind(kHalfPrecisionKind);

    SmallVector<Operation *> candidates;
    getOperation()->walk([&](Operation *op) {
      if (!isIslandCandidate(op, wideResults))
        return;
      // The cache's f32 state is read in place (KvCacheEntries.h).
      if (auto attention = dyn_cast<AttentionOp>(op);
          attention && attention.getKvHeadsSplit() && keepKvCacheAttention)
        return;
      candidates.push_back(op);
    });
    IslandBuilder builder(half, wideResults);
    for (Operation *op : candidates) {
      if (!builder.narrow(op)) {
        ++numOutOfRange;
        continue;
      }
      if (isa<LinearOp>(op))
        ++numLinears;
      else if (isa<MatMulOp>(op))
        ++numMatmuls;
      else
        ++numAttentions;
    }
    numConstants += builder.numConstants;

    RewritePatternSet patterns(context);
    populateNarrowPrecisionCleanupPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
