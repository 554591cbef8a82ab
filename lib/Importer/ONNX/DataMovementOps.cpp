//===- DataMovementOps.cpp - ONNX gather, slice, concat, ... --------------===//
//
// Operators that move data without arithmetic. When their input is a known
// integer vector (a shape being computed), the result is known too.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

static void setFoldedOutput(NodeContext &ctx, std::optional<KnownInts> known,
                            Type elementType, function_ref<Value()> build) {
  if (known && known->isFullyKnown()) {
    ctx.setOutput(0, ctx.createConstant(*known, elementType), known);
    return;
  }
  ctx.setOutput(0, build(), std::move(known));
}

static LogicalResult convertGather(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<int64_t> axisAttr = ctx.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  RankedTensorType data = ctx.getInputType(0), indices = ctx.getInputType(1);
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, data.getRank());
  if (!axis)
    return ctx.emitError() << "axis " << *axisAttr
                           << " is out of range for rank " << data.getRank();
  if (!indices.getElementType().isInteger(32) &&
      !indices.getElementType().isInteger(64))
    return ctx.emitError() << "indices must be i32 or i64, got "
                           << indices.getElementType();
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));

  // Gathering from a known vector with known indices (Shape -> Gather).
  std::optional<KnownInts> known;
  const KnownInts *knownData = ctx.getKnown(0);
  const KnownInts *knownIndices = ctx.getKnown(1);
  int64_t axisSize = data.getDimSize(*axis);
  if (!ShapedType::isDynamic(axisSize) && knownIndices &&
      knownIndices->isFullyKnown()) {
    for (int64_t index : knownIndices->values)
      if (index < -axisSize || index >= axisSize)
        return ctx.emitError()
               << "index " << index << " is out of range for an axis of size "
               << axisSize;
    if (knownData && data.getRank() == 1) {
      known.emplace();
      known->shape = shape;
      for (int64_t index : knownIndices->values)
        known->values.push_back(
            knownData->values[index < 0 ? index + axisSize : index]);
    }
  }
  auto type = RankedTensorType::get(shape, data.getElementType());
  setFoldedOutput(ctx, known, data.getElementType(), [&] {
    return ctx.createOp<GatherOp>(type, ctx.getInput(0), ctx.getInput(1), *axis)
        .getOutput();
  });
  return success();
}

static LogicalResult convertGatherElements(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<int64_t> axisAttr = ctx.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  RankedTensorType data = ctx.getInputType(0), indices = ctx.getInputType(1);
  if (data.getRank() != indices.getRank())
    return ctx.emitError() << "indices rank " << indices.getRank()
                           << " does not match data rank " << data.getRank();
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, data.getRank());
  if (!axis)
    return ctx.emitError() << "axis " << *axisAttr
                           << " is out of range for rank " << data.getRank();
  auto type = RankedTensorType::get(indices.getShape(), data.getElementType());
  ctx.setOutput(0, ctx.createOp<GatherElementsOp>(type, ctx.getInput(0),
                                                  ctx.getInput(1), *axis)
                       .getOutput());
  return success();
}

static LogicalResult convertGatherND(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<int64_t> batchDims = ctx.getInt("batch_dims", 0);
  if (failed(batchDims))
    return failure();
  RankedTensorType data = ctx.getInputType(0), indices = ctx.getInputType(1);
  if (!indices.getElementType().isInteger(64))
    return ctx.emitError() << "indices must be i64, got "
                           << indices.getElementType();
  int64_t minRank = std::min(data.getRank(), indices.getRank());
  if (*batchDims < 0 || *batchDims >= minRank)
    return ctx.emitError() << "batch_dims " << *batchDims << " must be in [0, "
                           << minRank << ")";
  int64_t tuple = indices.getShape().back();
  if (ShapedType::isDynamic(tuple) || tuple < 1 ||
      *batchDims + tuple > data.getRank())
    return ctx.emitError() << "last dim of indices (" << formatShape({tuple})
                           << ") must be static and fit data of rank "
                           << data.getRank();
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(*batchDims + tuple));
  auto type = RankedTensorType::get(shape, data.getElementType());
  ctx.setOutput(0, ctx.createOp<GatherNDOp>(type, ctx.getInput(0),
                                            ctx.getInput(1), *batchDims)
                       .getOutput());
  return success();
}

