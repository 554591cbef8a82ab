//===- ReductionToLinalg.cpp - reductions and normalizations to linalg ----===//
//
// Reductions, softmax and the normalizations, mirroring the reference
// evaluator's NormalizationOps.cpp: each statistic is one `linalg.generic`
// with reduction iterators, accumulated in the compute type (f32 for narrow
// floats), and the result is one elementwise generic reading the statistics
// through maps that drop the reduced dims.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Conversion/LmoptToLinalg/LmoptToLinalg.h"

#include "BuildUtils.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::linalg_lowering;

using CombineFn =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange, Value)>;

/// The map from a rank-`rank` iteration space to the dims not in `reduced`.
static AffineMap getKeptDimsMap(ArrayRef<bool> reduced, MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (auto [i, isReduced] : llvm::enumerate(reduced))
    if (!isReduced)
      exprs.push_back(getAffineDimExpr(i, context));
  return AffineMap::get(reduced.size(), 0, exprs, context);
}

/// The number of elements `source` has in the `reduced` dims, as a scalar of
/// `type` (float or integer).
static Value buildReducedCount(OpBuilder &b, Location loc, Value source,
                               ArrayRef<bool> reduced, Type countType) {
  auto type = llvm::cast<RankedTensorType>(source.getType());
  int64_t staticCount = 1;
  for (auto [i, isReduced] : llvm::enumerate(reduced))
    if (isReduced && !type.isDynamicDim(i))
      staticCount *= type.getDimSize(i);
  Value count = arith::ConstantIndexOp::create(b, loc, staticCount);
  for (auto [i, isReduced] : llvm::enumerate(reduced))
    if (isReduced && type.isDynamicDim(i))
      count = arith::MulIOp::create(b, loc, count,
                                    tensor::DimOp::create(b, loc, source, i));
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  if (llvm::isa<FloatType>(countType))
    return arith::SIToFPOp::create(b, loc, countType, asInt);
  if (countType.getIntOrFloatBitWidth() == 64)
    return asInt;
  return arith::TruncIOp::create(b, loc, countType, asInt);
}

/// A `linalg.generic` over the iteration space of `source` that reduces the
/// `reduced` dims into a tensor of `accType` over the kept dims, starting from
/// `init`; `inputs` are read through `inputMaps`.
static Value buildReduction(OpBuilder &b, Location loc, Value source,
                            ArrayRef<bool> reduced, Type accType,
                            TypedAttr init, ValueRange inputs,
                            ArrayRef<AffineMap> inputMaps, CombineFn combine) {
  SmallVector<OpFoldResult> sizes;
  for (auto [i, isReduced] : llvm::enumerate(reduced))
    if (!isReduced)
      sizes.push_back(tensor::getMixedSize(b, loc, source, i));
  Value empty = tensor::EmptyOp::create(b, loc, sizes, accType);
  Value initValue = arith::ConstantOp::create(b, loc, init);
  Value filled =
      linalg::FillOp::create(b, loc, ValueRange{initValue}, ValueRange{empty})
          .getResult(0);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(getKeptDimsMap(reduced, b.getContext()));
  SmallVector<utils::IteratorType> iterators;
  for (bool isReduced : reduced)
    iterators.push_back(isReduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{filled.getType()}, inputs, ValueRange{filled}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value acc = combine(nested, nestedLoc, args.drop_back(), args.back());
        linalg::YieldOp::create(nested, nestedLoc, acc);
      });
  return generic.getResult(0);
}

/// A parallel generic of `sizes` writing `elementType`, reading `inputs`
/// through `inputMaps` (the result through the identity).
static Value buildParallel(OpBuilder &b, Location loc,
                           ArrayRef<OpFoldResult> sizes, Type elementType,
                           ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                           ScalarBodyFn body) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, elementType);
  int64_t rank = int64_t(sizes.size());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                body(nested, nestedLoc, args.drop_back()));
      });
  return generic.getResult(0);
}

/// A generic over `iterationSource`'s shape writing `resultType`, reading
/// `inputs` through `inputMaps`.
static Value buildMapped(OpBuilder &b, Location loc, Value iterationSource,
                         RankedTensorType resultType, ValueRange inputs,
                         ArrayRef<AffineMap> inputMaps, ScalarBodyFn body) {
  return buildParallel(b, loc, tensor::getMixedSizes(b, loc, iterationSource),
                       resultType.getElementType(), inputs, inputMaps, body);
}

