//===- ShapeOps.cpp - constants, shapes and data movement -----------------===//
//
// Constant, Shape, Size, ConstantOfShape, Range, Reshape, Transpose, Expand,
// Squeeze, Unsqueeze, Concat, Split and Slice, following the ONNX rules for
// special values (Reshape's 0 and -1, Slice's clamping and negative steps).
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

static EvalResult evaluateConstant(ConstantOp op, ArrayRef<Tensor>) {
  FailureOr<Tensor> value = Tensor::fromAttr(op.getValue(), op.getLoc());
  if (failed(value))
    return failure();
  return single(std::move(*value));
}

static EvalResult evaluateShape(ShapeOp op, ArrayRef<Tensor> operands) {
  ArrayRef<int64_t> shape = operands[0].getShape();
  int64_t rank = shape.size();
  auto clampBound = [rank](int64_t bound) {
    if (bound < 0)
      bound += rank;
    return std::clamp<int64_t>(bound, 0, rank);
  };
  int64_t start = clampBound(op.getStart());
  int64_t end = clampBound(op.getEnd().value_or(rank));
  SmallVector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(shape[i]);
  Tensor result(getResultElementType(op), {static_cast<int64_t>(dims.size())});
  result.getInts().assign(dims.begin(), dims.end());
  return single(std::move(result));
}

static EvalResult evaluateSize(SizeOp op, ArrayRef<Tensor> operands) {
  Tensor result(getResultElementType(op), {});
  result.setInt(0, operands[0].getNumElements());
  return single(std::move(result));
}

/// The shape operand of ConstantOfShape, Reshape and Expand, checked.
static FailureOr<SmallVector<int64_t>>
getShapeOperand(Operation *op, const Tensor &shape, bool allowNegative) {
  SmallVector<int64_t> dims = getIntValues(shape);
  for (int64_t dim : dims)
    if (dim < (allowNegative ? -1 : 0))
      return op->emitError() << "shape operand has dim " << dim;
  // A reshape target has as many elements as its input; other shapes are
  // bounded before they are allocated.
  if (!allowNegative && failed(checkElementCount(op, dims)))
    return failure();
  return dims;
}

static EvalResult evaluateConstantOfShape(ConstantOfShapeOp op,
                                          ArrayRef<Tensor> operands) {
  FailureOr<SmallVector<int64_t>> shape =
      getShapeOperand(op, operands[0], /*allowNegative=*/false);
  if (failed(shape))
    return failure();
  Attribute value = op.getValue();
  if (auto elements = llvm::dyn_cast<DenseElementsAttr>(value)) {
    if (!elements.isSplat())
      return op.emitError() << "fill value must have one element";
    value = elements.getSplatValue<Attribute>();
  }
  Tensor result(getResultElementType(op), *shape);
  if (auto floatAttr = llvm::dyn_cast<FloatAttr>(value)) {
    for (int64_t i = 0, e = result.getNumElements(); i < e; ++i)
      if (result.isFloat())
        result.setDouble(i, floatAttr.getValueAsDouble());
      else
        result.setInt(i, static_cast<int64_t>(floatAttr.getValueAsDouble()));
    return single(std::move(result));
  }
  if (auto intAttr = llvm::dyn_cast<IntegerAttr>(value)) {
    int64_t fill = intAttr.getType().isInteger(1)
                       ? static_cast<int64_t>(intAttr.getValue().getZExtValue())
                       : intAttr.getValue().getSExtValue();
    for (int64_t i = 0, e = result.getNumElements(); i < e; ++i)
      if (result.isFloat())
        result.setDouble(i, static_cast<double>(fill));
      else
        result.setInt(i, fill);
    return single(std::move(result));
  }
  return op.emitError() << "unsupported fill value " << value;
}

static EvalResult evaluateRange(RangeOp op, ArrayRef<Tensor> operands) {
  for (const Tensor &operand : operands)
    if (operand.getNumElements() != 1)
      return op.emitError() << "range operands must be scalars, got shape "
                            << formatShape(operand.getShape());
  Type type = getResultElementType(op);
  if (operands[0].isFloat()) {
    double start = operands[0].getDouble(0), limit = operands[1].getDouble(0),
           delta = operands[2].getDouble(0);
    if (delta == 0.0)
      return op.emitError() << "range delta is 0";
    double steps = std::ceil((limit - start) / delta);
    if (!(steps < static_cast<double>(kMaxElements)))
      return op.emitError() << "range from " << start << " to " << limit
                            << " by " << delta << " has too many elements";
    int64_t count = std::max<int64_t>(static_cast<int64_t>(steps), 0);
    Tensor result(type, {count});
    for (int64_t i = 0; i < count; ++i)
      result.setDouble(i, start + static_cast<double>(i) * delta);
    return single(std::move(result));
  }
  int64_t start = operands[0].getInt(0), limit = operands[1].getInt(0),
          delta = operands[2].getInt(0);
  if (delta == 0)
    return op.emitError() << "range delta is 0";
  // Spans in uint64 so that no bound overflows the arithmetic.
  uint64_t span = 0, step = 0;
  if (delta > 0 && limit > start) {
    span = uint64_t(limit) - uint64_t(start);
    step = uint64_t(delta);
  } else if (delta < 0 && limit < start) {
    span = uint64_t(start) - uint64_t(limit);
    step = uint64_t(0) - uint64_t(delta);
  }
  uint64_t steps = step == 0 ? 0 : span / step + (span % step != 0);
  if (steps > uint64_t(kMaxElements))
    return op.emitError() << "range from " << start << " to " << limit << " by "
                          << delta << " has too many elements";
  int64_t count = static_cast<int64_t>(steps);
  Tensor result(type, {count});
  for (int64_t i = 0; i < count; ++i)
    result.setInt(i, start + i * delta);
  return single(std::move(result));
}

