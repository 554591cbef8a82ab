//===- QuantizationToLinalg.cpp - quantization ops to linalg --------------===//
//
// `dequantize`, `quantize`, `dynamic_quantize_linear`, `matmul_integer` and
// casts from unsigned integers, mirroring the reference evaluator's
// QuantizationOps.cpp. arith only takes signless integers, so quantized and
// unsigned tensors are reinterpreted as their signless storage through
// `builtin.unrealized_conversion_cast` (the pass folds cast pairs away) and
// the signedness picks `extui`/`uitofp` or `extsi`/`sitofp`. Sub-byte
// storage (i4/u4) sits one value per byte.
//
// This is the functional path: weights are dequantized to f32 on every run.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Conversion/LmoptToLinalg/LmoptToLinalg.h"

#include "BuildUtils.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::linalg_lowering;

Type mlir::lmopt::getStorageElementType(Type type) {
  if (auto quantType = llvm::dyn_cast<quant::QuantizedType>(type)) {
    unsigned width = quantType.getStorageTypeIntegralWidth();
    return IntegerType::get(type.getContext(),
                            width <= 8 ? 8 : (width <= 16 ? 16 : 32));
  }
  if (auto integer = llvm::dyn_cast<IntegerType>(type);
      integer && !integer.isSignless())
    return IntegerType::get(type.getContext(), integer.getWidth());
  return type;
}

/// `value` (a quantized or unsigned tensor) as its signless storage tensor,
/// looking through a cast from that storage.
static Value toStorage(OpBuilder &b, Location loc, Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  auto storageType = type.clone(getStorageElementType(type.getElementType()));
  if (storageType == type)
    return value;
  if (auto cast = value.getDefiningOp<UnrealizedConversionCastOp>();
      cast && cast->getNumOperands() == 1 &&
      cast->getOperand(0).getType() == storageType)
    return cast->getOperand(0);
  return UnrealizedConversionCastOp::create(b, loc, storageType, value)
      .getResult(0);
}

static Value fromStorage(OpBuilder &b, Location loc, Value storage, Type type) {
  if (storage.getType() == type)
    return storage;
  return UnrealizedConversionCastOp::create(b, loc, type, storage).getResult(0);
}

/// A storage scalar (one byte for widths up to 8) widened to i32, reading
/// the low `width` bits with the given signedness.
static Value extendStorage(OpBuilder &b, Location loc, Value bits,
                           unsigned width, bool isSigned) {
  Type i32 = b.getI32Type();
  unsigned held = bits.getType().getIntOrFloatBitWidth();
  if (width < held) {
    Value shift = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(bits.getType(), held - width));
    bits = arith::ShLIOp::create(b, loc, bits, shift);
    bits = isSigned ? arith::ShRSIOp::create(b, loc, bits, shift).getResult()
                    : arith::ShRUIOp::create(b, loc, bits, shift).getResult();
  }
  if (held == 32)
    return bits;
  return isSigned ? arith::ExtSIOp::create(b, loc, i32, bits).getResult()
                  : arith::ExtUIOp::create(b, loc, i32, bits).getResult();
}

namespace {
/// Where an element's scale and zero point come from: scalars (per
/// tensor), or f32/i32 constant tensors indexed by the element's index on
/// the quantized axis (per axis) or divided by the block sizes (block-wise).
struct QuantParams {
  double scale = 1.0;
  int64_t zeroPoint = 0;
  DenseElementsAttr scales, zeroPoints;
  /// Per tensor dim: the block size (0: the dim is not indexed).
  SmallVector<int64_t> blocks;
};
} // namespace

