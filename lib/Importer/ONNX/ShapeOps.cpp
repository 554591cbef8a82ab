//===- ShapeOps.cpp - ONNX constants and shape arithmetic -----------------===//
//
// Constant, Shape, Size, ConstantOfShape, Range, Reshape and Expand. Shape
// vectors are tracked entry by entry (KnownInts), so a Reshape fed by
// Shape -> Gather -> Concat gets every dim that is static in its input, and
// fully known vectors become constants.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

/// Sets output 0 to a constant when `known` is fully known, else to `value`.
static void setFoldedOutput(NodeContext &ctx, std::optional<KnownInts> known,
                            Type elementType, function_ref<Value()> build) {
  if (known && known->isFullyKnown()) {
    ctx.setOutput(0, ctx.createConstant(*known, elementType), known);
    return;
  }
  ctx.setOutput(0, build(), std::move(known));
}

static LogicalResult convertConstant(NodeContext &ctx) {
  if (failed(ctx.checkInputs(0, 0)))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  std::optional<ElementsAttr> attr;
  if (ctx.hasAttr("value")) {
    FailureOr<ElementsAttr> value = ctx.getTensor("value");
    if (failed(value))
      return failure();
    attr = *value;
  } else if (ctx.hasAttr("value_float")) {
    FailureOr<float> value = ctx.getFloat("value_float");
    if (failed(value))
      return failure();
    attr = DenseElementsAttr::get(RankedTensorType::get({}, f32), *value);
  } else if (ctx.hasAttr("value_floats")) {
    FailureOr<SmallVector<float>> value = ctx.getFloats("value_floats");
    if (failed(value))
      return failure();
    attr = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(value->size())}, f32),
        ArrayRef<float>(*value));
  } else if (ctx.hasAttr("value_int")) {
    FailureOr<int64_t> value = ctx.getInt("value_int");
    if (failed(value))
      return failure();
    attr = DenseElementsAttr::get(RankedTensorType::get({}, i64), *value);
  } else if (ctx.hasAttr("value_ints")) {
    FailureOr<SmallVector<int64_t>> value = ctx.getInts("value_ints");
    if (failed(value))
      return failure();
    attr = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(value->size())}, i64),
        ArrayRef<int64_t>(*value));
  } else {
    return ctx.emitError()
           << "needs one of the attributes 'value', 'value_float', "
              "'value_floats', 'value_int' or 'value_ints' (sparse and string "
              "constants are not supported)";
  }
  auto dense = llvm::dyn_cast<DenseIntElementsAttr>(*attr);
  std::optional<KnownInts> known;
  if (dense && dense.getNumElements() <= kMaxKnownElements)
    known = KnownInts::fromAttr(dense);
  ctx.setOutput(0, ctx.createOp<ConstantOp>(*attr).getOutput(), known);
  return success();
}