static EvalResult evaluateReshape(ReshapeOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  FailureOr<SmallVector<int64_t>> requested =
      getShapeOperand(op, operands[1], /*allowNegative=*/true);
  if (failed(requested))
    return failure();
  SmallVector<int64_t> shape = *requested;
  int64_t inferred = -1, known = 1;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (dim == 0 && !op.getAllowzero()) {
      if (static_cast<int64_t>(i) >= input.getRank())
        return op.emitError()
               << "shape entry " << i << " is 0 (copy) but the input has rank "
               << input.getRank();
      dim = input.getShape()[i];
    }
    if (dim == -1) {
      if (inferred >= 0)
        return op.emitError() << "shape has more than one -1";
      inferred = i;
      continue;
    }
    known *= dim;
  }
  if (inferred >= 0) {
    if (known == 0 || input.getNumElements() % known != 0)
      return op.emitError()
             << "cannot infer the -1 dim: " << input.getNumElements()
             << " elements do not divide by " << known;
    shape[inferred] = input.getNumElements() / known;
  }
  if (getNumElements(shape) != input.getNumElements())
    return op.emitError() << "cannot reshape " << formatShape(input.getShape())
                          << " to " << formatShape(shape);
  return single(input.reshaped(shape));
}

static EvalResult evaluateTranspose(TransposeOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  ArrayRef<int64_t> perm = op.getPerm();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return op.emitError() << "perm has " << perm.size() << " entries for rank "
                          << input.getRank();
  SmallVector<int64_t> shape, strides;
  SmallVector<int64_t> inStrides = getStrides(input.getShape());
  for (int64_t axis : perm) {
    shape.push_back(input.getShape()[axis]);
    strides.push_back(inStrides[axis]);
  }
  std::vector<int64_t> indices;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    indices.push_back(linearize(index, strides));
  });
  return single(input.take(indices, shape));
}

static EvalResult evaluateExpand(ExpandOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  FailureOr<SmallVector<int64_t>> requested =
      getShapeOperand(op, operands[1], /*allowNegative=*/false);
  if (failed(requested))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOrError(op, input.getShape(), *requested);
  if (failed(shape))
    return failure();
  return single(input.take(broadcastIndices(input.getShape(), *shape), *shape));
}

static EvalResult evaluateSqueeze(SqueezeOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  int64_t rank = input.getRank();
  SmallVector<bool> drop(rank, false);
  if (op.getAxes().empty()) {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = input.getShape()[i] == 1;
  }
  for (int64_t axis : op.getAxes()) {
    FailureOr<int64_t> normalized = normalizeAxis(op, axis, rank);
    if (failed(normalized))
      return failure();
    if (input.getShape()[*normalized] != 1)
      return op.emitError() << "cannot squeeze dim " << *normalized
                            << " of size " << input.getShape()[*normalized];
    drop[*normalized] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      shape.push_back(input.getShape()[i]);
  return single(input.reshaped(shape));
}

static EvalResult evaluateUnsqueeze(UnsqueezeOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  int64_t rank = input.getRank() + op.getAxes().size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : op.getAxes()) {
    FailureOr<int64_t> normalized = normalizeAxis(op, axis, rank);
    if (failed(normalized))
      return failure();
    if (inserted[*normalized])
      return op.emitError() << "axis " << axis << " is repeated";
    inserted[*normalized] = true;
  }
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> inputShape = input.getShape();
  for (int64_t i = 0; i < rank; ++i) {
    if (inserted[i]) {
      shape.push_back(1);
      continue;
    }
    shape.push_back(inputShape.front());
    inputShape = inputShape.drop_front();
  }
  return single(input.reshaped(shape));
}

/// Sizes before, along and after `axis`.
static std::tuple<int64_t, int64_t, int64_t> splitAt(ArrayRef<int64_t> shape,
                                                     int64_t axis) {
  return {getNumElements(shape.take_front(axis)), shape[axis],
          getNumElements(shape.drop_front(axis + 1))};
}