static FailureOr<QuantParams> getQuantParams(quant::QuantizedType type,
                                             RankedTensorType shape) {
  QuantParams params;
  MLIRContext *context = type.getContext();
  if (auto uniform = llvm::dyn_cast<quant::UniformQuantizedType>(type)) {
    params.scale = uniform.getScale();
    params.zeroPoint = uniform.getZeroPoint();
    return params;
  }
  if (auto perAxis = llvm::dyn_cast<quant::UniformQuantizedPerAxisType>(type)) {
    int64_t axis = perAxis.getQuantizedDimension();
    int64_t count = perAxis.getScales().size();
    if (axis < 0 || axis >= shape.getRank() || shape.getDimSize(axis) != count)
      return failure();
    SmallVector<float> scales(perAxis.getScales().begin(),
                              perAxis.getScales().end());
    SmallVector<int32_t> zeros(perAxis.getZeroPoints().begin(),
                               perAxis.getZeroPoints().end());
    params.scales = DenseElementsAttr::get(
        RankedTensorType::get({count}, Float32Type::get(context)),
        ArrayRef<float>(scales));
    params.zeroPoints = DenseElementsAttr::get(
        RankedTensorType::get({count}, IntegerType::get(context, 32)),
        ArrayRef<int32_t>(zeros));
    params.blocks.assign(shape.getRank(), 0);
    params.blocks[axis] = 1;
    return params;
  }
  auto subChannel = llvm::dyn_cast<quant::UniformQuantizedSubChannelType>(type);
  if (!subChannel)
    return failure();
  auto paramShape =
      llvm::cast<ShapedType>(subChannel.getScales().getType()).getShape();
  if (static_cast<int64_t>(paramShape.size()) != shape.getRank())
    return failure();
  // An empty dim has no block to index (and would divide by zero).
  if (llvm::is_contained(shape.getShape(), 0))
    return failure();
  params.blocks.assign(shape.getShape().begin(), shape.getShape().end());
  for (auto [dim, size] : llvm::zip(subChannel.getQuantizedDimensions(),
                                    subChannel.getBlockSizes())) {
    if (dim < 0 || dim >= shape.getRank() || size <= 0)
      return failure();
    params.blocks[dim] = size;
  }
  for (auto [dim, size] : llvm::enumerate(shape.getShape()))
    if ((size + params.blocks[dim] - 1) / params.blocks[dim] != paramShape[dim])
      return failure();
  SmallVector<float> scales;
  for (APFloat scale : subChannel.getScales().getValues<APFloat>()) {
    bool losesInfo = false;
    scale.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    scales.push_back(scale.convertToFloat());
  }
  SmallVector<int32_t> zeros;
  for (const APInt &zero : subChannel.getZeroPoints().getValues<APInt>())
    zeros.push_back(subChannel.isSigned() ? zero.getSExtValue()
                                          : zero.getZExtValue());
  params.scales = DenseElementsAttr::get(
      RankedTensorType::get(paramShape, Float32Type::get(context)),
      ArrayRef<float>(scales));
  params.zeroPoints = DenseElementsAttr::get(
      RankedTensorType::get(paramShape, IntegerType::get(context, 32)),
      ArrayRef<int32_t>(zeros));
  return params;
}

/// The element's (f32 scale, i32 zero point), built inside a generic body.
static std::pair<Value, Value> buildParams(OpBuilder &b, Location loc,
                                           const QuantParams &params,
                                           Value scalesTensor,
                                           Value zerosTensor) {
  if (!params.scales)
    return {arith::ConstantOp::create(
                b, loc, b.getF32FloatAttr(static_cast<float>(params.scale))),
            arith::ConstantOp::create(b, loc,
                                      b.getI32IntegerAttr(params.zeroPoint))};
  SmallVector<Value> indices;
  for (auto [dim, block] : llvm::enumerate(params.blocks)) {
    if (block == 0)
      continue;
    Value index = linalg::IndexOp::create(b, loc, dim);
    if (block > 1)
      index = arith::DivUIOp::create(
          b, loc, index, arith::ConstantIndexOp::create(b, loc, block));
    indices.push_back(index);
  }
  return {tensor::ExtractOp::create(b, loc, scalesTensor, indices),
          tensor::ExtractOp::create(b, loc, zerosTensor, indices)};
}

/// One parallel generic over `resultType` reading `input`
/// elementwise, with the parameter tensors materialized as constants.
static Value buildQuantGeneric(
    OpBuilder &b, Location loc, RankedTensorType resultType, Value input,
    const QuantParams &params,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)> body) {
  Value scalesTensor, zerosTensor;
  if (params.scales) {
    scalesTensor = arith::ConstantOp::create(b, loc, params.scales);
    zerosTensor = arith::ConstantOp::create(b, loc, params.zeroPoints);
  }
  // Dynamic dims (bounded dynamic shapes) take their sizes from the input.
  Value init =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, input),
                              resultType.getElementType());
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{input}, ValueRange{init},
             maps, iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               auto [scale, zero] = buildParams(nested, nestedLoc, params,
                                                scalesTensor, zerosTensor);
               linalg::YieldOp::create(
                   nested, nestedLoc,
                   body(nested, nestedLoc, args[0], scale, zero));
             })
      .getResult(0);
}