static Value extendToCompute(OpBuilder &b, Location loc, Value x,
                             Type computeType) {
  if (!llvm::isa<FloatType>(x.getType()))
    return x;
  return convertFloat(b, loc, x, computeType);
}

static TypedAttr floatAttr(OpBuilder &b, Type type, double value) {
  return b.getFloatAttr(type, value);
}

static Value floatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  return arith::ConstantOp::create(b, loc, floatAttr(b, type, value));
}

/// Normalized axis in [0, rank), or nullopt when out of range.
static std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
enum class ReduceKind { Mean, Sum, Max, Min };
} // namespace

/// The accumulator's starting value for `kind` in `accType`.
static TypedAttr getReduceInit(OpBuilder &b, ReduceKind kind, Type accType) {
  if (auto floatType = llvm::dyn_cast<FloatType>(accType)) {
    double inf = std::numeric_limits<double>::infinity();
    if (kind == ReduceKind::Max)
      return floatAttr(b, floatType, -inf);
    if (kind == ReduceKind::Min)
      return floatAttr(b, floatType, inf);
    return floatAttr(b, floatType, 0.0);
  }
  unsigned width = accType.getIntOrFloatBitWidth();
  if (kind == ReduceKind::Max)
    return b.getIntegerAttr(accType, llvm::APInt::getSignedMinValue(width));
  if (kind == ReduceKind::Min)
    return b.getIntegerAttr(accType, llvm::APInt::getSignedMaxValue(width));
  return b.getIntegerAttr(accType, 0);
}

static Value combineReduce(OpBuilder &b, Location loc, ReduceKind kind, Value x,
                           Value acc) {
  bool isFloat = llvm::isa<FloatType>(acc.getType());
  switch (kind) {
  case ReduceKind::Mean:
  case ReduceKind::Sum:
    return isFloat ? arith::AddFOp::create(b, loc, x, acc).getResult()
                   : arith::AddIOp::create(b, loc, x, acc).getResult();
  case ReduceKind::Max:
    return isFloat ? arith::MaximumFOp::create(b, loc, x, acc).getResult()
                   : arith::MaxSIOp::create(b, loc, x, acc).getResult();
  case ReduceKind::Min:
    return isFloat ? arith::MinimumFOp::create(b, loc, x, acc).getResult()
                   : arith::MinSIOp::create(b, loc, x, acc).getResult();
  }
  llvm_unreachable("unknown reduce kind");
}

namespace {

template <typename OpTy> struct ReduceToLinalg : OpRewritePattern<OpTy> {
  ReduceToLinalg(MLIRContext *context, ReduceKind kind)
      : OpRewritePattern<OpTy>(context), kind(kind) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Type elementType = inputType.getElementType();
    if (!llvm::isa<IntegerType, FloatType>(elementType) ||
        elementType.isInteger(1) || elementType != resultType.getElementType())
      return rewriter.notifyMatchFailure(op, "unsupported element types");
    int64_t rank = inputType.getRank();
    SmallVector<bool> reduced(rank, op.getAxes().empty());
    for (int64_t axis : op.getAxes()) {
      std::optional<int64_t> normalized = normalizeAxis(axis, rank);
      if (!normalized)
        return rewriter.notifyMatchFailure(op, "axis out of range");
      reduced[*normalized] = true;
    }
    int64_t keptRank = llvm::count(reduced, false);
    if ((op.getKeepdims() ? rank : keptRank) != resultType.getRank())
      return rewriter.notifyMatchFailure(op, "result rank mismatch");
    Location loc = op.getLoc();
    Type accType = getComputeType(elementType);
    ReduceKind reduceKind = kind;
    Value acc = buildReduction(
        rewriter, loc, input, reduced, accType,
        getReduceInit(rewriter, kind, accType), input,
        rewriter.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location l, ValueRange args, Value current) {
          return combineReduce(b, l, reduceKind,
                               extendToCompute(b, l, args[0], accType),
                               current);
        });
    Value count;
    if (kind == ReduceKind::Mean)
      count = buildReducedCount(rewriter, loc, input, reduced, accType);
    // The result iterates over the kept dims, plus unit dims with keepdims.
    SmallVector<OpFoldResult> sizes;
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0, r = 0; i < rank; ++i) {
      if (reduced[i] && !op.getKeepdims())
        continue;
      if (!reduced[i])
        exprs.push_back(rewriter.getAffineDimExpr(r));
      sizes.push_back(reduced[i]
                          ? OpFoldResult(rewriter.getIndexAttr(1))
                          : tensor::getMixedSize(rewriter, loc, input, i));
      ++r;
    }
    Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, elementType);
    if (empty.getType() != resultType)
      empty = tensor::CastOp::create(rewriter, loc, resultType, empty);
    AffineMap accMap =
        AffineMap::get(resultType.getRank(), 0, exprs, rewriter.getContext());
    SmallVector<AffineMap> maps = {
        accMap, rewriter.getMultiDimIdentityMap(resultType.getRank())};
    SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{acc},
        ValueRange{empty}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value value = args[0];
          if (count)
            value =
                llvm::isa<FloatType>(accType)
                    ? arith::DivFOp::create(b, l, value, count).getResult()
                    : arith::DivSIOp::create(b, l, value, count).getResult();
          if (llvm::isa<FloatType>(elementType))
            value = convertFloat(b, l, value, elementType);
          linalg::YieldOp::create(b, l, value);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

  ReduceKind kind;
};

} // namespace

