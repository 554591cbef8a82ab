//===- DataMovementToLinalg.cpp - data movement to tensor and linalg ------===//
//
// Split, slice, concat, transpose, expand, the reshapes (reshape, squeeze,
// unsqueeze), identity and constant, mirroring the reference evaluator's
// ShapeOps.cpp. Views stay views: slices become `tensor.extract_slice`,
// reshapes `tensor.collapse_shape`/`expand_shape`, and bufferization decides
// where a copy is needed. Results are cast to the op's own result type where
// the built value knows less (a static dim the op's type states but the
// input's type does not).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Conversion/LmoptToLinalg/LmoptToLinalg.h"

#include "BuildUtils.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::linalg_lowering;

/// `value` as `type`, through a `tensor.cast` when the types differ only in
/// what is known statically.
static Value castTo(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

static SmallVector<OpFoldResult> getZeros(OpBuilder &b, int64_t rank) {
  return SmallVector<OpFoldResult>(rank, b.getIndexAttr(0));
}

static SmallVector<OpFoldResult> getOnes(OpBuilder &b, int64_t rank) {
  return SmallVector<OpFoldResult>(rank, b.getIndexAttr(1));
}

/// `lhs + rhs`, folded when both are static.
static OpFoldResult addSizes(OpBuilder &b, Location loc, OpFoldResult lhs,
                             OpFoldResult rhs) {
  std::optional<int64_t> l = getConstantIntValue(lhs);
  std::optional<int64_t> r = getConstantIntValue(rhs);
  if (l && r)
    return b.getIndexAttr(*l + *r);
  if (l == 0)
    return rhs;
  return arith::AddIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, lhs),
                               getValueOrCreateConstantIndexOp(b, loc, rhs))
      .getResult();
}

//===----------------------------------------------------------------------===//
// Split and slice
//===----------------------------------------------------------------------===//

namespace {

/// Each result is an `extract_slice` of the input along the split axis.
struct SplitToTensor : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    int64_t rank = shapeOf(input).size();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return rewriter.notifyMatchFailure(op, "axis out of range");
    SmallVector<OpFoldResult> offsets = getZeros(rewriter, rank);
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> strides = getOnes(rewriter, rank);
    SmallVector<Value> results;
    int64_t offset = 0;
    for (auto [result, size] :
         llvm::zip_equal(op.getOutputs(), op.getSplitSizes())) {
      offsets[*axis] = rewriter.getIndexAttr(offset);
      sizes[*axis] = rewriter.getIndexAttr(size);
      // An empty piece at the end would start one past the axis, which
      // extract_slice's verifier refuses: it is just an empty tensor.
      Value slice =
          size == 0
              ? tensor::EmptyOp::create(
                    rewriter, loc, sizes,
                    llvm::cast<ShapedType>(input.getType()).getElementType())
                    .getResult()
              : tensor::ExtractSliceOp::create(rewriter, loc, input, offsets,
                                               sizes, strides)
                    .getResult();
      results.push_back(castTo(rewriter, loc, slice, result.getType()));
      offset += size;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

/// A `linalg.generic` copying `source` with the `reversed` dims read back to
/// front.
static Value buildReverse(OpBuilder &b, Location loc, Value source,
                          ArrayRef<bool> reversed) {
  auto type = llvm::cast<RankedTensorType>(source.getType());
  int64_t rank = type.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i) {
    AffineExpr dim = getAffineDimExpr(i, context);
    // Reversed dims are static: the sliced axes are.
    exprs.push_back(reversed[i] ? type.getDimSize(i) - 1 - dim : dim);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, context),
                                 b.getMultiDimIdentityMap(rank)};
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, source), type.getElementType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, source, init, maps, iterators,
             [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               linalg::YieldOp::create(nested, nestedLoc, args[0]);
             })
      .getResult(0);
}