/// ScatterND: `reduction` (opset 16: add and mul; 18: max and min) becomes
/// the op's enum; the output has data's type.
static LogicalResult convertScatterND(NodeContext &ctx) {
  if (failed(ctx.checkInputs(3, 3)))
    return failure();
  FailureOr<std::string> reduction = ctx.getString("reduction", "none");
  if (failed(reduction))
    return failure();
  std::optional<ScatterReduction> kind = symbolizeScatterReduction(*reduction);
  if (!kind)
    return ctx.emitError() << "reduction '" << *reduction
                           << "' is not one of none, add, mul, max, min";
  RankedTensorType data = ctx.getInputType(0), indices = ctx.getInputType(1),
                   updates = ctx.getInputType(2);
  if (!indices.getElementType().isInteger(64))
    return ctx.emitError() << "indices must be i64, got "
                           << indices.getElementType();
  if (updates.getElementType() != data.getElementType())
    return ctx.emitError() << "updates of type " << updates.getElementType()
                           << " for data of type " << data.getElementType();
  int64_t tuple = indices.getRank() ? indices.getShape().back() : 0;
  if (ShapedType::isDynamic(tuple) || tuple < 1 || tuple > data.getRank())
    return ctx.emitError() << "last dim of indices ("
                           << formatShape(indices.getShape())
                           << ") must be static and fit data of rank "
                           << data.getRank();
  if (*kind != ScatterReduction::none && data.getElementType().isInteger(1))
    return ctx.emitError() << "reduction '" << *reduction << "' over bool data";
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(tuple));
  if (!isCompatibleShape(updates.getShape(), expected))
    return ctx.emitError() << "updates " << formatShape(updates.getShape())
                           << " do not match indices.shape[:-1] + data.shape["
                           << tuple << ":] = " << formatShape(expected);
  auto op = ctx.createOp<ScatterNDOp>(data, ctx.getInput(0), ctx.getInput(1),
                                      ctx.getInput(2), *kind);
  ctx.setOutput(0, op.getOutput());
  return success();
}

/// Flatten is a Reshape to 2-D; the shape operand uses -1 for the side that
/// is not static.
static LogicalResult convertFlatten(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  FailureOr<int64_t> axisAttr = ctx.getInt("axis", 1);
  if (failed(axisAttr))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  int64_t rank = type.getRank();
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  if (axis < 0 || axis > rank)
    return ctx.emitError() << "axis " << *axisAttr
                           << " is out of range for rank " << rank;
  auto product = [](ArrayRef<int64_t> dims) -> int64_t {
    int64_t result = 1;
    for (int64_t dim : dims)
      if (ShapedType::isDynamic(dim) || llvm::MulOverflow(result, dim, result))
        return ShapedType::kDynamic;
    return result;
  };
  int64_t outer = product(type.getShape().take_front(axis));
  int64_t inner = product(type.getShape().drop_front(axis));
  if (ShapedType::isDynamic(outer) && ShapedType::isDynamic(inner))
    return ctx.emitError() << "flattening " << formatShape(type.getShape())
                           << " at axis " << axis
                           << " needs one side of static size";
  KnownInts shape =
      KnownInts::vector({ShapedType::isDynamic(outer) ? -1 : outer,
                         ShapedType::isDynamic(inner) ? -1 : inner});
  Value shapeValue = ctx.createConstant(shape, ctx.getBuilder().getI64Type());
  auto resultType =
      RankedTensorType::get({outer, inner}, type.getElementType());
  ctx.setOutput(
      0, ctx.createOp<ReshapeOp>(resultType, ctx.getInput(0), shapeValue, false)
             .getOutput());
  return success();
}

/// Axes of Squeeze/Unsqueeze: an attribute before opset 13, then an input.
static FailureOr<SmallVector<int64_t>> getAxes(NodeContext &ctx,
                                               bool optional) {
  if (ctx.getOpset() < 13)
    return ctx.getInts(
        "axes", optional ? std::optional<ArrayRef<int64_t>>(ArrayRef<int64_t>())
                         : std::nullopt);
  if (!ctx.hasInput(1)) {
    if (optional)
      return SmallVector<int64_t>();
    return ctx.emitError() << "required input 'axes' is missing";
  }
  return ctx.getConstantInts(1, "axes");
}