static LogicalResult convertShape(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  FailureOr<int64_t> start = ctx.getInt("start", 0);
  if (failed(start))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  int64_t rank = type.getRank();
  auto clamp = [rank](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  std::optional<int64_t> end;
  if (ctx.hasAttr("end")) {
    FailureOr<int64_t> value = ctx.getInt("end");
    if (failed(value))
      return failure();
    end = *value;
  }
  int64_t first = clamp(*start), last = clamp(end.value_or(rank));
  ArrayRef<int64_t> dims =
      type.getShape().slice(first, std::max<int64_t>(last - first, 0));
  KnownInts known = KnownInts::vector(dims);
  Type i64 = ctx.getBuilder().getI64Type();
  setFoldedOutput(ctx, known, i64, [&] {
    OpBuilder &b = ctx.getBuilder();
    auto op = ctx.createOp<ShapeOp>(
        RankedTensorType::get({known.getNumElements()}, i64), ctx.getInput(0),
        b.getI64IntegerAttr(*start),
        end ? b.getI64IntegerAttr(*end) : IntegerAttr());
    return op.getOutput();
  });
  return success();
}

static LogicalResult convertSize(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  Type i64 = ctx.getBuilder().getI64Type();
  std::optional<KnownInts> known;
  if (type.hasStaticShape())
    known = KnownInts::scalar(type.getNumElements());
  setFoldedOutput(ctx, known, i64, [&] {
    return ctx.createOp<SizeOp>(RankedTensorType::get({}, i64), ctx.getInput(0))
        .getOutput();
  });
  return success();
}

/// The entries of a 1-D shape operand, kDynamic where unknown; fails when
/// its length is not static.
static FailureOr<SmallVector<int64_t>> getShapeOperand(NodeContext &ctx,
                                                       size_t index) {
  RankedTensorType type = ctx.getInputType(index);
  if (type.getRank() != 1 || !type.getElementType().isInteger(64))
    return ctx.emitError() << "shape operand must be a 1-D i64 tensor, got "
                           << type;
  if (const KnownInts *known = ctx.getKnown(index))
    return known->values;
  if (type.isDynamicDim(0))
    return ctx.emitError() << "shape operand has a dynamic length, so the "
                              "result rank is unknown";
  return SmallVector<int64_t>(type.getDimSize(0), ShapedType::kDynamic);
}

static LogicalResult convertConstantOfShape(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  TypedAttr value = b.getF32FloatAttr(0.0f);
  if (ctx.hasAttr("value")) {
    FailureOr<ElementsAttr> tensor = ctx.getTensor("value");
    if (failed(tensor))
      return failure();
    auto dense = llvm::dyn_cast<DenseElementsAttr>(*tensor);
    if (!dense || dense.getNumElements() != 1)
      return ctx.emitError() << "attribute 'value' must hold one element";
    value = llvm::cast<TypedAttr>(*dense.value_begin<Attribute>());
  }
  FailureOr<SmallVector<int64_t>> dims = getShapeOperand(ctx, 0);
  if (failed(dims))
    return failure();
  for (int64_t dim : *dims)
    if (!ShapedType::isDynamic(dim) && dim < 0)
      return ctx.emitError() << "shape has negative dim " << dim;
  auto type = RankedTensorType::get(*dims, value.getType());
  if (type.hasStaticShape()) {
    auto attr = DenseElementsAttr::get(type, value);
    std::optional<KnownInts> known;
    if (auto intValue = llvm::dyn_cast<IntegerAttr>(value);
        intValue && type.getNumElements() <= kMaxKnownElements)
      known =
          KnownInts{llvm::to_vector(type.getShape()),
                    SmallVector<int64_t>(type.getNumElements(),
                                         intValue.getValue().getSExtValue())};
    ctx.setOutput(0, ctx.createOp<ConstantOp>(attr).getOutput(), known);
    return success();
  }
  ctx.setOutput(0, ctx.createOp<ConstantOfShapeOp>(type, ctx.getInput(0), value)
                       .getOutput());
  return success();
}

/// A float scalar operand's value when it is a constant.
static std::optional<double> getConstantFloatScalar(Value value) {
  auto constant = value ? value.getDefiningOp<ConstantOp>() : ConstantOp();
  auto dense = constant
                   ? llvm::dyn_cast<DenseFPElementsAttr>(constant.getValue())
                   : DenseFPElementsAttr();
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  return (*dense.getValues<APFloat>().begin()).convertToDouble();
}

/// The length of a float Range whose operands are constants (ONNX's
/// max(ceil((limit - start) / delta), 0)), else kDynamic.
static FailureOr<int64_t> getFloatRangeLength(NodeContext &ctx) {
  std::optional<double> start = getConstantFloatScalar(ctx.getInput(0)),
                        limit = getConstantFloatScalar(ctx.getInput(1)),
                        delta = getConstantFloatScalar(ctx.getInput(2));
  if (!start || !limit || !delta)
    return ShapedType::kDynamic;
  double count = std::ceil((*limit - *start) / *delta);
  if (!(std::isfinite(count) && count <= static_cast<double>(INT32_MAX)))
    return ctx.emitError() << "range from " << *start << " to " << *limit
                           << " by " << *delta
                           << " does not have a finite length that fits";
  return std::max<int64_t>(static_cast<int64_t>(count), 0);
}

/// Opset 27 Range on float16/bfloat16 computes in `stash_type` (float by
/// default): the scalars are cast up, the sequence is made there and cast
/// back, as the schema specifies.
static LogicalResult convertStashedRange(NodeContext &ctx, Type elementType) {
  FailureOr<Type> stashed = ctx.getStashType();
  if (failed(stashed))
    return failure();
  Type stashType = *stashed;
  FailureOr<int64_t> length = getFloatRangeLength(ctx);
  if (failed(length))
    return failure();
  auto scalarType = RankedTensorType::get({}, stashType);
  SmallVector<Value, 3> operands;
  for (size_t i = 0; i < 3; ++i)
    operands.push_back(
        ctx.createOp<CastOp>(scalarType, ctx.getInput(i)).getOutput());
  Value range =
      ctx.createOp<RangeOp>(RankedTensorType::get({*length}, stashType),
                            operands[0], operands[1], operands[2])
          .getOutput();
  auto resultType = RankedTensorType::get({*length}, elementType);
  ctx.setOutput(0, ctx.createOp<CastOp>(resultType, range).getOutput());
  return success();
}

static LogicalResult convertRange(NodeContext &ctx) {
  if (failed(ctx.checkInputs(3, 3)))
    return failure();
  Type elementType = ctx.getInputType(0).getElementType();
  for (size_t i = 0; i < 3; ++i)
    if (ctx.getInputType(i).getRank() != 0 ||
        ctx.getInputType(i).getElementType() != elementType)
      return ctx.emitError() << "start, limit and delta must be scalars of "
                                "one element type, got "
                             << ctx.getInputType(i);
  if (ctx.getOpset() >= 27 && llvm::isa<Float16Type, BFloat16Type>(elementType))
    return convertStashedRange(ctx, elementType);
  int64_t length = ShapedType::kDynamic;
  if (llvm::isa<FloatType>(elementType)) {
    FailureOr<int64_t> floatLength = getFloatRangeLength(ctx);
    if (failed(floatLength))
      return failure();
    length = *floatLength;
  }
  const KnownInts *start = ctx.getKnown(0), *limit = ctx.getKnown(1),
                  *delta = ctx.getKnown(2);
  std::optional<KnownInts> known;
  if (start && limit && delta && start->isFullyKnown() &&
      limit->isFullyKnown() && delta->isFullyKnown()) {
    int64_t s = start->values[0], l = limit->values[0], d = delta->values[0];
    if (d == 0)
      return ctx.emitError() << "delta is zero";
    // ceil((l - s) / d) without overflow for the sizes that matter.
    double count = std::ceil((static_cast<double>(l) - static_cast<double>(s)) /
                             static_cast<double>(d));
    if (count > static_cast<double>(INT32_MAX))
      return ctx.emitError()
             << "range of " << count << " elements is too large";
    length = std::max<int64_t>(static_cast<int64_t>(count), 0);
    if (length <= kMaxKnownElements) {
      known.emplace();
      known->shape = {length};
      for (int64_t i = 0; i < length; ++i)
        known->values.push_back(s + i * d);
    }
  }
  auto type = RankedTensorType::get({length}, elementType);
  setFoldedOutput(ctx, known, elementType, [&] {
    return ctx
        .createOp<RangeOp>(type, ctx.getInput(0), ctx.getInput(1),
                           ctx.getInput(2))
        .getOutput();
  });
  return success();
}

static LogicalResult convertReshape(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<int64_t> allowZero = ctx.getInt("allowzero", 0);
  FailureOr<SmallVector<int64_t>> requested = getShapeOperand(ctx, 1);
  if (failed(allowZero) || failed(requested))
    return failure();
  RankedTensorType inputType = ctx.getInputType(0);
  SmallVector<int64_t> shape;
  int64_t inferredIndex = -1;
  for (auto [i, dim] : llvm::enumerate(*requested)) {
    if (ShapedType::isDynamic(dim)) {
      shape.push_back(ShapedType::kDynamic);
    } else if (dim == -1) {
      if (inferredIndex >= 0)
        return ctx.emitError() << "shape has more than one -1";
      inferredIndex = i;
      shape.push_back(ShapedType::kDynamic);
    } else if (dim < -1) {
      return ctx.emitError() << "shape has invalid dim " << dim;
    } else if (dim == 0 && !*allowZero) {
      if (static_cast<int64_t>(i) >= inputType.getRank())
        return ctx.emitError() << "shape entry " << i
                               << " is 0 (copy the input dim) but the input "
                                  "has rank "
                               << inputType.getRank();
      shape.push_back(inputType.getDimSize(i));
    } else {
      shape.push_back(dim);
    }
  }
  if (inferredIndex >= 0 && inputType.hasStaticShape()) {
    int64_t rest = 1;
    bool restStatic = true;
    for (auto [i, dim] : llvm::enumerate(shape))
      if (static_cast<int64_t>(i) != inferredIndex) {
        restStatic &= !ShapedType::isDynamic(dim);
        rest *= ShapedType::isDynamic(dim) ? 1 : dim;
      }
    if (restStatic) {
      if (rest == 0 || inputType.getNumElements() % rest != 0)
        return ctx.emitError()
               << "cannot reshape " << formatShape(inputType.getShape())
               << " into shape " << formatShape(shape) << " with one -1";
      shape[inferredIndex] = inputType.getNumElements() / rest;
    }
  }
  auto type = RankedTensorType::get(shape, inputType.getElementType());
  if (inputType.hasStaticShape() && type.hasStaticShape() &&
      inputType.getNumElements() != type.getNumElements())
    return ctx.emitError() << "cannot reshape "
                           << formatShape(inputType.getShape()) << " into "
                           << formatShape(shape);
  std::optional<KnownInts> known;
  if (const KnownInts *data = ctx.getKnown(0); data && type.hasStaticShape())
    known = KnownInts{llvm::to_vector(type.getShape()), data->values};
  setFoldedOutput(ctx, known, inputType.getElementType(), [&] {
    return ctx
        .createOp<ReshapeOp>(type, ctx.getInput(0), ctx.getInput(1),
                             *allowZero != 0)
        .getOutput();
  });
  return success();
}

static LogicalResult convertExpand(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<SmallVector<int64_t>> requested = getShapeOperand(ctx, 1);
  if (failed(requested))
    return failure();
  RankedTensorType inputType = ctx.getInputType(0);
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(inputType.getShape(), *requested);
  if (!shape)
    return ctx.emitError() << "input shape "
                           << formatShape(inputType.getShape())
                           << " does not broadcast to "
                           << formatShape(*requested);
  auto type = RankedTensorType::get(*shape, inputType.getElementType());
  ctx.setOutput(0,
                ctx.createOp<ExpandOp>(type, ctx.getInput(0), ctx.getInput(1))
                    .getOutput());
  return success();
}

/// Tile. Where every axis either has size 1 in the input or repeats once,
/// tiling is broadcasting: an `lmopt.expand` to the repeats, which may be
/// known only at run time (DeBERTa repeats its relative embeddings per
/// batch with repeats read from a shape). One axis repeated a run-time
/// number of times in an otherwise static tensor is an unsqueeze, expand
/// and reshape. Otherwise the repeats must be known at import time and each
/// repeated axis becomes an `lmopt.concat` of that many copies.
static LogicalResult convertTile(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<SmallVector<int64_t>> repeats = getShapeOperand(ctx, 1);
  if (failed(repeats))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  if (int64_t(repeats->size()) != type.getRank())
    return ctx.emitError() << "'repeats' has " << repeats->size()
                           << " entries for an input of rank "
                           << type.getRank();
  for (int64_t r : *repeats)
    if (!ShapedType::isDynamic(r) && r < 0)
      return ctx.emitError() << "'repeats' has negative entry " << r;
  bool broadcasts = true;
  for (auto [dim, r] : llvm::zip(type.getShape(), *repeats))
    broadcasts &= dim == 1 || r == 1;
  if (broadcasts) {
    SmallVector<int64_t> shape;
    for (auto [dim, r] : llvm::zip(type.getShape(), *repeats))
      shape.push_back(dim == 1 ? r : dim);
    auto resultType = RankedTensorType::get(shape, type.getElementType());
    ctx.setOutput(0, ctx.createOp<ExpandOp>(resultType, ctx.getInput(0),
                                            ctx.getInput(1))
                         .getOutput());
    return success();
  }
  // One axis repeated a run-time number of times, every other dim static
  // (DeBERTa repeats its [heads, 2k, d] position projections per batch):
  // a new unit axis before it, expanded to the count, merged back with the
  // axis by a reshape whose only unknown entry is that product.
  int64_t runtimeAxes = llvm::count_if(*repeats, ShapedType::isDynamic);
  if (runtimeAxes == 1) {
    int64_t axis = llvm::find_if(*repeats, ShapedType::isDynamic) -
                   repeats->begin();
    bool othersStatic = true, othersOnce = true;
    for (auto [i, dim] : llvm::enumerate(type.getShape()))
      if (int64_t(i) != axis) {
        othersStatic &= !ShapedType::isDynamic(dim);
        othersOnce &= (*repeats)[i] == 1;
      }
    if (othersStatic && othersOnce) {
      OpBuilder &b = ctx.getBuilder();
      Type i64 = b.getI64Type();
      auto vec = [&](ArrayRef<int64_t> v) {
        return ctx.createConstant(KnownInts::vector(v), i64);
      };
      SmallVector<int64_t> unitShape = llvm::to_vector(type.getShape());
      unitShape.insert(unitShape.begin() + axis, 1);
      Value unit =
          ctx.createOp<UnsqueezeOp>(
                 RankedTensorType::get(unitShape, type.getElementType()),
                 ctx.getInput(0), SmallVector<int64_t>{axis})
              .getOutput();
      // [1, ..., count, ..., 1]: the count sliced from the repeats.
      Value count =
          ctx.createOp<SliceOp>(RankedTensorType::get({1}, i64),
                                ctx.getInput(1), vec({axis}), vec({axis + 1}),
                                vec({0}), vec({1}))
              .getOutput();
      SmallVector<Value> parts;
      if (axis > 0)
        parts.push_back(vec(SmallVector<int64_t>(axis, 1)));
      parts.push_back(count);
      parts.push_back(vec(SmallVector<int64_t>(type.getRank() - axis, 1)));
      Value target = ctx.createOp<ConcatOp>(
                            RankedTensorType::get({type.getRank() + 1}, i64),
                            parts, int64_t(0))
                         .getOutput();
      SmallVector<int64_t> expandedShape = unitShape;
      expandedShape[axis] = ShapedType::kDynamic;
      Value expanded =
          ctx.createOp<ExpandOp>(
                 RankedTensorType::get(expandedShape, type.getElementType()),
                 unit, target)
              .getOutput();
      SmallVector<int64_t> merged = llvm::to_vector(type.getShape());
      merged[axis] = -1;
      SmallVector<int64_t> resultShape = llvm::to_vector(type.getShape());
      resultShape[axis] = ShapedType::kDynamic;
      ctx.setOutput(
          0, ctx.createOp<ReshapeOp>(
                    RankedTensorType::get(resultShape, type.getElementType()),
                    expanded, vec(merged), b.getBoolAttr(false))
                 .getOutput());
      return success();
    }
  }
  Value result = ctx.getInput(0);
  for (auto [axis, r] : llvm::enumerate(*repeats)) {
    if (ShapedType::isDynamic(r))
      return ctx.emitError()
             << "'repeats' entry " << axis
             << " is known only at run time and axis " << axis
             << " of the input has size "
             << (type.isDynamicDim(axis)
                     ? std::string("?")
                     : std::to_string(type.getDimSize(axis)))
             << ", not 1: lmopt tiles by a run-time count only where "
                "tiling is broadcasting, or along one axis of a tensor "
                "otherwise static";
    if (r == 1)
      continue;
    auto current = llvm::cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> shape = llvm::to_vector(current.getShape());
    if (!ShapedType::isDynamic(shape[axis]))
      shape[axis] *= r;
    SmallVector<Value> copies(r, result);
    result = ctx.createOp<ConcatOp>(
                    RankedTensorType::get(shape, type.getElementType()),
                    copies, int64_t(axis))
                 .getOutput();
  }
  ctx.setOutput(0, result);
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kShapeConverters[] = {
    {"", "Constant", 1, kMax, convertConstant},
    {"", "Shape", 1, kMax, convertShape},
    {"", "Size", 1, kMax, convertSize},
    {"", "ConstantOfShape", 9, kMax, convertConstantOfShape},
    {"", "Range", 11, kMax, convertRange},
    {"", "Reshape", 5, kMax, convertReshape},
    {"", "Expand", 8, kMax, convertExpand},
    {"", "Tile", 6, kMax, convertTile},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getShapeConverters() {
  return kShapeConverters;
}
