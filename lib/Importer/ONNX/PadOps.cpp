//===- PadOps.cpp - ONNX Pad ----------------------------------------------===//
//
// Pad with known pads becomes the ops lmopt already has, one axis at a time
// as the schema defines it: negative pads slice, positive ones concatenate
// blocks on both sides. A constant-mode block is the fill value expanded to
// the block's shape; edge, reflect and wrap blocks are slices of the tensor
// padded so far.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

namespace {
enum class PadMode { Constant, Edge, Reflect, Wrap };
} // namespace

static RankedTensorType typeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

static Value createIndexVector(NodeContext &ctx, ArrayRef<int64_t> values) {
  return ctx.createConstant(KnownInts::vector(values),
                            ctx.getBuilder().getI64Type());
}

/// `input[start:end]` along `axis` (static bounds within the dim).
static Value sliceAxis(NodeContext &ctx, Value input, int64_t axis,
                       int64_t start, int64_t end) {
  SmallVector<int64_t> shape(typeOf(input).getShape());
  shape[axis] = end - start;
  auto type = RankedTensorType::get(shape, typeOf(input).getElementType());
  return ctx
      .createOp<SliceOp>(type, input, createIndexVector(ctx, {start}),
                         createIndexVector(ctx, {end}),
                         createIndexVector(ctx, {axis}),
                         createIndexVector(ctx, {1}))
      .getOutput();
}

static Value concatAxis(NodeContext &ctx, ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1)
    return parts.front();
  SmallVector<int64_t> shape(typeOf(parts.front()).getShape());
  shape[axis] = 0;
  for (Value part : parts)
    shape[axis] += typeOf(part).getDimSize(axis);
  auto type =
      RankedTensorType::get(shape, typeOf(parts.front()).getElementType());
  return ctx.createOp<ConcatOp>(type, parts, axis).getOutput();
}

/// The fill value (a scalar, or null for zero) expanded to `shape`.
static Value createFill(NodeContext &ctx, Value fill, ArrayRef<int64_t> shape,
                        Type elementType) {
  auto type = RankedTensorType::get(shape, elementType);
  if (!fill)
    return ctx
        .createOp<ConstantOp>(DenseElementsAttr::get(
            type, ctx.getBuilder().getZeroAttr(elementType)))
        .getOutput();
  SmallVector<int64_t> ones(shape.size(), 1);
  Value reshaped =
      ctx.createOp<ReshapeOp>(RankedTensorType::get(ones, elementType), fill,
                              createIndexVector(ctx, ones), false)
          .getOutput();
  return ctx.createOp<ExpandOp>(type, reshaped, createIndexVector(ctx, shape))
      .getOutput();
}

/// The block of `count` elements padded before (`before`) or after the
/// tensor along `axis`.
static Value createBlock(NodeContext &ctx, Value input, int64_t axis,
                         int64_t count, bool before, PadMode mode, Value fill) {
  RankedTensorType type = typeOf(input);
  int64_t dim = type.getDimSize(axis);
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = count;
  switch (mode) {
  case PadMode::Constant:
    return createFill(ctx, fill, shape, type.getElementType());
  case PadMode::Edge: {
    Value edge = before ? sliceAxis(ctx, input, axis, 0, 1)
                        : sliceAxis(ctx, input, axis, dim - 1, dim);
    return ctx
        .createOp<ExpandOp>(RankedTensorType::get(shape, type.getElementType()),
                            edge, createIndexVector(ctx, shape))
        .getOutput();
  }
  case PadMode::Reflect: {
    SmallVector<Value> parts;
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = before ? count - i : dim - 2 - i;
      parts.push_back(sliceAxis(ctx, input, axis, index, index + 1));
    }
    return concatAxis(ctx, parts, axis);
  }
  case PadMode::Wrap:
    break;
  }
  // Wrap: getMode admits only the four modes, so every other one returned.
  return before ? sliceAxis(ctx, input, axis, dim - count, dim)
                : sliceAxis(ctx, input, axis, 0, count);
}

static FailureOr<PadMode> getMode(NodeContext &ctx) {
  FailureOr<std::string> mode = ctx.getString("mode", "constant");
  if (failed(mode))
    return failure();
  std::optional<PadMode> kind =
      llvm::StringSwitch<std::optional<PadMode>>(*mode)
          .Case("constant", PadMode::Constant)
          .Case("edge", PadMode::Edge)
          .Case("reflect", PadMode::Reflect)
          .Case("wrap", PadMode::Wrap)
          .Default(std::nullopt);
  if (!kind)
    return ctx.emitError() << "attribute 'mode' must be 'constant', 'edge', "
                              "'reflect' or 'wrap', got '"
                           << *mode << "'";
  return *kind;
}

