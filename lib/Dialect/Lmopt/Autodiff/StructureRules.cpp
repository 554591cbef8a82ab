//===- StructureRules.cpp - gradients of reductions, products, layout ops -===//
//
// Reductions broadcast their gradient back; layout ops (reshape, squeeze,
// transpose, concat, split) move it back where the elements came from;
// matmul takes the two transposed products; a gather scatters rows back
// (`lmopt.gather_grad`) or, for one index along any axis, places the
// gradient at that index.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

using namespace mlir;
using namespace mlir::lmopt;

/// `axes` made non-negative and sorted; every dim when empty.
static SmallVector<int64_t> normalizedAxes(ArrayRef<int64_t> axes,
                                           int64_t rank) {
  SmallVector<int64_t> result;
  if (axes.empty())
    return llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (int64_t axis : axes)
    result.push_back(axis < 0 ? axis + rank : axis);
  llvm::sort(result);
  return result;
}

/// The gradient of a reduction over `axes` of `input` to `output`,
/// broadcast back to the input.
static Value broadcastBack(GradBuilder &gb, Value grad, Value input,
                           ArrayRef<int64_t> axes, bool keepdims) {
  if (!keepdims)
    grad = gb.unsqueeze(grad, axes);
  return gb.expandLike(grad, input);
}

static LogicalResult reduceSumRule(ReduceSumOp op, GradBuilder &gb,
                                   ArrayRef<Value> rg,
                                   MutableArrayRef<Value> og) {
  Value x = op.getInput();
  SmallVector<int64_t> axes = normalizedAxes(op.getAxes(), rankOf(x));
  og[0] = broadcastBack(gb, rg[0], x, axes, op.getKeepdims());
  return success();
}

static LogicalResult reduceMeanRule(ReduceMeanOp op, GradBuilder &gb,
                                    ArrayRef<Value> rg,
                                    MutableArrayRef<Value> og) {
  Value x = op.getInput();
  SmallVector<int64_t> axes = normalizedAxes(op.getAxes(), rankOf(x));
  Value spread = broadcastBack(gb, rg[0], x, axes, op.getKeepdims());
  int64_t count = 1;
  SmallVector<Value> dynamicDims;
  for (int64_t axis : axes) {
    int64_t size = shapeOf(x)[axis];
    if (ShapedType::isDynamic(size))
      dynamicDims.push_back(gb.dimOf(x, axis));
    else
      count *= size;
  }
  Value divisor = gb.scalarLike(double(count), x);
  for (Value dim : dynamicDims)
    divisor = gb.mul(divisor, gb.cast(dim, elementTypeOf(x)));
  og[0] = gb.div(spread, divisor);
  return success();
}

static LogicalResult softmaxRule(SoftmaxOp op, GradBuilder &gb,
                                 ArrayRef<Value> rg,
                                 MutableArrayRef<Value> og) {
  Value y = op.getOutput();
  int64_t axis = *normalizeAxis(op.getAxis(), rankOf(y));
  Value dot = gb.reduceSum(gb.mul(rg[0], y), {axis}, /*keepdims=*/true);
  og[0] = gb.mul(y, gb.sub(rg[0], dot));
  return success();
}

static LogicalResult logSoftmaxRule(LogSoftmaxOp op, GradBuilder &gb,
                                    ArrayRef<Value> rg,
                                    MutableArrayRef<Value> og) {
  Value y = op.getOutput();
  int64_t axis = *normalizeAxis(op.getAxis(), rankOf(y));
  Value total = gb.reduceSum(rg[0], {axis}, /*keepdims=*/true);
  og[0] = gb.sub(rg[0], gb.mul(gb.exp(y), total));
  return success();
}

static LogicalResult matmulRule(MatMulOp op, GradBuilder &gb,
                                ArrayRef<Value> rg,
                                MutableArrayRef<Value> og) {
  Value a = op.getLhs(), b = op.getRhs(), g = rg[0];
  if (!llvm::isa<FloatType>(elementTypeOf(a)))
    return success();
  if (rankOf(a) < 2 || rankOf(b) < 2)
    return op.emitError("no gradient for 'lmopt.matmul' with a rank-1 "
                        "operand");
  og[0] = gb.reduceToShape(gb.matmul(g, gb.transposeLast(b)), a);
  if (rankOf(b) == 2 && rankOf(a) > 2)
    // A weight shared by every batch: one product over all rows.
    og[1] = gb.matmul(gb.transposeLast(gb.flattenRows(a)), gb.flattenRows(g));
  else
    og[1] = gb.reduceToShape(gb.matmul(gb.transposeLast(a), g), b);
  if (og[1].getType() != b.getType())
    og[1] = gb.reshapeLike(og[1], b);
  return success();
}

template <typename OpT>
static LogicalResult reshapeLikeRule(OpT op, GradBuilder &gb,
                                     ArrayRef<Value> rg,
                                     MutableArrayRef<Value> og) {
  og[0] = gb.reshapeLike(rg[0], op->getOperand(0));
  return success();
}

static LogicalResult transposeRule(TransposeOp op, GradBuilder &gb,
                                   ArrayRef<Value> rg,
                                   MutableArrayRef<Value> og) {
  ArrayRef<int64_t> perm = op.getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [index, dim] : llvm::enumerate(perm))
    inverse[dim] = int64_t(index);
  og[0] = gb.reshapeLike(gb.transpose(rg[0], inverse), op.getInput());
  return success();
}