static LogicalResult convertUnsqueeze(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, ctx.getOpset() < 13 ? 1 : 2)))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = getAxes(ctx, /*optional=*/false);
  if (failed(axes))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  int64_t rank = type.getRank() + axes->size();
  FailureOr<SmallVector<int64_t>> normalized = ctx.normalizeAxes(*axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  const int64_t *next = type.getShape().begin();
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(llvm::is_contained(*normalized, i) ? 1 : *next++);
  std::optional<KnownInts> known;
  if (const KnownInts *data = ctx.getKnown(0))
    known = KnownInts{shape, data->values};
  setFoldedOutput(ctx, known, type.getElementType(), [&] {
    return ctx
        .createOp<UnsqueezeOp>(
            RankedTensorType::get(shape, type.getElementType()),
            ctx.getInput(0), *axes)
        .getOutput();
  });
  return success();
}

static LogicalResult convertSqueeze(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, ctx.getOpset() < 13 ? 1 : 2)))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = getAxes(ctx, /*optional=*/true);
  if (failed(axes))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  FailureOr<SmallVector<int64_t>> normalized =
      ctx.normalizeAxes(*axes, type.getRank());
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(type.getShape())) {
    bool listed = llvm::is_contained(*normalized, static_cast<int64_t>(i));
    if (axes->empty() && ShapedType::isDynamic(dim))
      return ctx.emitError() << "squeezing without 'axes' needs static dims, "
                                "but dim "
                             << i << " is dynamic";
    if (listed && !ShapedType::isDynamic(dim) && dim != 1)
      return ctx.emitError()
             << "cannot squeeze dim " << i << " of size " << dim;
    if (!(axes->empty() ? dim == 1 : listed))
      shape.push_back(dim);
  }
  std::optional<KnownInts> known;
  if (const KnownInts *data = ctx.getKnown(0))
    known = KnownInts{shape, data->values};
  setFoldedOutput(ctx, known, type.getElementType(), [&] {
    return ctx
        .createOp<SqueezeOp>(
            RankedTensorType::get(shape, type.getElementType()),
            ctx.getInput(0), *axes)
        .getOutput();
  });
  return success();
}

static LogicalResult convertConcat(NodeContext &ctx) {
  size_t numInputs = ctx.getNumInputs();
  if (failed(ctx.checkInputs(1, std::max<size_t>(numInputs, 1))))
    return failure();
  FailureOr<int64_t> axisAttr = ctx.getInt("axis");
  if (failed(axisAttr))
    return failure();
  RankedTensorType first = ctx.getInputType(0);
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, first.getRank());
  if (!axis)
    return ctx.emitError() << "axis " << *axisAttr
                           << " is out of range for rank " << first.getRank();
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  SmallVector<Value> inputs;
  bool allKnown = first.getRank() == 1;
  for (size_t i = 0; i < numInputs; ++i) {
    RankedTensorType type = ctx.getInputType(i);
    if (!type)
      return ctx.emitError() << "input " << i << " is missing";
    if (type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return ctx.emitError() << "input " << i << " of type " << type
                             << " does not match input 0 of type " << first;
    for (auto [d, dim] : llvm::enumerate(type.getShape())) {
      if (static_cast<int64_t>(d) == *axis) {
        shape[d] = ShapedType::isDynamic(dim) || ShapedType::isDynamic(shape[d])
                       ? ShapedType::kDynamic
                       : shape[d] + dim;
      } else if (ShapedType::isDynamic(shape[d])) {
        shape[d] = dim;
      } else if (!ShapedType::isDynamic(dim) && dim != shape[d]) {
        return ctx.emitError()
               << "inputs differ in dim " << d << " (" << shape[d] << " vs "
               << dim << ") outside the concatenation axis";
      }
    }
    allKnown &= ctx.getKnown(i) != nullptr;
    inputs.push_back(ctx.getInput(i));
  }
  std::optional<KnownInts> known;
  if (allKnown) {
    known.emplace();
    for (size_t i = 0; i < numInputs; ++i)
      llvm::append_range(known->values, ctx.getKnown(i)->values);
    known->shape = {known->getNumElements()};
  }
  auto type = RankedTensorType::get(shape, first.getElementType());
  setFoldedOutput(ctx, known, first.getElementType(), [&] {
    return ctx.createOp<ConcatOp>(type, inputs, *axis).getOutput();
  });
  return success();
}