namespace {

/// A strided `extract_slice` over the selected elements; axes with negative
/// steps are sliced from their lowest selected index with the positive
/// stride and then reversed, since a negative stride does not survive the
/// lowering of `memref.subview`.
struct SliceToTensor : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    ArrayRef<int64_t> shape = shapeOf(input);
    int64_t rank = shape.size();
    std::optional<SmallVector<int64_t>> starts =
        getConstantInts(op.getStarts());
    std::optional<SmallVector<int64_t>> ends = getConstantInts(op.getEnds());
    if (!starts || !ends)
      return rewriter.notifyMatchFailure(op, "starts or ends not constant");
    SmallVector<int64_t> axes, steps(starts->size(), 1);
    if (Value axesValue = op.getAxes()) {
      std::optional<SmallVector<int64_t>> values = getConstantInts(axesValue);
      if (!values)
        return rewriter.notifyMatchFailure(op, "axes not constant");
      axes = *values;
    } else {
      axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
    }
    if (Value stepsValue = op.getSteps()) {
      std::optional<SmallVector<int64_t>> values = getConstantInts(stepsValue);
      if (!values)
        return rewriter.notifyMatchFailure(op, "steps not constant");
      steps = *values;
    }
    if (ends->size() != starts->size() || axes.size() != starts->size() ||
        steps.size() != starts->size())
      return rewriter.notifyMatchFailure(op, "bounds of different lengths");

    // Resolve every axis before building anything: a rejected op must be
    // left untouched.
    SmallVector<std::optional<SliceAxis>> resolved(rank);
    for (auto [i, axisValue] : llvm::enumerate(axes)) {
      std::optional<int64_t> axis = normalizeAxis(axisValue, rank);
      if (!axis || resolved[*axis])
        return rewriter.notifyMatchFailure(op, "axis out of range or repeated");
      if (ShapedType::isDynamic(shape[*axis]))
        return rewriter.notifyMatchFailure(
            op, "sliced axis " + std::to_string(*axis) + " is dynamic");
      if (steps[i] == 0)
        return rewriter.notifyMatchFailure(op, "step is 0");
      resolved[*axis] =
          resolveSliceAxis(shape[*axis], (*starts)[i], (*ends)[i], steps[i]);
    }

    SmallVector<OpFoldResult> offsets = getZeros(rewriter, rank);
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> strides = getOnes(rewriter, rank);
    SmallVector<bool> reversed(rank, false);
    for (auto [axis, slice] : llvm::enumerate(resolved)) {
      if (!slice)
        continue;
      int64_t lowest = slice->start;
      if (slice->step < 0 && slice->count > 0) {
        lowest += (slice->count - 1) * slice->step;
        reversed[axis] = slice->count > 1;
      }
      offsets[axis] = rewriter.getIndexAttr(lowest);
      sizes[axis] = rewriter.getIndexAttr(slice->count);
      strides[axis] = rewriter.getIndexAttr(std::abs(slice->step));
    }
    Value result = tensor::ExtractSliceOp::create(rewriter, loc, input, offsets,
                                                  sizes, strides);
    if (llvm::is_contained(reversed, true))
      result = buildReverse(rewriter, loc, result, reversed);
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Concat, transpose, expand
//===----------------------------------------------------------------------===//

/// Emits `cf.assert`s that the inputs of a concat agree off `axis` where a
/// dim is dynamic (the verifier has compared the static ones).
static void buildOffAxisDimChecks(OpBuilder &b, Location loc, ValueRange inputs,
                                  int64_t axis) {
  Value first = inputs.front();
  for (Value input : inputs.drop_front()) {
    for (auto [i, size] : llvm::enumerate(shapeOf(input))) {
      if (static_cast<int64_t>(i) == axis ||
          (!ShapedType::isDynamic(size) &&
           !ShapedType::isDynamic(shapeOf(first)[i])))
        continue;
      Value expected = tensor::DimOp::create(b, loc, first, i);
      Value actual = tensor::DimOp::create(b, loc, input, i);
      Value equal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          expected, actual);
      cf::AssertOp::create(b, loc, equal,
                           "concatenated inputs must agree in dim " +
                               std::to_string(i));
    }
  }
}