//===----------------------------------------------------------------------===//
// Softmax and log-softmax (max-subtracted)
//===----------------------------------------------------------------------===//

static Value buildSoftmax(OpBuilder &b, Location loc, Value input, int64_t axis,
                          bool logarithm) {
  auto type = llvm::cast<RankedTensorType>(input.getType());
  Type elementType = type.getElementType();
  Type computeType = getComputeType(elementType);
  int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, false);
  reduced[axis] = true;
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap kept = getKeptDimsMap(reduced, b.getContext());
  double inf = std::numeric_limits<double>::infinity();
  Value max = buildReduction(
      b, loc, input, reduced, computeType, floatAttr(b, computeType, -inf),
      input, identity,
      [&](OpBuilder &nb, Location l, ValueRange args, Value acc) -> Value {
        return arith::MaximumFOp::create(
            nb, l, extendToCompute(nb, l, args[0], computeType), acc);
      });
  auto shifted = [&](OpBuilder &nb, Location l, Value x, Value m) -> Value {
    return arith::SubFOp::create(nb, l, extendToCompute(nb, l, x, computeType),
                                 m);
  };
  Value sum = buildReduction(
      b, loc, input, reduced, computeType, floatAttr(b, computeType, 0.0),
      ValueRange{input, max}, {identity, kept},
      [&](OpBuilder &nb, Location l, ValueRange args, Value acc) -> Value {
        Value e = math::ExpOp::create(nb, l, shifted(nb, l, args[0], args[1]));
        return arith::AddFOp::create(nb, l, e, acc);
      });
  return buildMapped(
      b, loc, input, type, ValueRange{input, max, sum}, {identity, kept, kept},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value x = shifted(nb, l, args[0], args[1]);
        Value value = logarithm
                          ? arith::SubFOp::create(
                                nb, l, x, math::LogOp::create(nb, l, args[2]))
                                .getResult()
                          : arith::DivFOp::create(
                                nb, l, math::ExpOp::create(nb, l, x), args[2])
                                .getResult();
        return convertFloat(nb, l, value, elementType);
      });
}

namespace {

template <typename OpTy> struct SoftmaxToLinalg : OpRewritePattern<OpTy> {
  SoftmaxToLinalg(MLIRContext *context, bool logarithm)
      : OpRewritePattern<OpTy>(context), logarithm(logarithm) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), type.getRank());
    if (!axis)
      return rewriter.notifyMatchFailure(op, "axis out of range");
    rewriter.replaceOp(op, buildSoftmax(rewriter, op.getLoc(), op.getInput(),
                                        *axis, logarithm));
    return success();
  }

  bool logarithm;
};

} // namespace

//===----------------------------------------------------------------------===//
// Layer norm, RMS norm, skip layer norm
//===----------------------------------------------------------------------===//