namespace {

/// `(storage - zero_point) * scale` in f32, per tensor, axis or block.
struct DequantizeToLinalg : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    auto quantType =
        llvm::dyn_cast<quant::QuantizedType>(inputType.getElementType());
    if (!quantType)
      return rewriter.notifyMatchFailure(op, "operand is not quantized");
    if (quantType.getStorageTypeIntegralWidth() > 32)
      return rewriter.notifyMatchFailure(op, "storage wider than 32 bits");
    FailureOr<QuantParams> params = getQuantParams(quantType, inputType);
    if (failed(params))
      return rewriter.notifyMatchFailure(op, "unsupported quantized type");
    Location loc = op.getLoc();
    Value storage = toStorage(rewriter, loc, op.getInput());
    unsigned width = quantType.getStorageTypeIntegralWidth();
    bool isSigned = quantType.isSigned();
    Type elementType = resultType.getElementType();
    Value result = buildQuantGeneric(
        rewriter, loc, resultType, storage, *params,
        [&](OpBuilder &b, Location l, Value bits, Value scale, Value zero) {
          Value q = extendStorage(b, l, bits, width, isSigned);
          Value centered = arith::SubIOp::create(b, l, q, zero);
          Value real = arith::SIToFPOp::create(b, l, b.getF32Type(), centered);
          return convertFloat(b, l, arith::MulFOp::create(b, l, real, scale),
                              elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// ONNX QuantizeLinear: round half to even, add the zero point, saturate.
struct QuantizeToLinalg : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    auto quantType =
        llvm::dyn_cast<quant::QuantizedType>(resultType.getElementType());
    if (!quantType)
      return rewriter.notifyMatchFailure(op, "result is not quantized");
    if (quantType.getStorageTypeIntegralWidth() > 32)
      return rewriter.notifyMatchFailure(op, "storage wider than 32 bits");
    FailureOr<QuantParams> params = getQuantParams(quantType, resultType);
    if (failed(params))
      return rewriter.notifyMatchFailure(op, "unsupported quantized type");
    Location loc = op.getLoc();
    Type storageType = getStorageElementType(quantType);
    auto storageTensor = resultType.clone(storageType);
    double lo = static_cast<double>(quantType.getStorageTypeMin());
    double hi = static_cast<double>(quantType.getStorageTypeMax());
    Value storage = buildQuantGeneric(
        rewriter, loc, storageTensor, op.getInput(), *params,
        [&](OpBuilder &b, Location l, Value x, Value scale, Value zero) {
          Type f32 = b.getF32Type();
          x = convertFloat(b, l, x, f32);
          Value scaled = math::RoundEvenOp::create(
              b, l, arith::DivFOp::create(b, l, x, scale));
          Value shifted = arith::AddFOp::create(
              b, l, scaled, arith::SIToFPOp::create(b, l, f32, zero));
          Value clamped = arith::MinimumFOp::create(
              b, l,
              arith::MaximumFOp::create(
                  b, l, shifted,
                  arith::ConstantOp::create(b, l, b.getF32FloatAttr(lo))),
              arith::ConstantOp::create(b, l, b.getF32FloatAttr(hi)));
          Value wide = arith::FPToSIOp::create(b, l, b.getI64Type(), clamped);
          return arith::TruncIOp::create(b, l, storageType, wide).getResult();
        });
    rewriter.replaceOp(op, fromStorage(rewriter, loc, storage, resultType));
    return success();
  }
};

/// ONNX DynamicQuantizeLinear: the range [min(0, min x), max(0, max x)]
/// maps to [0, 255]; an all-zero input gets scale 0, zero point 0.
struct DynamicQuantizeLinearToLinalg
    : OpRewritePattern<DynamicQuantizeLinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DynamicQuantizeLinearOp op,
                                PatternRewriter &rewriter) const override {
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    if (!inputType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Type i8 = rewriter.getI8Type();
    int64_t rank = inputType.getRank();
    auto f32Const = [&](OpBuilder &b, Location l, double v) -> Value {
      return arith::ConstantOp::create(b, l, b.getF32FloatAttr(v));
    };

    // min and max, both starting from 0.
    auto scalarType = RankedTensorType::get({}, f32);
    Value zeroScalar =
        linalg::FillOp::create(
            rewriter, loc, f32Const(rewriter, loc, 0.0),
            tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{}, f32)
                .getResult())
            .getResult(0);
    SmallVector<AffineMap> maps{
        rewriter.getMultiDimIdentityMap(rank),
        AffineMap::get(rank, 0, {}, rewriter.getContext()),
        AffineMap::get(rank, 0, {}, rewriter.getContext())};
    SmallVector<utils::IteratorType> reduction(rank,
                                               utils::IteratorType::reduction);
    auto range = linalg::GenericOp::create(
        rewriter, loc, TypeRange{scalarType, scalarType},
        ValueRange{op.getInput()}, ValueRange{zeroScalar, zeroScalar}, maps,
        reduction, [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::MinimumFOp::create(b, l, args[1], args[0]),
                         arith::MaximumFOp::create(b, l, args[2], args[0])});
        });
    Value min = tensor::ExtractOp::create(rewriter, loc, range.getResult(0),
                                          ValueRange{});
    Value max = tensor::ExtractOp::create(rewriter, loc, range.getResult(1),
                                          ValueRange{});
    Value zero = f32Const(rewriter, loc, 0.0);
    Value scale = arith::DivFOp::create(
        rewriter, loc, arith::SubFOp::create(rewriter, loc, max, min),
        f32Const(rewriter, loc, 255.0));
    Value isZero = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OEQ, scale, zero);
    Value safeScale = arith::SelectOp::create(
        rewriter, loc, isZero, f32Const(rewriter, loc, 1.0), scale);
    Value zeroPoint = math::RoundEvenOp::create(
        rewriter, loc,
        arith::MinimumFOp::create(
            rewriter, loc,
            arith::MaximumFOp::create(
                rewriter, loc,
                arith::DivFOp::create(rewriter, loc,
                                      arith::NegFOp::create(rewriter, loc, min),
                                      safeScale),
                zero),
            f32Const(rewriter, loc, 255.0)));
    zeroPoint = arith::SelectOp::create(rewriter, loc, isZero, zero, zeroPoint);

    auto outputType = inputType.clone(i8);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, inputType.getShape(), i8);
    SmallVector<AffineMap> identity(2, rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    Value output =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{outputType}, ValueRange{op.getInput()},
            ValueRange{init}, identity, parallel,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value q = arith::AddFOp::create(
                  b, l,
                  math::RoundEvenOp::create(
                      b, l, arith::DivFOp::create(b, l, args[0], safeScale)),
                  zeroPoint);
              q = arith::MinimumFOp::create(
                  b, l, arith::MaximumFOp::create(b, l, q, f32Const(b, l, 0)),
                  f32Const(b, l, 255.0));
              linalg::YieldOp::create(
                  b, l, arith::FPToUIOp::create(b, l, i8, q).getResult());
            })
            .getResult(0);
    Value scaleTensor =
        tensor::FromElementsOp::create(rewriter, loc, scalarType, scale);
    Value zeroTensor = tensor::FromElementsOp::create(
        rewriter, loc, RankedTensorType::get({}, i8),
        arith::FPToUIOp::create(rewriter, loc, i8, zeroPoint).getResult());
    rewriter.replaceOp(
        op,
        {fromStorage(rewriter, loc, output, op.getOutput().getType()),
         scaleTensor,
         fromStorage(rewriter, loc, zeroTensor, op.getZeroPoint().getType())});
    return success();
  }
};