namespace {

/// A `tensor.empty` of the result's size filled by one `insert_slice` per
/// input, at the running offset along the axis.
struct ConcatToTensor : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return rewriter.notifyMatchFailure(op, "axis out of range");
    ValueRange inputs = op.getInputs();
    buildOffAxisDimChecks(rewriter, loc, inputs, *axis);
    // Dims off the axis are the result's where static, else the first
    // input's; the axis is the sum of the inputs' sizes along it.
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(
          resultType.isDynamicDim(i) && i != *axis
              ? tensor::getMixedSize(rewriter, loc, inputs.front(), i)
              : rewriter.getIndexAttr(resultType.getDimSize(i)));
    SmallVector<OpFoldResult> axisOffsets;
    OpFoldResult total = rewriter.getIndexAttr(0);
    for (Value input : inputs) {
      axisOffsets.push_back(total);
      total = addSizes(rewriter, loc, total,
                       tensor::getMixedSize(rewriter, loc, input, *axis));
    }
    if (resultType.isDynamicDim(*axis))
      sizes[*axis] = total;
    Value result = tensor::EmptyOp::create(rewriter, loc, sizes,
                                           resultType.getElementType());
    SmallVector<OpFoldResult> offsets = getZeros(rewriter, rank);
    SmallVector<OpFoldResult> strides = getOnes(rewriter, rank);
    for (auto [input, offset] : llvm::zip_equal(inputs, axisOffsets)) {
      // An input empty along the axis adds nothing; inserting it at the
      // axis' end would be an offset insert_slice's verifier refuses.
      if (shapeOf(input)[*axis] == 0)
        continue;
      offsets[*axis] = offset;
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result, offsets,
          tensor::getMixedSizes(rewriter, loc, input), strides);
    }
    rewriter.replaceOp(op, castTo(rewriter, loc, result, resultType));
    return success();
  }
};

struct TransposeToLinalg : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ArrayRef<int64_t> perm = op.getPerm();
    if (perm.size() != shapeOf(op.getInput()).size())
      return rewriter.notifyMatchFailure(op, "perm length differs from rank");
    SmallVector<OpFoldResult> inputSizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    SmallVector<OpFoldResult> sizes;
    for (int64_t axis : perm)
      sizes.push_back(inputSizes[axis]);
    Value init = tensor::EmptyOp::create(
        rewriter, loc, sizes, op.getInput().getType().getElementType());
    Value result =
        linalg::TransposeOp::create(rewriter, loc, op.getInput(), init, perm)
            .getResult()[0];
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getType()));
    return success();
  }
};

/// A broadcasting copy, with the elementwise patterns' indexing maps. The
/// shape operand matters only where the result dim is dynamic: it must be a
/// constant 1 there, so that the dim is the input's.
struct ExpandToLinalg : OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ExpandOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = op.getInput().getType();
    std::string reason = checkBroadcast(resultType, {inputType});
    if (!reason.empty())
      return rewriter.notifyMatchFailure(op, reason);
    if (!resultType.hasStaticShape()) {
      std::optional<SmallVector<int64_t>> shape =
          getConstantInts(op.getShape());
      int64_t rank = resultType.getRank();
      int64_t offset = rank - inputType.getRank();
      for (int64_t i = 0; i < rank; ++i) {
        if (!resultType.isDynamicDim(i))
          continue;
        bool fromInput = shape && static_cast<int64_t>(shape->size()) == rank &&
                         (*shape)[i] == 1 && i >= offset &&
                         inputType.isDynamicDim(i - offset);
        if (!fromInput)
          return rewriter.notifyMatchFailure(op, "dynamic result dim " +
                                                     std::to_string(i) +
                                                     " is not the input's");
      }
    }
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, op.getInput(),
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

/// The number of dynamic dims in `type`.
static int64_t countDynamicDims(RankedTensorType type) {
  return llvm::count_if(type.getShape(), ShapedType::isDynamic);
}

/// `source` as a 1-D tensor, then as `type` (at most one dynamic dim): the
/// route for reshapes that no single collapse or expand expresses (2x8 to
/// 16x1).
static Value buildReshapeThroughFlat(OpBuilder &b, Location loc, Value source,
                                     RankedTensorType type) {
  auto sourceType = llvm::cast<RankedTensorType>(source.getType());
  int64_t flatSize = sourceType.hasStaticShape() ? sourceType.getNumElements()
                                                 : ShapedType::kDynamic;
  auto flatType =
      RankedTensorType::get({flatSize}, sourceType.getElementType());
  auto allDims = [](int64_t rank) {
    return SmallVector<ReassociationIndices>{
        llvm::to_vector(llvm::seq<int64_t>(0, rank))};
  };
  Value flat = source;
  if (sourceType.getRank() == 0)
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, source,
                                         ArrayRef<ReassociationIndices>{});
  else if (sourceType.getRank() > 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, source,
                                           allDims(sourceType.getRank()));
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  if (type.getRank() == 1)
    return castTo(b, loc, flat, type);
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       allDims(type.getRank()));
}

