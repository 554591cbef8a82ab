//===- LmoptOps.cpp - lmopt op verifiers ----------------------------------===//
//
// Verifiers state ONNX's shape rules; dims that are dynamic on either side are
// accepted, since they are only known at run time.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "QuantVerifiers.h"

#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::lmopt;


static Type elementTypeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getElementType();
}

/// Checks that `result` has shape `expected`, up to dynamic dims.
static LogicalResult verifyResultShape(Operation *op, Value result,
                                       ArrayRef<int64_t> expected) {
  if (isCompatibleShape(shapeOf(result), expected))
    return success();
  return op->emitOpError("result shape ")
         << formatShape(shapeOf(result)) << " does not match expected shape "
         << formatShape(expected);
}

/// Checks a list of axes against `rank`: in range and without repeats.
static LogicalResult verifyAxes(Operation *op, ArrayRef<int64_t> axes,
                                int64_t rank, SmallVectorImpl<int64_t> *out) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return op->emitOpError("axis ")
             << axis << " is out of range for rank " << rank;
    if (!seen.insert(*normalized).second)
      return op->emitOpError("axis ") << axis << " appears more than once";
    if (out)
      out->push_back(*normalized);
  }
  return success();
}

static LogicalResult verifySameElementType(Operation *op, Value input,
                                           Value output) {
  if (elementTypeOf(input) == elementTypeOf(output))
    return success();
  return op->emitOpError("result element type ")
         << elementTypeOf(output) << " does not match input element type "
         << elementTypeOf(input);
}

static LogicalResult verifySingleAxis(Operation *op, int64_t axis,
                                      int64_t rank) {
  return verifyAxes(op, {axis}, rank, nullptr);
}

//===----------------------------------------------------------------------===//
// Constants and shape ops
//===----------------------------------------------------------------------===//