/// ONNX MatMulInteger: `(a - a_zero) x (b - b_zero)` accumulated in i32.
/// `b` is a matrix or has `a`'s batch dims; zero points are scalars or one
/// per row of `a` / column of `b`.
struct MatMulIntegerToLinalg : OpRewritePattern<MatMulIntegerOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulIntegerOp op,
                                PatternRewriter &rewriter) const override {
    auto aType = llvm::cast<RankedTensorType>(op.getA().getType());
    auto bType = llvm::cast<RankedTensorType>(op.getB().getType());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    if (!aType.hasStaticShape() || !bType.hasStaticShape() ||
        !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t rank = resultType.getRank();
    if (aType.getRank() != rank || rank < 2)
      return rewriter.notifyMatchFailure(op, "a must have the result's rank");
    if (bType.getRank() != 2 &&
        (bType.getRank() != rank ||
         aType.getShape().drop_back(2) != bType.getShape().drop_back(2)))
      return rewriter.notifyMatchFailure(
          op, "b must be a matrix or share a's batch dims");
    MLIRContext *context = rewriter.getContext();
    Location loc = op.getLoc();
    // Iteration space: batch..., m, n, k.
    int64_t batch = rank - 2;
    AffineExpr m = getAffineDimExpr(batch, context);
    AffineExpr n = getAffineDimExpr(batch + 1, context);
    AffineExpr k = getAffineDimExpr(batch + 2, context);
    SmallVector<AffineExpr> batchDims;
    for (int64_t i = 0; i < batch; ++i)
      batchDims.push_back(getAffineDimExpr(i, context));
    auto withBatch = [&](ArrayRef<AffineExpr> tail, bool hasBatch) {
      SmallVector<AffineExpr> exprs;
      if (hasBatch)
        exprs.append(batchDims);
      exprs.append(tail.begin(), tail.end());
      return AffineMap::get(rank + 1, 0, exprs, context);
    };
    SmallVector<Value> inputs{toStorage(rewriter, loc, op.getA()),
                              toStorage(rewriter, loc, op.getB())};
    SmallVector<AffineMap> maps{withBatch({m, k}, true),
                                withBatch({k, n}, bType.getRank() != 2)};
    SmallVector<bool> isSigned{aType.getElementType().isSignlessInteger(),
                               bType.getElementType().isSignlessInteger()};
    // Zero point maps: scalar, per row of a (m) or per column of b (n).
    auto addZero = [&](Value zeroPoint, int64_t perSize,
                       AffineExpr perDim) -> LogicalResult {
      if (!zeroPoint)
        return success();
      auto type = llvm::cast<RankedTensorType>(zeroPoint.getType());
      if (!type.hasStaticShape())
        return failure();
      AffineMap map;
      if (type.getNumElements() == 1)
        map = AffineMap::get(
            rank + 1, 0,
            SmallVector<AffineExpr>(type.getRank(),
                                    getAffineConstantExpr(0, context)),
            context);
      else if (type.getRank() == 1 && type.getDimSize(0) == perSize)
        map = AffineMap::get(rank + 1, 0, {perDim}, context);
      else
        return failure();
      inputs.push_back(toStorage(rewriter, loc, zeroPoint));
      maps.push_back(map);
      isSigned.push_back(type.getElementType().isSignlessInteger());
      return success();
    };
    bool hasAZero = op.getAZeroPoint() != nullptr;
    bool hasBZero = op.getBZeroPoint() != nullptr;
    if (failed(addZero(op.getAZeroPoint(), aType.getDimSize(rank - 2), m)) ||
        failed(addZero(op.getBZeroPoint(), bType.getShape().back(), n)))
      return rewriter.notifyMatchFailure(op, "unsupported zero point shape");
    maps.push_back(withBatch({m, n}, true));
    SmallVector<utils::IteratorType> iterators(rank + 1,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    Type i32 = rewriter.getI32Type();
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getI32IntegerAttr(0));
    Value init =
        linalg::FillOp::create(
            rewriter, loc, zero,
            tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), i32)
                .getResult())
            .getResult(0);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          auto widen = [&](unsigned i) {
            return extendStorage(b, l, args[i], 8, isSigned[i]);
          };
          Value a = widen(0), bValue = widen(1);
          unsigned next = 2;
          if (hasAZero)
            a = arith::SubIOp::create(b, l, a, widen(next++));
          if (hasBZero)
            bValue = arith::SubIOp::create(b, l, bValue, widen(next++));
          Value product = arith::MulIOp::create(b, l, a, bValue);
          linalg::YieldOp::create(
              b, l,
              arith::AddIOp::create(b, l, args.back(), product).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Cast from an unsigned (or explicitly signed) integer tensor, which the
/// elementwise cast leaves: `uitofp`/`extui`/`trunci` on the storage.
struct CastFromUnsignedToLinalg : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    auto from = llvm::dyn_cast<IntegerType>(inputType.getElementType());
    Type to = resultType.getElementType();
    if (!from || from.isSignless())
      return rewriter.notifyMatchFailure(op, "operand is signless");
    if (!to.isSignlessInteger() && !llvm::isa<FloatType>(to))
      return rewriter.notifyMatchFailure(op, "result is not signless or float");
    if (to.isInteger(1) || from.getWidth() > 64)
      return rewriter.notifyMatchFailure(op, "unsupported cast");
    Location loc = op.getLoc();
    Value storage = toStorage(rewriter, loc, op.getInput());
    bool isUnsigned = from.isUnsigned();
    unsigned width = from.getWidth();
    Value result = buildElementwise(
        rewriter, loc, resultType, ValueRange{storage},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value x = args[0];
          if (llvm::isa<FloatType>(to))
            return isUnsigned
                       ? arith::UIToFPOp::create(b, l, to, x).getResult()
                       : arith::SIToFPOp::create(b, l, to, x).getResult();
          unsigned toWidth = to.getIntOrFloatBitWidth();
          if (toWidth == width)
            return x;
          if (toWidth < width)
            return arith::TruncIOp::create(b, l, to, x).getResult();
          return isUnsigned ? arith::ExtUIOp::create(b, l, to, x).getResult()
                            : arith::ExtSIOp::create(b, l, to, x).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `quant.scast` between a quantized type and the signless integer it is
/// stored in: a reinterpretation, folded with its neighbours. Sub-byte
/// storage (i4 to u4) is left: the plan builder makes those aliases.
struct StorageCastToLinalg : OpRewritePattern<quant::StorageCastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(quant::StorageCastOp op,
                                PatternRewriter &rewriter) const override {
    auto inputType = llvm::dyn_cast<RankedTensorType>(op.getInput().getType());
    auto resultType = llvm::dyn_cast<RankedTensorType>(op.getType());
    if (!inputType || !resultType)
      return rewriter.notifyMatchFailure(op, "not a ranked tensor cast");
    Type in = inputType.getElementType(), out = resultType.getElementType();
    Type integer = llvm::isa<quant::QuantizedType>(in) ? out : in;
    if (getStorageElementType(in) != integer ||
        getStorageElementType(out) != integer)
      return rewriter.notifyMatchFailure(op, "storage is narrower than a byte");
    rewriter.replaceOpWithNewOp<UnrealizedConversionCastOp>(op, resultType,
                                                            op.getInput());
    return success();
  }
};

} // namespace

void mlir::lmopt::populateLmoptQuantizationToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DequantizeToLinalg, QuantizeToLinalg,
               DynamicQuantizeLinearToLinalg, MatMulIntegerToLinalg,
               CastFromUnsignedToLinalg, StorageCastToLinalg>(
      patterns.getContext());
}

void mlir::lmopt::foldStorageCasts(Operation *root) {
  // Storage -> quantized -> storage pairs (from kernel boundaries and the
  // patterns above) cancel; casts left without users are erased.
  SmallVector<UnrealizedConversionCastOp> casts;
  root->walk([&](UnrealizedConversionCastOp cast) { casts.push_back(cast); });
  for (UnrealizedConversionCastOp cast : casts) {
    if (cast->getNumOperands() != 1 || cast->getNumResults() != 1)
      continue;
    auto inner =
        cast->getOperand(0).getDefiningOp<UnrealizedConversionCastOp>();
    if (inner && inner->getNumOperands() == 1 &&
        inner->getOperand(0).getType() == cast.getResult(0).getType())
      cast.getResult(0).replaceAllUsesWith(inner->getOperand(0));
  }
  for (UnrealizedConversionCastOp cast : llvm::reverse(casts))
    if (cast->use_empty())
      cast->erase();
}
