//===- FoldQuantizedLinear.cpp - imported quantized subgraphs to linear ---===//
//
// Folds what other quantizers write onto the quantized forms of
// `lmopt.linear` (docs/dialect.md, "Quantized and mixed-precision linears"):
//   mul(cast(matmul_integer(dql(x)#0, W, dql#2, wzp)), mul(dql#1, ws))
//       -> linear(x, scast(W)) {dynamic_per_tensor}
//   linear(dequantize(quantize(x)), dequantize(scast(W8)))
//       -> linear(quantize(x), scast(W8))                    (static int8)
//   linear(x, dequantize(scast(W4 block-wise)))
//       -> linear(x, scast(W4))                              (int4 weights)
// The fuse-linear patterns run alongside, so a bias add left after the
// integer product folds into the new linear.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_FOLDQUANTIZEDLINEARPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kKind = "quantized_linear";

static Type elementTypeOf(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getElementType();
}

/// The values of a constant of integer or float elements (splats expanded),
/// integers read with their type's signedness.
static std::optional<SmallVector<double>> readConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense)
    return std::nullopt;
  SmallVector<double> values;
  Type type = dense.getElementType();
  if (llvm::isa<FloatType>(type)) {
    for (const APFloat &x : dense.getValues<APFloat>())
      values.push_back(x.convertToDouble());
    return values;
  }
  auto intType = llvm::dyn_cast<IntegerType>(type);
  if (!intType)
    return std::nullopt;
  for (const APInt &x : dense.getValues<APInt>())
    values.push_back(intType.isUnsigned()
                         ? static_cast<double>(x.getZExtValue())
                         : static_cast<double>(x.getSExtValue()));
  return values;
}

/// `weight` (an 8-bit integer constant) as the signless constant that
/// `quant.scast` takes, re-created when it is unsigned.
static Value getSignlessWeight(PatternRewriter &rewriter, Value weight) {
  auto type = llvm::cast<RankedTensorType>(weight.getType());
  auto intType = llvm::cast<IntegerType>(type.getElementType());
  if (intType.isSignless())
    return weight;
  auto signlessType =
      type.clone(IntegerType::get(rewriter.getContext(), intType.getWidth()));
  Attribute value = weight.getDefiningOp<ConstantOp>().getValue();
  ElementsAttr attr;
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value))
    attr = dense.bitcast(signlessType.getElementType());
  else
    attr = DenseResourceElementsAttr::get(
        signlessType,
        llvm::cast<DenseResourceElementsAttr>(value).getRawHandle());
  return ConstantOp::create(rewriter, weight.getLoc(), attr).getOutput();
}

/// The operand of `mul` that `match` accepts, and the other one.
template <typename Fn>
static std::optional<std::pair<Value, Value>> matchEitherOperand(MulOp mul,
                                                                 Fn match) {
  if (match(mul.getLhs()))
    return std::make_pair(mul.getLhs(), mul.getRhs());
  if (match(mul.getRhs()))
    return std::make_pair(mul.getRhs(), mul.getLhs());
  return std::nullopt;
}