/// `source` reshaped (row-major) to `type`: one collapse or expand where a
/// reassociation exists, else through a 1-D tensor when `type` has at most
/// one dynamic dim (which the expand then computes).
static FailureOr<Value> buildReshape(OpBuilder &b, Location loc, Value source,
                                     RankedTensorType type) {
  auto sourceType = llvm::cast<RankedTensorType>(source.getType());
  if (sourceType == type)
    return source;
  if (sourceType.getRank() != type.getRank()) {
    std::optional<SmallVector<ReassociationIndices>> reassociation =
        getReassociationIndicesForReshape(sourceType, type);
    if (reassociation && sourceType.getRank() > type.getRank())
      return tensor::CollapseShapeOp::create(b, loc, type, source,
                                             *reassociation)
          .getResult();
    if (reassociation)
      return tensor::ExpandShapeOp::create(b, loc, type, source, *reassociation)
          .getResult();
  }
  bool anyScalar = sourceType.getRank() == 0 || type.getRank() == 0;
  if (countDynamicDims(type) > 1 ||
      (anyScalar && !(sourceType.hasStaticShape() && type.hasStaticShape())))
    return failure();
  return buildReshapeThroughFlat(b, loc, source, type);
}

namespace {

/// Reshape, squeeze and unsqueeze, from their input and result types alone
/// (the shape operand and axes gave the result type). With dynamic dims the
/// types determine the reshape only when the op keeps the order of the
/// non-unit dims (squeeze, unsqueeze) or when one dynamic dim on each side
/// must correspond (any other grouping would change the element count).
template <typename OpTy> struct ReshapeToTensor : OpRewritePattern<OpTy> {
  ReshapeToTensor(MLIRContext *context, bool onlyUnitDims)
      : OpRewritePattern<OpTy>(context), onlyUnitDims(onlyUnitDims) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    int64_t inputDynamic = countDynamicDims(inputType);
    int64_t resultDynamic = countDynamicDims(resultType);
    if (!onlyUnitDims && (inputDynamic > 1 || resultDynamic > 1 ||
                          inputDynamic != resultDynamic))
      return rewriter.notifyMatchFailure(
          op, "dynamic dims the types do not pair up");
    FailureOr<Value> result =
        buildReshape(rewriter, op.getLoc(), input, resultType);
    if (failed(result))
      return rewriter.notifyMatchFailure(
          op, "no collapse or expand reshapes the dynamic shape");
    rewriter.replaceOp(op, *result);
    return success();
  }

  bool onlyUnitDims;
};

//===----------------------------------------------------------------------===//
// Identity and constant
//===----------------------------------------------------------------------===//

struct IdentityToOperand : OpRewritePattern<IdentityOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(IdentityOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

/// The same attribute (dense or dense_resource) on an `arith.constant`.
struct ConstantToArith : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    auto value = llvm::dyn_cast<TypedAttr>(op.getValue());
    if (!value || !arith::ConstantOp::isBuildableWith(value, op.getType()))
      return rewriter.notifyMatchFailure(op, "no arith.constant holds it");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

} // namespace

void mlir::lmopt::populateLmoptDataMovementToLinalgPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<SplitToTensor, SliceToTensor, ConcatToTensor, TransposeToLinalg,
               ExpandToLinalg, IdentityToOperand, ConstantToArith>(context);
  patterns.add<ReshapeToTensor<ReshapeOp>>(context, /*onlyUnitDims=*/false);
  patterns.add<ReshapeToTensor<SqueezeOp>>(context, /*onlyUnitDims=*/true);
  patterns.add<ReshapeToTensor<UnsqueezeOp>>(context, /*onlyUnitDims=*/true);
}
