//===- IndexingToLinalg.cpp - mod, range, cumsum, gathers -----------------===//
//
// The ops of the dialect's "indexing, scans and integer arithmetic" group
// that models compute position ids and masks with (roberta's cumsum of the
// mask, the range of an ONNX Runtime export, the dynamo exports' GatherND
// of the attention mask), each one `linalg.generic`. Semantics
// follow the reference evaluator; where the evaluator reports an error for
// a value (a zero divisor, an index out of range), the kernel, which cannot,
// produces a defined value instead and says so below.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Conversion/LmoptToLinalg/LmoptToLinalg.h"

#include "BuildUtils.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Format/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::linalg_lowering;

static Value intConstant(OpBuilder &b, Location loc, Type type, int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

static SmallVector<utils::IteratorType> getParallel(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// An `index` into a dim of `size` > 0 (values of the index's type, with
/// `last` = size - 1) mapped into [0, size): negative counts from the end,
/// and what is still outside is clamped into it (the evaluator rejects such
/// an index; a kernel cannot report it and must not read out of bounds).
static Value buildClampedIndex(OpBuilder &b, Location loc, Value index,
                               Value size, Value last) {
  Value zero = intConstant(b, loc, index.getType(), 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  index = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, index, size), index);
  index = arith::MaxSIOp::create(b, loc, index, zero);
  return arith::MinSIOp::create(b, loc, index, last);
}

static Value buildClampedIndex(OpBuilder &b, Location loc, Value index,
                               int64_t size) {
  Type type = index.getType();
  return buildClampedIndex(b, loc, index, intConstant(b, loc, type, size),
                           intConstant(b, loc, type, size - 1));
}

//===----------------------------------------------------------------------===//
// Mod
//===----------------------------------------------------------------------===//

/// Integer remainder with the sign of the dividend (`fmod`) or, after the
/// correction, of the divisor (Python's `%`). A divisor of 0 gives 0, and so
/// does -1 (whose `remsi` of the minimum value would trap).
static Value buildIntMod(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         bool fmod) {
  Type type = lhs.getType();
  Value zero = intConstant(b, loc, type, 0);
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs, zero);
  Value isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           rhs, intConstant(b, loc, type, -1));
  Value unsafe = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  Value divisor = arith::SelectOp::create(b, loc, unsafe,
                                          intConstant(b, loc, type, 1), rhs);
  Value rem = arith::RemSIOp::create(b, loc, lhs, divisor);
  if (fmod)
    return rem;
  Value nonZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rem, zero);
  Value remNegative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem, zero);
  Value rhsNegative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rhs, zero);
  Value signsDiffer = arith::XOrIOp::create(b, loc, remNegative, rhsNegative);
  Value fix = arith::AndIOp::create(b, loc, nonZero, signsDiffer);
  return arith::SelectOp::create(b, loc, fix,
                                 arith::AddIOp::create(b, loc, rem, rhs), rem);
}