LogicalResult ShapeOp::verify() {
  int64_t rank = shapeOf(getInput()).size();
  auto clamp = [rank](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(getStart());
  int64_t end = clamp(getEnd().value_or(rank));
  int64_t length = std::max<int64_t>(end - start, 0);
  return verifyResultShape(*this, getOutput(), {length});
}

LogicalResult ConstantOfShapeOp::verify() {
  auto typed = llvm::cast<TypedAttr>(getValueAttr());
  Type valueType = typed.getType();
  if (auto shaped = llvm::dyn_cast<ShapedType>(valueType))
    valueType = shaped.getElementType();
  if (valueType != elementTypeOf(getOutput()))
    return emitOpError("value type ")
           << valueType << " does not match result element type "
           << elementTypeOf(getOutput());
  int64_t length = shapeOf(getShape())[0];
  int64_t rank = shapeOf(getOutput()).size();
  if (!ShapedType::isDynamic(length) && length != rank)
    return emitOpError("result rank ")
           << rank << " does not match shape operand length " << length;
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value operand : {getStart(), getLimit(), getDelta()}) {
    if (!shapeOf(operand).empty())
      return emitOpError("start, limit and delta must be scalars, got shape ")
             << formatShape(shapeOf(operand));
    if (elementTypeOf(operand) != elementTypeOf(getOutput()))
      return emitOpError("operand element type ")
             << elementTypeOf(operand) << " does not match result element type "
             << elementTypeOf(getOutput());
  }
  if (shapeOf(getOutput()).size() != 1)
    return emitOpError("result must be 1-D");
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Broadcasts the shapes of `operands` together, or reports which two clash.
static FailureOr<SmallVector<int64_t>> broadcastOperands(Operation *op,
                                                         ValueRange operands) {
  SmallVector<int64_t> shape;
  for (Value operand : operands) {
    std::optional<SmallVector<int64_t>> next =
        broadcastShapes(shape, shapeOf(operand));
    if (!next)
      return op->emitOpError("operand shapes ")
             << formatShape(shape) << " and " << formatShape(shapeOf(operand))
             << " are not broadcast-compatible";
    shape = std::move(*next);
  }
  return shape;
}

/// Broadcast operands, check the result shape, and check element types: all
/// operands share one, and so does the result unless it is i1 (comparisons).
static LogicalResult verifyBroadcast(Operation *op, ValueRange operands,
                                     Value result, bool resultIsBool) {
  FailureOr<SmallVector<int64_t>> shape = broadcastOperands(op, operands);
  if (failed(shape))
    return failure();
  Type elementType = elementTypeOf(operands.front());
  for (Value operand : operands.drop_front())
    if (elementTypeOf(operand) != elementType)
      return op->emitOpError("operand element types ")
             << elementType << " and " << elementTypeOf(operand) << " differ";
  if (!resultIsBool && elementTypeOf(result) != elementType)
    return op->emitOpError("result element type ")
           << elementTypeOf(result) << " does not match operand element type "
           << elementType;
  return verifyResultShape(op, result, *shape);
}

template <typename OpTy>
static LogicalResult verifyBinary(OpTy op) {
  bool isBool = llvm::cast<RankedTensorType>(op.getOutput().getType())
                    .getElementType()
                    .isInteger(1);
  return verifyBroadcast(op, {op.getLhs(), op.getRhs()}, op.getOutput(),
                         isBool);
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult MaxOp::verify() { return verifyBinary(*this); }
LogicalResult MinOp::verify() { return verifyBinary(*this); }
LogicalResult EqualOp::verify() { return verifyBinary(*this); }
LogicalResult LessOp::verify() { return verifyBinary(*this); }
LogicalResult GreaterOp::verify() { return verifyBinary(*this); }
LogicalResult AndOp::verify() { return verifyBinary(*this); }
LogicalResult OrOp::verify() { return verifyBinary(*this); }

LogicalResult PowOp::verify() {
  // ONNX Pow allows the exponent its own element type.
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands(*this, {getLhs(), getRhs()});
  if (failed(shape))
    return failure();
  if (failed(verifySameElementType(*this, getLhs(), getOutput())))
    return failure();
  return verifyResultShape(*this, getOutput(), *shape);
}

LogicalResult WhereOp::verify() {
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands(*this, {getCondition(), getX(), getY()});
  if (failed(shape))
    return failure();
  if (elementTypeOf(getX()) != elementTypeOf(getY()))
    return emitOpError("operand element types ")
           << elementTypeOf(getX()) << " and " << elementTypeOf(getY())
           << " differ";
  if (failed(verifySameElementType(*this, getX(), getOutput())))
    return failure();
  return verifyResultShape(*this, getOutput(), *shape);
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  if (elementTypeOf(getLhs()) != elementTypeOf(getRhs()) ||
      elementTypeOf(getLhs()) != elementTypeOf(getOutput()))
    return emitOpError("operand and result element types must match, got ")
           << elementTypeOf(getLhs()) << ", " << elementTypeOf(getRhs())
           << " and " << elementTypeOf(getOutput());
  std::optional<SmallVector<int64_t>> shape =
      matmulShape(shapeOf(getLhs()), shapeOf(getRhs()));
  if (!shape)
    return emitOpError("cannot multiply shapes ")
           << formatShape(shapeOf(getLhs())) << " and "
           << formatShape(shapeOf(getRhs()));
  return verifyResultShape(*this, getOutput(), *shape);
}

LogicalResult GemmOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getA()), b = shapeOf(getB());
  if (a.size() != 2 || b.size() != 2)
    return emitOpError("operands 'a' and 'b' must be rank 2, got ")
           << formatShape(a) << " and " << formatShape(b);
  int64_t m = getTransA() ? a[1] : a[0], k1 = getTransA() ? a[0] : a[1];
  int64_t k2 = getTransB() ? b[1] : b[0], n = getTransB() ? b[0] : b[1];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return emitOpError("contraction dims ")
           << k1 << " and " << k2 << " differ";
  if (Value c = getC()) {
    std::optional<SmallVector<int64_t>> shape =
        broadcastShapes({m, n}, shapeOf(c));
    if (!shape || shape->size() != 2 ||
        !isCompatibleShape(*shape, {m, n}))
      return emitOpError("operand 'c' of shape ")
             << formatShape(shapeOf(c)) << " does not broadcast to "
             << formatShape({m, n});
  }
  return verifyResultShape(*this, getOutput(), {m, n});
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult verifyReduce(OpTy op) {
  ArrayRef<int64_t> input = shapeOf(op.getInput());
  SmallVector<int64_t> axes;
  if (failed(verifyAxes(op, op.getAxes(), input.size(), &axes)))
    return failure();
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, input.size()));
  SmallVector<int64_t> expected;
  for (auto [i, dim] : llvm::enumerate(input)) {
    bool reduced = llvm::is_contained(axes, static_cast<int64_t>(i));
    if (!reduced)
      expected.push_back(dim);
    else if (op.getKeepdims())
      expected.push_back(1);
  }
  return verifyResultShape(op, op.getOutput(), expected);
}

LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMinOp::verify() { return verifyReduce(*this); }

LogicalResult SoftmaxOp::verify() {
  return verifySingleAxis(*this, getAxis(), shapeOf(getInput()).size());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifySingleAxis(*this, getAxis(), shapeOf(getInput()).size());
}

/// Checks that `param` (scale or bias) broadcasts to the normalized dims
/// `[axis, rank)` of `input` without changing them.
static LogicalResult verifyNormParam(Operation *op, StringRef name,
                                     Value param, ArrayRef<int64_t> normalized) {
  ArrayRef<int64_t> shape = shapeOf(param);
  std::optional<SmallVector<int64_t>> merged =
      broadcastShapes(normalized, shape);
  if (shape.size() > normalized.size() || !merged ||
      !isCompatibleShape(*merged, normalized))
    return op->emitOpError("'")
           << name << "' of shape " << formatShape(shape)
           << " does not broadcast to the normalized shape "
           << formatShape(normalized);
  return success();
}

template <typename OpTy>
static LogicalResult verifyNorm(OpTy op, int64_t axis, Value bias) {
  ArrayRef<int64_t> input = shapeOf(op.getInput());
  std::optional<int64_t> normalizedAxis = normalizeAxis(axis, input.size());
  if (!normalizedAxis)
    return op.emitOpError("axis ")
           << axis << " is out of range for rank " << input.size();
  ArrayRef<int64_t> normalized = input.drop_front(*normalizedAxis);
  if (failed(verifyNormParam(op, "scale", op.getScale(), normalized)))
    return failure();
  if (bias && failed(verifyNormParam(op, "bias", bias, normalized)))
    return failure();
  if (op.getOutput().getType() != op.getInput().getType())
    return op.emitOpError("result type ")
           << op.getOutput().getType() << " does not match input type "
           << op.getInput().getType();
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getAxis(), getBias());
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getAxis(), Value());
}

LogicalResult RotaryOp::verify() {
  ArrayRef<int64_t> shape = shapeOf(getInput());
  if (shape.empty() || ShapedType::isDynamic(shape.back()) ||
      shape.back() % 2 != 0)
    return emitOpError("input's last dim must be static and even, got ")
           << getInput().getType();
  if (getCos().getType() != getSin().getType())
    return emitOpError("cos and sin types ")
           << getCos().getType() << " and " << getSin().getType() << " differ";
  if (shapeOf(getCos()).size() > shape.size())
    return emitOpError("cos and sin have rank ")
           << shapeOf(getCos()).size() << ", above the input's "
           << shape.size();
  if (failed(verifyBroadcast(*this, {getInput(), getCos(), getSin()},
                             getOutput(), /*resultIsBool=*/false)))
    return failure();
  if (getOutput().getType() != getInput().getType())
    return emitOpError("result type ")
           << getOutput().getType() << " differs from the input type "
           << getInput().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData());
  std::optional<int64_t> axis = normalizeAxis(getAxis(), data.size());
  if (!axis)
    return emitOpError("axis ")
           << getAxis() << " is out of range for rank " << data.size();
  // A quantized table gathers either its integers (same element type) or
  // dequantized rows (docs/dialect.md, "Quantized embedding tables").
  if (llvm::isa<quant::QuantizedType>(elementTypeOf(getData())) &&
      elementTypeOf(getData()) != elementTypeOf(getOutput())) {
    if (failed(verifyRowQuantizedTable(*this, elementTypeOf(getData()), data[0],
                                       *axis, elementTypeOf(getOutput()))))
      return failure();
  } else if (failed(verifySameElementType(*this, getData(), getOutput()))) {
    return failure();
  }
  SmallVector<int64_t> expected(data.take_front(*axis));
  llvm::append_range(expected, shapeOf(getIndices()));
  llvm::append_range(expected, data.drop_front(*axis + 1));
  return verifyResultShape(*this, getOutput(), expected);
}