namespace {

/// ONNX Runtime's `quantize_dynamic`: the integer product of a dynamically
/// quantized input and a constant weight, scaled back to f32.
struct FoldDynamicQuantizedMatMul : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    auto product = matchEitherOperand(mul, [](Value v) {
      auto cast = v.getDefiningOp<CastOp>();
      return cast && cast.getInput().getDefiningOp<MatMulIntegerOp>();
    });
    if (!product)
      return rewriter.notifyMatchFailure(mul, "not a scaled integer product");
    auto matmul = product->first.getDefiningOp<CastOp>()
                      .getInput()
                      .getDefiningOp<MatMulIntegerOp>();
    auto quantize = matmul.getA().getDefiningOp<DynamicQuantizeLinearOp>();
    auto scales = product->second.getDefiningOp<MulOp>();
    if (!quantize || matmul.getAZeroPoint() != quantize.getZeroPoint() ||
        !scales || !elementTypeOf(mul.getResult()).isF32())
      return rewriter.notifyMatchFailure(
          mul, "input not from dynamic_quantize_linear");
    auto weightScale = matchEitherOperand(
        scales, [&](Value v) { return v == quantize.getScale(); });
    FusionReport &report = getFusionReport(getContext());
    auto nearMiss = [&](const Twine &reason) {
      report.recordNearMiss(kKind, mul.getLoc(), reason);
      return rewriter.notifyMatchFailure(mul, reason);
    };
    if (!weightScale)
      return nearMiss("the scale is not the input scale times a constant");
    Value weight = matmul.getB();
    auto weightType = llvm::cast<RankedTensorType>(weight.getType());
    std::optional<SmallVector<double>> ws = readConstant(weightScale->second);
    if (!isConstant(weight) || weightType.getRank() != 2 || !ws)
      return nearMiss("weight or weight scale is not a constant matrix");
    int64_t n = weightType.getDimSize(1);
    SmallVector<double> zps(1, 0.0);
    if (Value zp = matmul.getBZeroPoint()) {
      std::optional<SmallVector<double>> read = readConstant(zp);
      if (!read)
        return nearMiss("weight zero point is not a constant");
      zps = *read;
    }
    bool perTensor = ws->size() == 1 && llvm::all_equal(zps);
    if (!perTensor &&
        ((ws->size() != 1 && static_cast<int64_t>(ws->size()) != n) ||
         (zps.size() != 1 && static_cast<int64_t>(zps.size()) != n)))
      return nearMiss("weight scales and zero points are neither per tensor "
                      "nor per output column");

    auto storage = llvm::cast<IntegerType>(weightType.getElementType());
    bool isSigned = !storage.isUnsigned();
    unsigned flags = isSigned ? quant::QuantizationFlags::Signed : 0;
    int64_t min = isSigned ? -128 : 0, max = isSigned ? 127 : 255;
    auto i8 = rewriter.getIntegerType(8);
    auto f32 = rewriter.getF32Type();
    quant::QuantizedType type;
    if (perTensor) {
      type = quant::UniformQuantizedType::get(
          flags, i8, f32, (*ws)[0], static_cast<int64_t>(zps[0]), min, max);
    } else {
      SmallVector<double> scaleValues;
      SmallVector<int64_t> zeroValues;
      for (int64_t j = 0; j < n; ++j) {
        scaleValues.push_back((*ws)[ws->size() == 1 ? 0 : j]);
        zeroValues.push_back(
            static_cast<int64_t>(zps[zps.size() == 1 ? 0 : j]));
      }
      type = quant::UniformQuantizedPerAxisType::get(
          flags, i8, f32, scaleValues, zeroValues, /*axis=*/1, min, max);
    }
    rewriter.setInsertionPoint(mul);
    Value bits = getSignlessWeight(rewriter, weight);
    Value quantized = quant::StorageCastOp::create(rewriter, weight.getLoc(),
                                                   weightType.clone(type), bits)
                          .getResult();
    auto linear = LinearOp::create(
        rewriter, mul.getLoc(), mul.getType(), quantize.getInput(), quantized,
        /*bias=*/Value(), /*residual=*/Value(), /*transpose_weight=*/false,
        Activation::none, InputQuantization::dynamic_per_tensor);
    rewriter.replaceOp(mul, linear.getOutput());
    report.recordFused(kKind, mul.getLoc());
    return success();
  }
};

/// The storage cast behind `dequantize(scast(constant))`, or null.
static quant::StorageCastOp getQuantizedConstant(Value value) {
  auto dequantize = value.getDefiningOp<DequantizeOp>();
  if (!dequantize)
    return {};
  auto cast = dequantize.getInput().getDefiningOp<quant::StorageCastOp>();
  if (!cast || !isConstant(cast.getInput()))
    return {};
  return cast;
}

/// Why an 8-bit weight type cannot be the weight of a static int8 linear
/// (docs/dialect.md), or "".
static std::string whyNotStaticWeight(quant::QuantizedType type,
                                      int64_t outAxis) {
  if (type.getStorageTypeIntegralWidth() != 8 || !type.isSigned())
    return "weight is not signed 8-bit";
  if (auto perAxis = llvm::dyn_cast<quant::UniformQuantizedPerAxisType>(type)) {
    if (perAxis.getQuantizedDimension() != outAxis)
      return "weight is quantized along K, not per output channel";
    if (!llvm::all_of(perAxis.getZeroPoints(),
                      [](int64_t zero) { return zero == 0; }))
      return "weight zero points are not 0";
    return "";
  }
  auto uniform = llvm::dyn_cast<quant::UniformQuantizedType>(type);
  if (!uniform)
    return "weight is block-wise";
  if (uniform.getZeroPoint() != 0)
    return "weight zero point is not 0";
  return "";
}