namespace {

/// Elementwise with numpy broadcasting, like the binary ops. Floats need
/// `fmod` (the verifier requires it) and take `arith.remf` (C's fmod).
struct ModToLinalg : OpRewritePattern<ModOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ModOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    bool isFloat = llvm::isa<FloatType>(elementType);
    if (elementType.isInteger(1) || (isFloat && !op.getFmod()))
      return rewriter.notifyMatchFailure(op, "unsupported element type");
    std::string reason = checkBroadcast(
        resultType, {op.getLhs().getType(), op.getRhs().getType()});
    if (!reason.empty())
      return rewriter.notifyMatchFailure(op, reason);
    bool fmod = op.getFmod();
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, op->getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          if (!isFloat)
            return buildIntMod(b, loc, args[0], args[1], fmod);
          Type compute = getComputeType(elementType);
          Value lhs = convertFloat(b, loc, args[0], compute);
          Value rhs = convertFloat(b, loc, args[1], compute);
          Value rem = arith::RemFOp::create(b, loc, lhs, rhs);
          return convertFloat(b, loc, rem, elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Range
//===----------------------------------------------------------------------===//

/// `start + i * delta` for each index of the (static) result; start and
/// delta may be computed at run time, the length is the result type's.
struct RangeToLinalg : OpRewritePattern<RangeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RangeOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    if (!resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "result length is dynamic");
    Type elementType = resultType.getElementType();
    if (elementType.isInteger(1))
      return rewriter.notifyMatchFailure(op, "unsupported element type");
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    AffineMap scalar = AffineMap::get(1, 0, {}, context);
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         elementType);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType},
        ValueRange{op.getStart(), op.getDelta()}, ValueRange{init},
        {scalar, scalar, rewriter.getMultiDimIdentityMap(1)}, getParallel(1),
        [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
          Value index = linalg::IndexOp::create(b, nestedLoc, 0);
          Value i64 =
              arith::IndexCastOp::create(b, nestedLoc, b.getI64Type(), index);
          Value step;
          if (llvm::isa<FloatType>(elementType))
            step = arith::SIToFPOp::create(b, nestedLoc, elementType, i64);
          else if (elementType.getIntOrFloatBitWidth() < 64)
            step = arith::TruncIOp::create(b, nestedLoc, elementType, i64);
          else
            step = i64;
          Value value;
          if (llvm::isa<FloatType>(elementType))
            value = arith::AddFOp::create(
                b, nestedLoc, args[0],
                arith::MulFOp::create(b, nestedLoc, step, args[1]));
          else
            value = arith::AddIOp::create(
                b, nestedLoc, args[0],
                arith::MulIOp::create(b, nestedLoc, step, args[1]));
          linalg::YieldOp::create(b, nestedLoc, value);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

/// A reduction over one extra dim `k` along the axis: element `i` adds the
/// inputs at the `k` that `exclusive` and `reverse` select (`k <= i`,
/// `k < i`, `k >= i`, `k > i`). Quadratic in the axis length, which is
/// small for the position ids it serves (a sequence), and one linalg op the
/// later passes can tile; sums are in the element type.
struct CumSumToLinalg : OpRewritePattern<CumSumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CumSumOp op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Type elementType = type.getElementType();
    if (elementType.isInteger(1))
      return rewriter.notifyMatchFailure(op, "unsupported element type");
    int64_t rank = type.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return rewriter.notifyMatchFailure(op, "axis out of range");
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    // Iteration dims: the result's, then k.
    SmallVector<AffineExpr> inputExprs, outputExprs;
    for (int64_t i = 0; i < rank; ++i) {
      outputExprs.push_back(getAffineDimExpr(i, context));
      inputExprs.push_back(getAffineDimExpr(i == *axis ? rank : i, context));
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank + 1, 0, inputExprs, context),
        AffineMap::get(rank + 1, 0, outputExprs, context)};
    SmallVector<utils::IteratorType> iterators = getParallel(rank);
    iterators.push_back(utils::IteratorType::reduction);

    Value input = op.getInput();
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, input),
        elementType);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getZeroAttr(elementType));
    Value init = linalg::FillOp::create(rewriter, loc, ValueRange{zero}, empty)
                     .getResult(0);
    arith::CmpIPredicate predicate =
        op.getReverse() ? (op.getExclusive() ? arith::CmpIPredicate::ugt
                                             : arith::CmpIPredicate::uge)
                        : (op.getExclusive() ? arith::CmpIPredicate::ult
                                             : arith::CmpIPredicate::ule);
    bool isFloat = llvm::isa<FloatType>(elementType);
    int64_t axisDim = *axis;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, input, init, maps, iterators,
        [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
          Value i = linalg::IndexOp::create(b, nestedLoc, axisDim);
          Value k = linalg::IndexOp::create(b, nestedLoc, rank);
          Value taken = arith::CmpIOp::create(b, nestedLoc, predicate, k, i);
          Value zeroValue = arith::ConstantOp::create(
              b, nestedLoc, b.getZeroAttr(elementType));
          Value addend =
              arith::SelectOp::create(b, nestedLoc, taken, args[0], zeroValue);
          Value sum = isFloat
                          ? arith::AddFOp::create(b, nestedLoc, args[1], addend)
                                .getResult()
                          : arith::AddIOp::create(b, nestedLoc, args[1], addend)
                                .getResult();
          linalg::YieldOp::create(b, nestedLoc, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GatherElements
//===----------------------------------------------------------------------===//

/// A generic over the indices reading `data` with `tensor.extract` at the
/// output's own position, the axis replaced by the index (negative counts
/// from the end). Indices outside the axis are clamped into it
/// (`buildClampedIndex`). Static shapes only, so that indices fit data
/// off the axis by construction.
struct GatherElementsToLinalg : OpRewritePattern<GatherElementsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatherElementsOp op,
                                PatternRewriter &rewriter) const override {
    auto dataType = llvm::cast<RankedTensorType>(op.getData().getType());
    auto indicesType = llvm::cast<RankedTensorType>(op.getIndices().getType());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    int64_t rank = dataType.getRank();
    if (!dataType.hasStaticShape() || !indicesType.hasStaticShape() ||
        !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis || indicesType.getRank() != rank)
      return rewriter.notifyMatchFailure(op, "axis or indices rank invalid");
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && indicesType.getDimSize(d) > dataType.getDimSize(d))
        return rewriter.notifyMatchFailure(op, "indices exceed data in dim " +
                                                   std::to_string(d));
    if (dataType.getDimSize(*axis) == 0)
      return rewriter.notifyMatchFailure(op, "gathering from an empty axis");

    Location loc = op.getLoc();
    Value data = op.getData();
    int64_t axisDim = *axis;
    int64_t axisSize = dataType.getDimSize(axisDim);
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType());
    SmallVector<AffineMap> maps(2, rewriter.getMultiDimIdentityMap(rank));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, op.getIndices(), init, maps,
        getParallel(rank),
        [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
          Value index = buildClampedIndex(b, nestedLoc, args[0], axisSize);
          SmallVector<Value> position;
          for (int64_t d = 0; d < rank; ++d)
            position.push_back(
                d == axisDim
                    ? arith::IndexCastOp::create(b, nestedLoc, b.getIndexType(),
                                                 index)
                          .getResult()
                    : linalg::IndexOp::create(b, nestedLoc, d).getResult());
          Value value = tensor::ExtractOp::create(b, nestedLoc, data, position);
          linalg::YieldOp::create(b, nestedLoc, value);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GatherND
//===----------------------------------------------------------------------===//

/// A generic over the output, which is `indices.shape[:-1] +
/// data.shape[batch_dims + r:]`. At each position the body reads the `r`
/// entries of the index tuple with `tensor.extract` (indices at the output's
/// leading position, then `k`), maps each into its data dim
/// (`buildClampedIndex`), and extracts `data` at the batch dims, the tuple
/// and the output's trailing dims. Dims may be known only at run time
/// (bounded shapes): sizes then come from `tensor.dim`; batch dims that are
/// static on both sides must match and no static indexed dim may be empty.
struct GatherNDToLinalg : OpRewritePattern<GatherNDOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatherNDOp op,
                                PatternRewriter &rewriter) const override {
    auto dataType = llvm::cast<RankedTensorType>(op.getData().getType());
    auto indicesType = llvm::cast<RankedTensorType>(op.getIndices().getType());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> dataShape = dataType.getShape();
    ArrayRef<int64_t> indicesShape = indicesType.getShape();
    int64_t batchDims = op.getBatchDims();
    int64_t tuple = indicesShape.back();
    if (ShapedType::isDynamic(tuple))
      return rewriter.notifyMatchFailure(op, "dynamic index tuple length");
    for (int64_t d = 0; d < batchDims; ++d)
      if (!ShapedType::isDynamic(indicesShape[d]) &&
          !ShapedType::isDynamic(dataShape[d]) &&
          indicesShape[d] != dataShape[d])
        return rewriter.notifyMatchFailure(
            op, "batch dim " + std::to_string(d) + " differs: " +
                    std::to_string(indicesShape[d]) + " in indices, " +
                    std::to_string(dataShape[d]) + " in data");
    for (int64_t k = 0; k < tuple; ++k)
      if (dataShape[batchDims + k] == 0)
        return rewriter.notifyMatchFailure(
            op, "gathering from empty dim " + std::to_string(batchDims + k));

    Location loc = op.getLoc();
    Value data = op.getData();
    Value indices = op.getIndices();
    int64_t leading = indicesType.getRank() - 1;
    int64_t dataRank = dataType.getRank();
    int64_t rank = resultType.getRank();
    // The output's leading dims are the indices', its trailing ones data's.
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!resultType.isDynamicDim(d)) {
        sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(d)));
        continue;
      }
      bool fromIndices = d < leading;
      sizes.push_back(tensor::DimOp::create(
                          rewriter, loc, fromIndices ? indices : data,
                          fromIndices ? d : d - leading + batchDims + tuple)
                          .getResult());
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         resultType.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{}, init,
        rewriter.getMultiDimIdentityMap(rank), getParallel(rank),
        [&](OpBuilder &b, Location nestedLoc, ValueRange) {
          SmallVector<Value> outputIndex;
          for (int64_t d = 0; d < rank; ++d)
            outputIndex.push_back(linalg::IndexOp::create(b, nestedLoc, d));
          SmallVector<Value> position(outputIndex.begin(),
                                      outputIndex.begin() + batchDims);
          SmallVector<Value> tupleEntry(outputIndex.begin(),
                                        outputIndex.begin() + leading);
          tupleEntry.push_back(Value());
          for (int64_t k = 0; k < tuple; ++k) {
            tupleEntry.back() = arith::ConstantIndexOp::create(b, nestedLoc, k);
            Value index =
                tensor::ExtractOp::create(b, nestedLoc, indices, tupleEntry);
            int64_t dim = dataShape[batchDims + k];
            if (ShapedType::isDynamic(dim)) {
              Type type = index.getType();
              Value size = arith::IndexCastOp::create(
                  b, nestedLoc, type,
                  tensor::DimOp::create(b, nestedLoc, data, batchDims + k));
              Value last = arith::SubIOp::create(
                  b, nestedLoc, size, intConstant(b, nestedLoc, type, 1));
              index = buildClampedIndex(b, nestedLoc, index, size, last);
            } else {
              index = buildClampedIndex(b, nestedLoc, index, dim);
            }
            position.push_back(arith::IndexCastOp::create(
                b, nestedLoc, b.getIndexType(), index));
          }
          for (int64_t d = batchDims + tuple; d < dataRank; ++d)
            position.push_back(outputIndex[leading + d - batchDims - tuple]);
          Value value = tensor::ExtractOp::create(b, nestedLoc, data, position);
          linalg::YieldOp::create(b, nestedLoc, value);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Philox4x32-10 per element, as include/lmopt/Format/Philox.h computes it:
/// counter (row-major index low, high, stream, 0), key (seed low, high).
struct DropoutMaskToLinalg : OpRewritePattern<DropoutMaskOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DropoutMaskOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    int64_t rank = resultType.getRank();
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(
          resultType.isDynamicDim(d)
              ? OpFoldResult(
                    tensor::DimOp::create(rewriter, loc, op.getLike(), d)
                        .getResult())
              : OpFoldResult(rewriter.getIndexAttr(resultType.getDimSize(d))));
    Value init =
        tensor::EmptyOp::create(rewriter, loc, sizes, rewriter.getI1Type());
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    Value seed =
        tensor::ExtractOp::create(rewriter, loc, op.getSeed(), ValueRange{});
    auto c32 = [&](OpBuilder &b, Location l, uint32_t v) -> Value {
      return arith::ConstantOp::create(b, l, b.getI32IntegerAttr(int32_t(v)));
    };
    Value shift32 = arith::ConstantOp::create(rewriter, loc,
                                              rewriter.getI64IntegerAttr(32));
    Value key0 = arith::TruncIOp::create(rewriter, loc, i32, seed);
    Value key1 = arith::TruncIOp::create(
        rewriter, loc, i32,
        arith::ShRUIOp::create(rewriter, loc, seed, shift32));
    float ratio = op.getRatio().convertToFloat();
    auto stream = uint32_t(op.getStream());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{}, ValueRange{init},
        {rewriter.getMultiDimIdentityMap(rank)}, getParallel(rank),
        [&](OpBuilder &b, Location l, ValueRange) {
          // The row-major index of this element.
          Value linear;
          for (int64_t d = 0; d < rank; ++d) {
            Value index = linalg::IndexOp::create(b, l, d);
            if (!linear) {
              linear = index;
              continue;
            }
            Value size = getValueOrCreateConstantIndexOp(b, l, sizes[d]);
            linear = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, linear, size), index);
          }
          Value at =
              linear
                  ? arith::IndexCastUIOp::create(b, l, i64, linear).getResult()
                  : arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0))
                        .getResult();
          Value ctr[4] = {
              arith::TruncIOp::create(b, l, i32, at),
              arith::TruncIOp::create(
                  b, l, i32, arith::ShRUIOp::create(b, l, at, shift32)),
              c32(b, l, stream), c32(b, l, 0)};
          Value key[2] = {key0, key1};
          Value m0 = c32(b, l, ::lmopt::philox::kMultiplier0);
          Value m1 = c32(b, l, ::lmopt::philox::kMultiplier1);
          Value w0 = c32(b, l, ::lmopt::philox::kWeyl0);
          Value w1 = c32(b, l, ::lmopt::philox::kWeyl1);
          for (int round = 0; round < ::lmopt::philox::kRounds; ++round) {
            auto p0 = arith::MulUIExtendedOp::create(b, l, m0, ctr[0]);
            auto p1 = arith::MulUIExtendedOp::create(b, l, m1, ctr[2]);
            Value next0 = arith::XOrIOp::create(
                b, l, arith::XOrIOp::create(b, l, p1.getHigh(), ctr[1]),
                key[0]);
            Value next2 = arith::XOrIOp::create(
                b, l, arith::XOrIOp::create(b, l, p0.getHigh(), ctr[3]),
                key[1]);
            ctr[0] = next0;
            ctr[1] = p1.getLow();
            ctr[2] = next2;
            ctr[3] = p0.getLow();
            key[0] = arith::AddIOp::create(b, l, key[0], w0);
            key[1] = arith::AddIOp::create(b, l, key[1], w1);
          }
          Value top = arith::ShRUIOp::create(b, l, ctr[0], c32(b, l, 8));
          Value uniform = arith::MulFOp::create(
              b, l, arith::UIToFPOp::create(b, l, b.getF32Type(), top),
              arith::ConstantOp::create(b, l,
                                        b.getF32FloatAttr(1.0f / 16777216.0f)));
          Value keep = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OGE, uniform,
              arith::ConstantOp::create(b, l, b.getF32FloatAttr(ratio)));
          linalg::YieldOp::create(b, l, keep);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::lmopt::populateLmoptIndexingToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ModToLinalg, RangeToLinalg, CumSumToLinalg,
               GatherElementsToLinalg, GatherNDToLinalg, DropoutMaskToLinalg>(
      patterns.getContext());
}