LogicalResult ReshapeOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  int64_t length = shapeOf(getShape())[0];
  ArrayRef<int64_t> result = shapeOf(getOutput());
  if (!ShapedType::isDynamic(length) &&
      length != static_cast<int64_t>(result.size()))
    return emitOpError("result rank ")
           << result.size() << " does not match shape operand length "
           << length;
  auto inputType = llvm::cast<RankedTensorType>(getInput().getType());
  auto resultType = llvm::cast<RankedTensorType>(getOutput().getType());
  if (inputType.hasStaticShape() && resultType.hasStaticShape() &&
      inputType.getNumElements() != resultType.getNumElements())
    return emitOpError("cannot reshape ")
           << inputType.getNumElements() << " elements into "
           << formatShape(result);
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<bool> seen(input.size(), false);
  bool valid = perm.size() == input.size();
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= static_cast<int64_t>(input.size()) || seen[p]) {
      valid = false;
      break;
    }
    seen[p] = true;
  }
  if (!valid)
    return emitOpError("perm is not a permutation of ")
           << input.size() << " dims";
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  SmallVector<int64_t> expected;
  for (int64_t p : perm)
    expected.push_back(input[p]);
  return verifyResultShape(*this, getOutput(), expected);
}

LogicalResult SliceOp::verify() {
  for (Value operand : {getStarts(), getEnds(), getAxes(), getSteps()}) {
    if (!operand)
      continue;
    if (shapeOf(operand).size() != 1)
      return emitOpError("starts, ends, axes and steps must be 1-D, got shape ")
             << formatShape(shapeOf(operand));
    if (!isCompatibleShape(shapeOf(operand), shapeOf(getStarts())))
      return emitOpError("starts, ends, axes and steps must have one length");
  }
  if (shapeOf(getOutput()).size() != shapeOf(getInput()).size())
    return emitOpError("result rank ")
           << shapeOf(getOutput()).size() << " does not match input rank "
           << shapeOf(getInput()).size();
  return verifySameElementType(*this, getInput(), getOutput());
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  ArrayRef<int64_t> first = shapeOf(getInputs().front());
  std::optional<int64_t> axis = normalizeAxis(getAxis(), first.size());
  if (!axis)
    return emitOpError("axis ")
           << getAxis() << " is out of range for rank " << first.size();
  SmallVector<int64_t> expected(first);
  expected[*axis] = 0;
  for (Value input : getInputs()) {
    ArrayRef<int64_t> shape = shapeOf(input);
    if (shape.size() != first.size())
      return emitOpError("inputs have ranks ")
             << first.size() << " and " << shape.size();
    if (failed(verifySameElementType(*this, input, getOutput())))
      return failure();
    for (auto [i, dim] : llvm::enumerate(shape)) {
      if (static_cast<int64_t>(i) == *axis) {
        expected[i] = ShapedType::isDynamic(dim) ||
                              ShapedType::isDynamic(expected[i])
                          ? ShapedType::kDynamic
                          : expected[i] + dim;
        continue;
      }
      if (!ShapedType::isDynamic(dim) && !ShapedType::isDynamic(expected[i]) &&
          dim != expected[i])
        return emitOpError("inputs differ in dim ")
               << i << " (" << expected[i] << " vs " << dim
               << ") outside the concatenation axis";
      if (ShapedType::isDynamic(expected[i]))
        expected[i] = dim;
    }
  }
  return verifyResultShape(*this, getOutput(), expected);
}