static LogicalResult expandRule(ExpandOp op, GradBuilder &gb,
                                ArrayRef<Value> rg,
                                MutableArrayRef<Value> og) {
  og[0] = gb.reduceToShape(rg[0], op.getInput());
  return success();
}

static LogicalResult concatRule(ConcatOp op, GradBuilder &gb,
                                ArrayRef<Value> rg,
                                MutableArrayRef<Value> og) {
  int64_t rank = rankOf(op.getOutput());
  int64_t axis = *normalizeAxis(op.getAxis(), rank);
  SmallVector<int64_t> sizes;
  SmallVector<Type> types;
  for (Value input : op.getInputs()) {
    int64_t size = shapeOf(input)[axis];
    if (ShapedType::isDynamic(size))
      return op.emitError("no gradient for 'lmopt.concat' of an input whose "
                          "size along axis ")
             << axis << " is dynamic";
    sizes.push_back(size);
    SmallVector<int64_t> shape(shapeOf(rg[0]));
    shape[axis] = size;
    types.push_back(RankedTensorType::get(shape, elementTypeOf(input)));
  }
  OpBuilder &b = gb.getBuilder();
  auto split = SplitOp::create(b, gb.getLoc(), types, rg[0],
                               b.getI64IntegerAttr(axis),
                               b.getDenseI64ArrayAttr(sizes));
  for (auto [index, input] : llvm::enumerate(op.getInputs()))
    og[index] = gb.reshapeLike(split.getResult(index), input);
  return success();
}

static LogicalResult splitRule(SplitOp op, GradBuilder &gb, ArrayRef<Value> rg,
                               MutableArrayRef<Value> og) {
  int64_t axis = *normalizeAxis(op.getAxis(), rankOf(op.getInput()));
  SmallVector<Value> pieces;
  for (auto [index, result] : llvm::enumerate(op.getOutputs()))
    pieces.push_back(rg[index] ? rg[index] : gb.zerosLike(result));
  OpBuilder &b = gb.getBuilder();
  og[0] = ConcatOp::create(b, gb.getLoc(), op.getInput().getType(), pieces,
                           b.getI64IntegerAttr(axis));
  return success();
}

static LogicalResult gatherRule(GatherOp op, GradBuilder &gb,
                                ArrayRef<Value> rg,
                                MutableArrayRef<Value> og) {
  Value data = op.getData(), indices = op.getIndices();
  int64_t rank = rankOf(data);
  int64_t axis = *normalizeAxis(op.getAxis(), rank);
  if (rankOf(indices) == 0) {
    // One index: the gradient lands at that index along the axis, zeros
    // elsewhere. iota == index selects it.
    OpBuilder &b = gb.getBuilder();
    Type i64 = b.getI64Type();
    Value size = gb.dimOf(data, axis);
    Value index = gb.cast(indices, i64);
    // A negative index counts from the end.
    index = gb.where(gb.greater(gb.scalar(0.0, i64), index),
                     gb.add(index, size), index);
    int64_t staticSize = shapeOf(data)[axis];
    Value iota = RangeOp::create(
        b, gb.getLoc(), RankedTensorType::get({staticSize}, i64),
        gb.scalar(0.0, i64), size, gb.scalar(1.0, i64));
    SmallVector<int64_t> others;
    for (int64_t dim = 0; dim < rank; ++dim)
      if (dim != axis)
        others.push_back(dim);
    Value selected = gb.equal(gb.unsqueeze(iota, others), index);
    Value spread = gb.unsqueeze(rg[0], {axis});
    og[0] = gb.reshapeLike(
        gb.where(selected, spread, gb.scalarLike(0.0, data)), data);
    return success();
  }
  auto dataType = llvm::cast<RankedTensorType>(data.getType());
  if (axis != 0 || !dataType.hasStaticShape())
    return op.emitError("no gradient for 'lmopt.gather' along axis ")
           << axis << " of " << dataType
           << " with indices of rank " << rankOf(indices)
           << "; only rows of a static table (axis 0) or a single index";
  og[0] = GatherGradOp::create(gb.getBuilder(), gb.getLoc(), dataType, rg[0],
                               indices);
  return success();
}

void mlir::lmopt::attachStructureRules(MLIRContext &context) {
  attachRule<ReduceSumOp, reduceSumRule>(context);
  attachRule<ReduceMeanOp, reduceMeanRule>(context);
  attachRule<SoftmaxOp, softmaxRule>(context);
  attachRule<LogSoftmaxOp, logSoftmaxRule>(context);
  attachRule<MatMulOp, matmulRule>(context);
  attachRule<ReshapeOp, reshapeLikeRule<ReshapeOp>>(context);
  attachRule<SqueezeOp, reshapeLikeRule<SqueezeOp>>(context);
  attachRule<UnsqueezeOp, reshapeLikeRule<UnsqueezeOp>>(context);
  attachRule<TransposeOp, transposeRule>(context);
  attachRule<ExpandOp, expandRule>(context);
  attachRule<ConcatOp, concatRule>(context);
  attachRule<SplitOp, splitRule>(context);
  attachRule<GatherOp, gatherRule>(context);
}