/// Why `scale` (or `bias`) cannot be read over dims [axis, rank) of `type`.
static std::string checkNormParameter(RankedTensorType type, int64_t axis,
                                      Value parameter) {
  if (!parameter)
    return "";
  auto paramType = llvm::cast<RankedTensorType>(parameter.getType());
  if (paramType.getRank() > type.getRank() - axis)
    return "scale or bias has more dims than the normalized dims";
  return checkBroadcast(type, {paramType});
}

/// A generic over the kept dims of `source` (the statistics' shape) writing
/// `type`, reading `inputs` (each over the kept dims).
static Value buildKeptMapped(OpBuilder &b, Location loc, Value source,
                             ArrayRef<bool> reduced, Type type,
                             ValueRange inputs, ScalarBodyFn body) {
  SmallVector<OpFoldResult> sizes;
  for (auto [i, isReduced] : llvm::enumerate(reduced))
    if (!isReduced)
      sizes.push_back(tensor::getMixedSize(b, loc, source, i));
  SmallVector<AffineMap> maps(inputs.size(),
                              b.getMultiDimIdentityMap(int64_t(sizes.size())));
  return buildParallel(b, loc, sizes, type, inputs, maps, body);
}

/// `(x - mean) * rstd * scale + bias` over dims [axis, rank) of `input`
/// (without the mean for RMS norm), statistics in the compute type. The mean
/// and `rstd = 1 / sqrt(var + epsilon)` are generics over the kept dims, so
/// the division and the square root run once per row, not per element.
static Value buildNormalization(OpBuilder &b, Location loc, Value input,
                                Value scale, Value bias, int64_t axis,
                                double epsilon, bool rms,
                                RankedTensorType resultType) {
  auto type = llvm::cast<RankedTensorType>(input.getType());
  Type computeType = getComputeType(type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, false);
  for (int64_t i = axis; i < rank; ++i)
    reduced[i] = true;
  SmallVector<Value> checked = {input, scale};
  if (bias)
    checked.push_back(bias);
  buildDynamicDimChecks(b, loc, rank, checked);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap kept = getKeptDimsMap(reduced, b.getContext());
  TypedAttr zero = floatAttr(b, computeType, 0.0);
  Value count = buildReducedCount(b, loc, input, reduced, computeType);
  auto ext = [&](OpBuilder &nb, Location l, Value x) {
    return extendToCompute(nb, l, x, computeType);
  };
  Value mean;
  if (!rms) {
    Value sum = buildReduction(
        b, loc, input, reduced, computeType, zero, input, identity,
        [&](OpBuilder &nb, Location l, ValueRange args, Value acc) -> Value {
          return arith::AddFOp::create(nb, l, ext(nb, l, args[0]), acc);
        });
    mean = buildKeptMapped(
        b, loc, input, reduced, computeType, sum,
        [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
          return arith::DivFOp::create(nb, l, args[0], count);
        });
  }
  auto centered = [&](OpBuilder &nb, Location l, Value x,
                      Value rowMean) -> Value {
    if (!rowMean)
      return ext(nb, l, x);
    return arith::SubFOp::create(nb, l, ext(nb, l, x), rowMean);
  };
  SmallVector<Value> varInputs = {input};
  SmallVector<AffineMap> varMaps = {identity};
  if (mean) {
    varInputs.push_back(mean);
    varMaps.push_back(kept);
  }
  Value squares = buildReduction(
      b, loc, input, reduced, computeType, zero, varInputs, varMaps,
      [&](OpBuilder &nb, Location l, ValueRange args, Value acc) -> Value {
        Value c = centered(nb, l, args[0], mean ? args[1] : Value());
        return arith::AddFOp::create(nb, l, arith::MulFOp::create(nb, l, c, c),
                                     acc);
      });
  Value rstd = buildKeptMapped(
      b, loc, input, reduced, computeType, squares,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value variance = arith::DivFOp::create(nb, l, args[0], count);
        Value denominator = math::SqrtOp::create(
            nb, l,
            arith::AddFOp::create(nb, l, variance,
                                  floatConstant(nb, l, computeType, epsilon)));
        return arith::DivFOp::create(
            nb, l, floatConstant(nb, l, computeType, 1.0), denominator);
      });
  SmallVector<Value> inputs = {input, rstd, scale};
  SmallVector<AffineMap> maps = {
      identity, kept,
      getBroadcastMap(llvm::cast<RankedTensorType>(scale.getType()), type)};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(
        getBroadcastMap(llvm::cast<RankedTensorType>(bias.getType()), type));
  }
  if (mean) {
    inputs.push_back(mean);
    maps.push_back(kept);
  }
  Type elementType = resultType.getElementType();
  return buildMapped(
      b, loc, input, resultType, inputs, maps,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value c = centered(nb, l, args[0], mean ? args.back() : Value());
        Value value = arith::MulFOp::create(
            nb, l, arith::MulFOp::create(nb, l, c, args[1]),
            ext(nb, l, args[2]));
        if (bias)
          value = arith::AddFOp::create(nb, l, value, ext(nb, l, args[3]));
        return convertFloat(nb, l, value, elementType);
      });
}