/// ONNX Slice on one static axis: the first index read and the length.
static std::pair<int64_t, int64_t> sliceAxis(int64_t dim, int64_t start,
                                             int64_t end, int64_t step) {
  if (dim == 0)
    return {0, 0};
  // Any stride longer than the axis reads one element; this also keeps -step
  // from overflowing.
  step = std::clamp<int64_t>(step, -dim - 1, dim + 1);
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    int64_t length = end > start ? (end - start - 1) / step + 1 : 0;
    return {start, length};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  int64_t length = start > end ? (start - end - 1) / (-step) + 1 : 0;
  return {start, length};
}

static LogicalResult convertSlice(NodeContext &ctx) {
  if (failed(ctx.checkInputs(3, 5)))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  int64_t rank = type.getRank();
  const KnownInts *starts = ctx.getKnown(1), *ends = ctx.getKnown(2);
  const KnownInts *axesKnown = ctx.hasInput(3) ? ctx.getKnown(3) : nullptr;
  const KnownInts *stepsKnown = ctx.hasInput(4) ? ctx.getKnown(4) : nullptr;
  SmallVector<int64_t> shape(type.getShape());
  bool paramsKnown =
      starts && ends && starts->isFullyKnown() && ends->isFullyKnown() &&
      (!ctx.hasInput(3) || (axesKnown && axesKnown->isFullyKnown())) &&
      (!ctx.hasInput(4) || (stepsKnown && stepsKnown->isFullyKnown()));
  std::optional<KnownInts> known;
  if (!paramsKnown) {
    // Without the parameters only the rank is known (or the sliced axes).
    shape.assign(rank, ShapedType::kDynamic);
  } else {
    size_t count = starts->values.size();
    if (ends->values.size() != count ||
        (axesKnown && axesKnown->values.size() != count) ||
        (stepsKnown && stepsKnown->values.size() != count))
      return ctx.emitError()
             << "starts, ends, axes and steps must have one length";
    SmallVector<int64_t> axes;
    for (size_t i = 0; i < count; ++i)
      axes.push_back(axesKnown ? axesKnown->values[i] : i);
    FailureOr<SmallVector<int64_t>> normalized = ctx.normalizeAxes(axes, rank);
    if (failed(normalized))
      return failure();
    SmallVector<int64_t> firsts(rank, 0), steps(rank, 1);
    for (size_t i = 0; i < count; ++i) {
      int64_t axis = (*normalized)[i];
      int64_t step = stepsKnown ? stepsKnown->values[i] : 1;
      if (step == 0)
        return ctx.emitError() << "step of axis " << axis << " is zero";
      int64_t dim = type.getDimSize(axis);
      if (ShapedType::isDynamic(dim)) {
        shape[axis] = ShapedType::kDynamic;
        continue;
      }
      auto [first, length] =
          sliceAxis(dim, starts->values[i], ends->values[i], step);
      shape[axis] = length;
      firsts[axis] = first;
      steps[axis] = step;
    }
    const KnownInts *data = ctx.getKnown(0);
    if (data && rank == 1 && !ShapedType::isDynamic(shape[0])) {
      known.emplace();
      known->shape = {shape[0]};
      for (int64_t i = 0; i < shape[0]; ++i)
        known->values.push_back(data->values[firsts[0] + i * steps[0]]);
    }
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  setFoldedOutput(ctx, known, type.getElementType(), [&] {
    return ctx
        .createOp<SliceOp>(resultType, ctx.getInput(0), ctx.getInput(1),
                           ctx.getInput(2), ctx.getInput(3), ctx.getInput(4))
        .getOutput();
  });
  return success();
}

static LogicalResult convertTranspose(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  SmallVector<int64_t> reversed;
  for (int64_t i = type.getRank() - 1; i >= 0; --i)
    reversed.push_back(i);
  FailureOr<SmallVector<int64_t>> perm = ctx.getInts("perm", reversed);
  if (failed(perm))
    return failure();
  SmallVector<bool> seen(type.getRank(), false);
  if (static_cast<int64_t>(perm->size()) != type.getRank())
    return ctx.emitError() << "perm has " << perm->size()
                           << " entries for an input of rank "
                           << type.getRank();
  SmallVector<int64_t> shape;
  for (int64_t p : *perm) {
    if (p < 0 || p >= type.getRank() || seen[p])
      return ctx.emitError()
             << "perm is not a permutation of " << type.getRank() << " dims";
    seen[p] = true;
    shape.push_back(type.getDimSize(p));
  }
  ctx.setOutput(0, ctx.createOp<TransposeOp>(
                          RankedTensorType::get(shape, type.getElementType()),
                          ctx.getInput(0), *perm)
                       .getOutput());
  return success();
}

static LogicalResult convertSplit(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, ctx.getOpset() < 13 ? 1 : 2)))
    return failure();
  FailureOr<int64_t> axisAttr = ctx.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, type.getRank());
  if (!axis)
    return ctx.emitError() << "axis " << *axisAttr
                           << " is out of range for rank " << type.getRank();
  size_t numOutputs = ctx.getNumOutputs();
  FailureOr<SmallVector<int64_t>> sizes = SmallVector<int64_t>();
  if (ctx.getOpset() < 13 && ctx.hasAttr("split"))
    sizes = ctx.getInts("split");
  else if (ctx.getOpset() >= 13 && ctx.hasInput(1))
    sizes = ctx.getConstantInts(1, "split");
  if (failed(sizes))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  if (sizes->empty()) {
    if (ShapedType::isDynamic(dim))
      return ctx.emitError() << "splitting dynamic dim " << *axis
                             << " without explicit sizes is not supported";
    FailureOr<int64_t> numParts =
        ctx.getOpset() >= 18
            ? ctx.getInt("num_outputs", static_cast<int64_t>(numOutputs))
            : FailureOr<int64_t>(numOutputs);
    if (failed(numParts))
      return failure();
    if (*numParts <= 0 || *numParts != static_cast<int64_t>(numOutputs))
      return ctx.emitError()
             << "'num_outputs' " << *numParts << " does not match the "
             << numOutputs << " outputs";
    // Equal parts; from opset 18 the last may be smaller.
    int64_t part = (dim + *numParts - 1) / *numParts;
    if (ctx.getOpset() < 18 && dim % *numParts != 0)
      return ctx.emitError() << "dim " << dim << " does not split into "
                             << *numParts << " equal parts";
    for (int64_t i = 0, left = dim; i < *numParts; ++i, left -= part)
      sizes->push_back(std::max<int64_t>(std::min(part, left), 0));
  }
  if (sizes->size() != numOutputs)
    return ctx.emitError() << "has " << numOutputs << " outputs but "
                           << sizes->size() << " split sizes";
  int64_t total = 0;
  SmallVector<Type> resultTypes;
  for (int64_t size : *sizes) {
    if (size < 0)
      return ctx.emitError() << "split size " << size << " is negative";
    total += size;
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = size;
    resultTypes.push_back(RankedTensorType::get(shape, type.getElementType()));
  }
  if (!ShapedType::isDynamic(dim) && total != dim)
    return ctx.emitError() << "split sizes add up to " << total
                           << " but the axis has " << dim << " entries";
  auto op = ctx.createOp<SplitOp>(resultTypes, ctx.getInput(0), *axis, *sizes);
  for (auto [i, result] : llvm::enumerate(op.getOutputs()))
    ctx.setOutput(i, result);
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kDataMovementConverters[] = {
    {"", "Gather", 1, kMax, convertGather},
    {"", "GatherElements", 11, kMax, convertGatherElements},
    {"", "GatherND", 12, kMax, convertGatherND},
    {"", "ScatterND", 11, kMax, convertScatterND},
    {"", "Flatten", 1, kMax, convertFlatten},
    {"", "Unsqueeze", 1, kMax, convertUnsqueeze},
    {"", "Squeeze", 1, kMax, convertSqueeze},
    {"", "Concat", 4, kMax, convertConcat},
    {"", "Slice", 10, kMax, convertSlice},
    {"", "Transpose", 1, kMax, convertTranspose},
    {"", "Split", 2, kMax, convertSplit},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getDataMovementConverters() {
  return kDataMovementConverters;
}