/// Why a 4-bit weight type cannot be the weight of an int4 linear, or "".
static std::string whyNotInt4Weight(quant::UniformQuantizedSubChannelType type,
                                    ArrayRef<int64_t> shape, int64_t outAxis) {
  if (type.getStorageTypeIntegralWidth() != 4)
    return "block-wise weight is not 4-bit";
  int64_t kAxis = 1 - outAxis;
  ArrayRef<int64_t> params =
      llvm::cast<ShapedType>(type.getScales().getType()).getShape();
  if (params.size() != 2 || params[outAxis] != shape[outAxis])
    return "blocks span several output channels";
  for (auto [dim, size] : type.getBlockSizeInfo())
    if (dim == kAxis && shape[kAxis] % size == 0)
      return "";
  return "blocks do not divide K";
}

/// QDQ and MatMulNBits: a float linear on dequantized operands.
struct FoldDequantizedLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp linear,
                                PatternRewriter &rewriter) const override {
    quant::StorageCastOp weight = getQuantizedConstant(linear.getWeight());
    if (!weight || linear.getInputQuantization() != InputQuantization::none ||
        !elementTypeOf(linear.getInput()).isF32())
      return rewriter.notifyMatchFailure(
          linear, "weight is not a dequantized constant");
    FusionReport &report = getFusionReport(getContext());
    auto nearMiss = [&](const Twine &reason) {
      report.recordNearMiss(kKind, linear.getLoc(), reason);
      return rewriter.notifyMatchFailure(linear, reason);
    };
    auto weightType = llvm::cast<RankedTensorType>(weight.getType());
    auto quantType =
        llvm::cast<quant::QuantizedType>(weightType.getElementType());
    int64_t outAxis = linear.getTransposeWeight() ? 0 : 1;
    if (!quantType.getExpressedType().isF32())
      return nearMiss("weight does not express f32");
    Value input = linear.getInput();
    if (auto blocked =
            llvm::dyn_cast<quant::UniformQuantizedSubChannelType>(quantType)) {
      std::string why =
          whyNotInt4Weight(blocked, weightType.getShape(), outAxis);
      if (!why.empty())
        return nearMiss(why);
    } else {
      auto dequantized = input.getDefiningOp<DequantizeOp>();
      auto quantized = dequantized
                           ? dequantized.getInput().getDefiningOp<QuantizeOp>()
                           : QuantizeOp();
      if (!quantized)
        return nearMiss("8-bit weight but the input is not "
                        "dequantize(quantize(x))");
      auto inputType = llvm::dyn_cast<quant::UniformQuantizedType>(
          elementTypeOf(quantized.getOutput()));
      if (!inputType || inputType.getStorageTypeIntegralWidth() != 8 ||
          !inputType.getExpressedType().isF32())
        return nearMiss("input is not quantized per tensor to 8 bits");
      std::string why = whyNotStaticWeight(quantType, outAxis);
      if (!why.empty())
        return nearMiss(why);
      input = quantized.getOutput();
    }
    rewriter.replaceOpWithNewOp<LinearOp>(
        linear, linear.getType(), input, weight.getResult(), linear.getBias(),
        linear.getResidual(), linear.getTransposeWeight(),
        linear.getActivation(), InputQuantization::none);
    report.recordFused(kKind, linear.getLoc());
    return success();
  }
};

struct FoldQuantizedLinearPass
    : lmopt::impl::FoldQuantizedLinearPassBase<FoldQuantizedLinearPass> {
  void runOnOperation() override {
    getFusionReport(&getContext()).registerKind(kKind);
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldDynamicQuantizedMatMul, FoldDequantizedLinear>(
        &getContext());
    // A bias add after the scaled integer product joins the new linear.
    populateFuseLinearPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