/// Pads before and after each axis: [b0, b1, ..., a0, a1, ...] over
/// `axes` (all axes when empty).
static FailureOr<SmallVector<std::pair<int64_t, int64_t>>>
getPads(NodeContext &ctx, int64_t rank) {
  FailureOr<SmallVector<int64_t>> pads = ctx.getOpset() < 11
                                             ? ctx.getInts("pads")
                                             : ctx.getConstantInts(1, "pads");
  if (failed(pads))
    return failure();
  SmallVector<int64_t> axes;
  if (ctx.getOpset() >= 18 && ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = ctx.getConstantInts(3, "axes");
    if (failed(given))
      return failure();
    FailureOr<SmallVector<int64_t>> normalized =
        ctx.normalizeAxes(*given, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    for (int64_t axis = 0; axis < rank; ++axis)
      axes.push_back(axis);
  }
  if (pads->size() != 2 * axes.size())
    return ctx.emitError() << "'pads' has " << pads->size()
                           << " values; it needs 2 per padded axis ("
                           << 2 * axes.size() << ")";
  SmallVector<std::pair<int64_t, int64_t>> perAxis(rank, {0, 0});
  for (auto [i, axis] : llvm::enumerate(axes))
    perAxis[axis] = {(*pads)[i], (*pads)[i + axes.size()]};
  return perAxis;
}

static LogicalResult convertPad(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, ctx.getOpset() < 11   ? 1
                                : ctx.getOpset() < 18 ? 3
                                                      : 4)))
    return failure();
  FailureOr<PadMode> mode = getMode(ctx);
  if (failed(mode))
    return failure();
  Value result = ctx.getInput(0);
  RankedTensorType type = typeOf(result);
  FailureOr<SmallVector<std::pair<int64_t, int64_t>>> pads =
      getPads(ctx, type.getRank());
  if (failed(pads))
    return failure();
  Value fill;
  if (ctx.getOpset() < 11) {
    FailureOr<float> value = ctx.getFloat("value", 0.0f);
    if (failed(value))
      return failure();
    if (*value != 0.0f) {
      auto scalar = RankedTensorType::get({}, type.getElementType());
      auto floatType = llvm::dyn_cast<FloatType>(type.getElementType());
      if (!floatType)
        return ctx.emitError() << "attribute 'value' needs a float tensor";
      fill = ctx
                 .createOp<ConstantOp>(DenseElementsAttr::get(
                     scalar, ctx.getBuilder().getFloatAttr(floatType, *value)))
                 .getOutput();
    }
  } else if (ctx.hasInput(2)) {
    fill = ctx.getInput(2);
    if (typeOf(fill).getElementType() != type.getElementType() ||
        typeOf(fill).getNumElements() != 1)
      return ctx.emitError() << "'constant_value' must be one element of the "
                                "data's type, got "
                             << typeOf(fill);
  }
  for (auto [axis, pad] : llvm::enumerate(*pads)) {
    auto [before, after] = pad;
    if (!before && !after)
      continue;
    int64_t dim = typeOf(result).getDimSize(axis);
    bool otherDimsStatic = llvm::all_of(
        llvm::enumerate(typeOf(result).getShape()), [&](auto entry) {
          return entry.index() == axis || !ShapedType::isDynamic(entry.value());
        });
    if (ShapedType::isDynamic(dim) || !otherDimsStatic)
      return ctx.emitError()
             << "padding axis " << axis << " of " << typeOf(result)
             << " needs static dims (pin the input shapes)";
    // Negative pads remove elements first.
    int64_t start = std::max<int64_t>(-before, 0);
    int64_t end = dim - std::max<int64_t>(-after, 0);
    if (start > end)
      return ctx.emitError()
             << "pads " << before << " and " << after
             << " remove more than the " << dim << " elements of axis " << axis;
    if (start != 0 || end != dim) {
      result = sliceAxis(ctx, result, axis, start, end);
      dim = end - start;
    }
    before = std::max<int64_t>(before, 0);
    after = std::max<int64_t>(after, 0);
    if (*mode != PadMode::Constant &&
        (dim == 0 ||
         (*mode == PadMode::Reflect && (before >= dim || after >= dim)) ||
         (*mode == PadMode::Wrap && (before > dim || after > dim))))
      return ctx.emitError()
             << "pads " << before << " and " << after << " of axis " << axis
             << " (" << dim << " elements) are too large for this mode";
    SmallVector<Value> parts;
    if (before)
      parts.push_back(
          createBlock(ctx, result, axis, before, /*before=*/true, *mode, fill));
    parts.push_back(result);
    if (after)
      parts.push_back(
          createBlock(ctx, result, axis, after, /*before=*/false, *mode, fill));
    result = concatAxis(ctx, parts, axis);
  }
  ctx.setOutput(0, result);
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kPadConverters[] = {
    {"", "Pad", 2, kMax, convertPad},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getPadConverters() {
  return kPadConverters;
}