static EvalResult evaluateConcat(ConcatOp op, ArrayRef<Tensor> operands) {
  if (operands.empty())
    return op.emitError() << "concat needs at least one operand";
  int64_t rank = operands[0].getRank();
  FailureOr<int64_t> axis = normalizeAxis(op, op.getAxis(), rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(operands[0].getShape());
  shape[*axis] = 0;
  for (const Tensor &operand : operands) {
    bool matches = operand.getRank() == rank;
    for (int64_t i = 0; matches && i < rank; ++i)
      matches = i == *axis || operand.getShape()[i] == shape[i];
    if (!matches)
      return op.emitError()
             << "operand of shape " << formatShape(operand.getShape())
             << " does not concatenate with "
             << formatShape(operands[0].getShape()) << " along axis " << *axis;
    shape[*axis] += operand.getShape()[*axis];
  }
  Tensor result(getResultElementType(op), shape);
  auto [outer, total, inner] = splitAt(shape, *axis);
  int64_t offset = 0;
  for (const Tensor &operand : operands) {
    int64_t size = operand.getShape()[*axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < size; ++k)
        result.copyElement(o * total * inner + offset + k, operand,
                           o * size + k);
    offset += size;
  }
  return single(std::move(result));
}

static EvalResult evaluateSplit(SplitOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  FailureOr<int64_t> axis = normalizeAxis(op, op.getAxis(), input.getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> sizes = op.getSplitSizes();
  int64_t sum = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return op.emitError() << "split size " << size << " is negative";
    sum += size;
  }
  if (sizes.size() != op->getNumResults())
    return op.emitError() << sizes.size() << " split sizes for "
                          << op->getNumResults() << " results";
  if (sum != input.getShape()[*axis])
    return op.emitError() << "split sizes sum to " << sum << ", but dim "
                          << *axis << " has size " << input.getShape()[*axis];
  auto [outer, total, inner] = splitAt(input.getShape(), *axis);
  SmallVector<Tensor> results;
  int64_t offset = 0;
  for (auto [index, size] : llvm::enumerate(sizes)) {
    SmallVector<int64_t> shape(input.getShape());
    shape[*axis] = size;
    Tensor result(getResultElementType(op, index), shape);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < size * inner; ++k)
        result.copyElement(o * size * inner + k, input,
                           o * total * inner + offset + k);
    offset += size * inner;
    results.push_back(std::move(result));
  }
  return results;
}

static EvalResult evaluateSlice(SliceOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  int64_t rank = input.getRank();
  SmallVector<int64_t> starts = getIntValues(operands[1]);
  SmallVector<int64_t> ends = getIntValues(operands[2]);
  size_t next = 3;
  SmallVector<int64_t> axes, steps;
  if (op.getAxes())
    axes = getIntValues(operands[next++]);
  else
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (op.getSteps())
    steps = getIntValues(operands[next++]);
  else
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return op.emitError() << "slice has " << starts.size() << " starts, "
                          << ends.size() << " ends, " << axes.size()
                          << " axes and " << steps.size() << " steps";
  SmallVector<int64_t> shape(input.getShape());
  SmallVector<int64_t> first(rank, 0), stride(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(op, axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return op.emitError() << "axis " << *axis << " is sliced twice";
    seen[*axis] = true;
    int64_t dim = input.getShape()[*axis], step = steps[i];
    if (step == 0)
      return op.emitError() << "slice step is 0 on axis " << *axis;
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t count;
    if (dim == 0) {
      start = 0;
      count = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end ? (start - end - step - 1) / -step : 0;
    }
    shape[*axis] = count;
    first[*axis] = start;
    stride[*axis] = step;
  }
  SmallVector<int64_t> inStrides = getStrides(input.getShape());
  std::vector<int64_t> indices;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t linear = 0;
    for (int64_t d = 0; d < rank; ++d)
      linear += (first[d] + index[d] * stride[d]) * inStrides[d];
    indices.push_back(linear);
  });
  return single(input.take(indices, shape));
}

void mlir::lmopt::reference::registerShapeEvaluators(EvaluatorTable &table) {
  table.add<ConstantOp>(evaluateConstant);
  table.add<ShapeOp>(evaluateShape);
  table.add<SizeOp>(evaluateSize);
  table.add<ConstantOfShapeOp>(evaluateConstantOfShape);
  table.add<RangeOp>(evaluateRange);
  table.add<ReshapeOp>(evaluateReshape);
  table.add<TransposeOp>(evaluateTranspose);
  table.add<ExpandOp>(evaluateExpand);
  table.add<SqueezeOp>(evaluateSqueeze);
  table.add<UnsqueezeOp>(evaluateUnsqueeze);
  table.add<ConcatOp>(evaluateConcat);
  table.add<SplitOp>(evaluateSplit);
  table.add<SliceOp>(evaluateSlice);
}