LogicalResult SplitOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  std::optional<int64_t> axis = normalizeAxis(getAxis(), input.size());
  if (!axis)
    return emitOpError("axis ")
           << getAxis() << " is out of range for rank " << input.size();
  ArrayRef<int64_t> sizes = getSplitSizes();
  if (sizes.size() != getOutputs().size())
    return emitOpError("has ")
           << getOutputs().size() << " results but " << sizes.size()
           << " split sizes";
  int64_t total = 0;
  for (auto [size, output] : llvm::zip(sizes, getOutputs())) {
    if (size < 0)
      return emitOpError("split size ") << size << " is negative";
    total += size;
    SmallVector<int64_t> expected(input);
    expected[*axis] = size;
    if (failed(verifyResultShape(*this, output, expected)) ||
        failed(verifySameElementType(*this, getInput(), output)))
      return failure();
  }
  if (!ShapedType::isDynamic(input[*axis]) && total != input[*axis])
    return emitOpError("split sizes add up to ")
           << total << " but the axis has " << input[*axis] << " entries";
  return success();
}

LogicalResult ExpandOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  ArrayRef<int64_t> result = shapeOf(getOutput());
  int64_t length = shapeOf(getShape())[0];
  if (!ShapedType::isDynamic(length) &&
      length != static_cast<int64_t>(result.size()))
    return emitOpError("result rank ")
           << result.size() << " does not match shape operand length "
           << length;
  std::optional<SmallVector<int64_t>> merged =
      broadcastShapes(shapeOf(getInput()), result);
  if (!merged || !isCompatibleShape(*merged, result))
    return emitOpError("input shape ")
           << formatShape(shapeOf(getInput()))
           << " does not broadcast to result shape " << formatShape(result);
  return success();
}

LogicalResult SqueezeOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  SmallVector<int64_t> axes;
  if (failed(verifyAxes(*this, getAxes(), input.size(), &axes)))
    return failure();
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  SmallVector<int64_t> expected;
  for (auto [i, dim] : llvm::enumerate(input)) {
    bool listed = llvm::is_contained(axes, static_cast<int64_t>(i));
    if (listed && !ShapedType::isDynamic(dim) && dim != 1)
      return emitOpError("cannot squeeze dim ")
             << i << " of size " << dim;
    bool removed = axes.empty() ? dim == 1 : listed;
    if (!removed)
      expected.push_back(dim);
  }
  return verifyResultShape(*this, getOutput(), expected);
}

LogicalResult UnsqueezeOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  int64_t rank = input.size() + getAxes().size();
  SmallVector<int64_t> axes;
  if (failed(verifyAxes(*this, getAxes(), rank, &axes)))
    return failure();
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  SmallVector<int64_t> expected;
  const int64_t *next = input.begin();
  for (int64_t i = 0; i < rank; ++i)
    expected.push_back(llvm::is_contained(axes, i) ? 1 : *next++);
  return verifyResultShape(*this, getOutput(), expected);
}

//===----------------------------------------------------------------------===//
// Indexing, scans and integer arithmetic
//===----------------------------------------------------------------------===//

LogicalResult ModOp::verify() {
  if (!getFmod() && llvm::isa<FloatType>(elementTypeOf(getLhs())))
    return emitOpError("needs 'fmod' for float operands");
  return verifyBinary(*this);
}

LogicalResult CumSumOp::verify() {
  return verifySingleAxis(*this, getAxis(), shapeOf(getInput()).size());
}

LogicalResult GatherElementsOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices());
  if (data.size() != indices.size())
    return emitOpError("indices rank ")
           << indices.size() << " does not match data rank " << data.size();
  if (failed(verifySingleAxis(*this, getAxis(), data.size())) ||
      failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  // Off the axis an index position is also a data position. Sizes known only
  // at run time are checked there (the CPU's gather_elements step).
  int64_t axis = getAxis() < 0 ? getAxis() + int64_t(data.size()) : getAxis();
  for (int64_t d = 0; d < int64_t(data.size()); ++d)
    if (d != axis && !ShapedType::isDynamic(indices[d]) &&
        !ShapedType::isDynamic(data[d]) && indices[d] > data[d])
      return emitOpError("indices dim ")
             << d << " (" << indices[d] << ") exceeds data dim " << d << " ("
             << data[d] << ") off the axis";
  return verifyResultShape(*this, getOutput(), indices);
}