static Value getNormBias(LayerNormOp op) { return op.getBias(); }
static Value getNormBias(RmsNormOp) { return {}; }

namespace {

/// Layer norm and RMS norm over dims [axis, rank).
template <typename OpTy> struct NormalizationToLinalg : OpRewritePattern<OpTy> {
  NormalizationToLinalg(MLIRContext *context, bool rms)
      : OpRewritePattern<OpTy>(context), rms(rms) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getInput().getType());
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), type.getRank());
    if (!axis)
      return rewriter.notifyMatchFailure(op, "axis out of range");
    Value bias = getNormBias(op);
    for (Value parameter : {Value(op.getScale()), bias}) {
      std::string reason = checkNormParameter(type, *axis, parameter);
      if (!reason.empty())
        return rewriter.notifyMatchFailure(op, reason);
    }
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    rewriter.replaceOp(
        op, buildNormalization(
                rewriter, op.getLoc(), op.getInput(), op.getScale(), bias,
                *axis, op.getEpsilon().convertToDouble(), rms, resultType));
    return success();
  }

  bool rms;
};

/// `sum = input + skip` (a result of its own, rounded to its type as the
/// unfused add would be), then layer norm of `sum` over the last dim.
struct SkipLayerNormToLinalg : OpRewritePattern<SkipLayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SkipLayerNormOp op,
                                PatternRewriter &rewriter) const override {
    auto sumType = llvm::cast<RankedTensorType>(op.getSum().getType());
    std::string reason = checkBroadcast(
        sumType, {llvm::cast<RankedTensorType>(op.getInput().getType()),
                  llvm::cast<RankedTensorType>(op.getSkip().getType())});
    int64_t axis = sumType.getRank() - 1;
    for (Value parameter : {Value(op.getScale()), Value(op.getBias())})
      if (reason.empty())
        reason = checkNormParameter(sumType, axis, parameter);
    if (!reason.empty())
      return rewriter.notifyMatchFailure(op, reason);
    Location loc = op.getLoc();
    Value sum = buildElementwise(
        rewriter, loc, sumType, ValueRange{op.getInput(), op.getSkip()},
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::AddFOp::create(b, l, args[0], args[1]);
        });
    Value output = buildNormalization(
        rewriter, loc, sum, op.getScale(), op.getBias(), axis,
        op.getEpsilon().convertToDouble(), /*rms=*/false,
        llvm::cast<RankedTensorType>(op.getOutput().getType()));
    rewriter.replaceOp(op, {output, sum});
    return success();
  }
};

} // namespace

void mlir::lmopt::populateLmoptReductionToLinalgPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ReduceToLinalg<ReduceMeanOp>>(context, ReduceKind::Mean);
  patterns.add<ReduceToLinalg<ReduceSumOp>>(context, ReduceKind::Sum);
  patterns.add<ReduceToLinalg<ReduceMaxOp>>(context, ReduceKind::Max);
  patterns.add<ReduceToLinalg<ReduceMinOp>>(context, ReduceKind::Min);
  patterns.add<SoftmaxToLinalg<SoftmaxOp>>(context, /*logarithm=*/false);
  patterns.add<SoftmaxToLinalg<LogSoftmaxOp>>(context, /*logarithm=*/true);
  patterns.add<NormalizationToLinalg<LayerNormOp>>(context, /*rms=*/false);
  patterns.add<NormalizationToLinalg<RmsNormOp>>(context, /*rms=*/true);
  patterns.add<SkipLayerNormToLinalg>(context);
}