LogicalResult GatherNDOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices());
  int64_t batchDims = getBatchDims();
  int64_t minRank = std::min(data.size(), indices.size());
  if (batchDims < 0 || batchDims >= minRank)
    return emitOpError("batch_dims ")
           << batchDims << " must be in [0, " << minRank << ")";
  int64_t tuple = indices.back();
  if (ShapedType::isDynamic(tuple))
    return emitOpError("last dim of indices must be static");
  if (tuple < 1 || batchDims + tuple > static_cast<int64_t>(data.size()))
    return emitOpError("index tuples of length ")
           << tuple << " do not fit data of rank " << data.size()
           << " after " << batchDims << " batch dims";
  if (failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  SmallVector<int64_t> expected(indices.drop_back());
  llvm::append_range(expected, data.drop_front(batchDims + tuple));
  return verifyResultShape(*this, getOutput(), expected);
}

LogicalResult ScatterNDOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices()),
                    updates = shapeOf(getUpdates());
  if (indices.empty())
    return emitOpError("indices must have rank at least 1");
  int64_t tuple = indices.back();
  if (ShapedType::isDynamic(tuple))
    return emitOpError("last dim of indices must be static");
  if (tuple < 1 || tuple > static_cast<int64_t>(data.size()))
    return emitOpError("index tuples of length ")
           << tuple << " do not fit data of rank " << data.size();
  if (failed(verifySameElementType(*this, getData(), getOutput())) ||
      failed(verifySameElementType(*this, getData(), getUpdates())))
    return failure();
  if (getReduction() != ScatterReduction::none &&
      elementTypeOf(getData()).isInteger(1))
    return emitOpError("reduction '")
           << stringifyScatterReduction(getReduction())
           << "' needs numeric data, got i1";
  SmallVector<int64_t> expected(indices.drop_back());
  llvm::append_range(expected, data.drop_front(tuple));
  if (!isCompatibleShape(updates, expected))
    return emitOpError("updates shape ")
           << formatShape(updates) << " does not match indices.shape[:-1] + "
           << "data.shape[" << tuple << ":] = " << formatShape(expected);
  return verifyResultShape(*this, getOutput(), data);
}

#define GET_OP_CLASSES
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Integer quantization with parameters computed at run time
//===----------------------------------------------------------------------===//

LogicalResult DynamicQuantizeLinearOp::verify() {
  return verifyResultShape(*this, getOutput(), shapeOf(getInput()));
}

/// A MatMulInteger zero point: a scalar, or one entry per row of `a` /
/// column of `b` (`dimSize`) when the operand is a matrix or a batch of them.
static LogicalResult verifyZeroPoint(Operation *op, Value zeroPoint,
                                     Value matrix, StringRef name,
                                     int64_t dimSize, int64_t matrixRank) {
  if (!zeroPoint)
    return success();
  if (elementTypeOf(zeroPoint) != elementTypeOf(matrix))
    return op->emitOpError("'")
           << name << "' element type " << elementTypeOf(zeroPoint)
           << " does not match its operand's element type "
           << elementTypeOf(matrix);
  ArrayRef<int64_t> shape = shapeOf(zeroPoint);
  if (shape.empty() || (shape.size() == 1 && shape[0] == 1))
    return success();
  if (shape.size() == 1 && matrixRank >= 2 &&
      (ShapedType::isDynamic(shape[0]) || ShapedType::isDynamic(dimSize) ||
       shape[0] == dimSize))
    return success();
  return op->emitOpError("'") << name << "' of shape " << formatShape(shape)
                              << " must be a scalar or hold one entry per "
                              << (name == "a_zero_point" ? "row" : "column")
                              << " (" << formatShape({dimSize}) << ")";
}

LogicalResult MatMulIntegerOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getA()), b = shapeOf(getB());
  std::optional<SmallVector<int64_t>> shape = matmulShape(a, b);
  if (!shape)
    return emitOpError("cannot multiply shapes ")
           << formatShape(a) << " and " << formatShape(b);
  int64_t rows = a.size() >= 2 ? a[a.size() - 2] : 1;
  int64_t columns = b.size() >= 2 ? b.back() : 1;
  if (failed(verifyZeroPoint(*this, getAZeroPoint(), getA(), "a_zero_point",
                             rows, a.size())) ||
      failed(verifyZeroPoint(*this, getBZeroPoint(), getB(), "b_zero_point",
                             columns, b.size())))
    return failure();
  return verifyResultShape(*this, getOutput(), *shape);
}
