//===- ElementwiseOps.cpp - ONNX elementwise operators --------------------===//
//
// Unary and broadcasting binary operators, casts and Where. One template per
// shape rule; the table below lists which lmopt op each ONNX operator becomes.
// Integer operands whose contents are known (shape arithmetic) are folded.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

static RankedTensorType typeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

/// Folds an elementwise function over known operands with numpy
/// broadcasting. `fn` sees kDynamic for unknown entries.
static std::optional<KnownInts>
foldBroadcast(ArrayRef<const KnownInts *> operands,
              function_ref<int64_t(ArrayRef<int64_t>)> fn) {
  SmallVector<int64_t> shape;
  for (const KnownInts *operand : operands) {
    if (!operand)
      return std::nullopt;
    std::optional<SmallVector<int64_t>> next =
        broadcastShapes(shape, operand->shape);
    if (!next)
      return std::nullopt;
    shape = std::move(*next);
  }
  int64_t numElements = 1;
  for (int64_t dim : shape)
    numElements *= dim;
  if (numElements > kMaxKnownElements)
    return std::nullopt;
  KnownInts result{shape, {}};
  SmallVector<int64_t> args(operands.size());
  for (int64_t flat = 0; flat < numElements; ++flat) {
    for (auto [i, operand] : llvm::enumerate(operands)) {
      // Map the result index to the operand's index, right-aligned.
      int64_t remaining = flat, index = 0, stride = 1;
      size_t rankDiff = shape.size() - operand->shape.size();
      for (size_t d = shape.size(); d-- > 0;) {
        int64_t coord = remaining % shape[d];
        remaining /= shape[d];
        if (d < rankDiff)
          continue;
        int64_t dim = operand->shape[d - rankDiff];
        index += (dim == 1 ? 0 : coord) * stride;
        stride *= dim;
      }
      args[i] = operand->values[index];
    }
    result.values.push_back(fn(args));
  }
  return result;
}

/// Wraps a binary integer function so that unknown operands give unknown.
template <int64_t (*Fn)(int64_t, int64_t)>
static int64_t strict(ArrayRef<int64_t> args) {
  if (ShapedType::isDynamic(args[0]) || ShapedType::isDynamic(args[1]))
    return ShapedType::kDynamic;
  return Fn(args[0], args[1]);
}

static int64_t addInts(int64_t a, int64_t b) {
  int64_t r;
  return llvm::AddOverflow(a, b, r) ? ShapedType::kDynamic : r;
}
static int64_t subInts(int64_t a, int64_t b) {
  int64_t r;
  return llvm::SubOverflow(a, b, r) ? ShapedType::kDynamic : r;
}
static int64_t mulInts(int64_t a, int64_t b) {
  int64_t r;
  return llvm::MulOverflow(a, b, r) ? ShapedType::kDynamic : r;
}
static int64_t divInts(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return ShapedType::kDynamic;
  return a / b;
}
static int64_t modInts(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return ShapedType::kDynamic;
  int64_t r = a % b;
  // ONNX Mod with fmod = 0 takes the divisor's sign, like Python.
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static int64_t equalInts(int64_t a, int64_t b) { return a == b; }
static int64_t lessInts(int64_t a, int64_t b) { return a < b; }
static int64_t greaterInts(int64_t a, int64_t b) { return a > b; }
static int64_t maxInts(int64_t a, int64_t b) { return std::max(a, b); }
static int64_t minInts(int64_t a, int64_t b) { return std::min(a, b); }
static int64_t andInts(int64_t a, int64_t b) { return a && b; }
static int64_t orInts(int64_t a, int64_t b) { return a || b; }

using FoldFn = int64_t (*)(ArrayRef<int64_t>);

/// Builds `OpTy` over two broadcast operands after checking ONNX's rules.
template <typename OpTy>
static FailureOr<Value> buildBinary(NodeContext &ctx, Value lhs, Value rhs,
                                    bool resultIsBool) {
  RankedTensorType lhsType = typeOf(lhs), rhsType = typeOf(rhs);
  if (lhsType.getElementType() != rhsType.getElementType())
    return ctx.emitError() << "operand element types "
                           << lhsType.getElementType() << " and "
                           << rhsType.getElementType() << " differ";
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (!shape)
    return ctx.emitError() << "operand shapes "
                           << formatShape(lhsType.getShape()) << " and "
                           << formatShape(rhsType.getShape())
                           << " are not broadcast-compatible";
  Type elementType =
      resultIsBool ? ctx.getBuilder().getI1Type() : lhsType.getElementType();
  auto resultType = RankedTensorType::get(*shape, elementType);
  return ctx.createOp<OpTy>(resultType, lhs, rhs).getOutput();
}

FailureOr<Value> mlir::lmopt::onnx_import::buildBroadcastAdd(NodeContext &ctx,
                                                             Value lhs,
                                                             Value rhs) {
  return buildBinary<AddOp>(ctx, lhs, rhs, /*resultIsBool=*/false);
}

template <typename OpTy, FoldFn Fold, bool ResultIsBool = false>
static LogicalResult convertBinary(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<Value> result =
      buildBinary<OpTy>(ctx, ctx.getInput(0), ctx.getInput(1), ResultIsBool);
  if (failed(result))
    return failure();
  std::optional<KnownInts> known =
      foldBroadcast({ctx.getKnown(0), ctx.getKnown(1)}, Fold);
  if (known && known->isFullyKnown()) {
    Value constant =
        ctx.createConstant(*known, typeOf(*result).getElementType());
    result->getDefiningOp()->erase();
    ctx.setOutput(0, constant, known);
    return success();
  }
  ctx.setOutput(0, *result, known);
  return success();
}

static LogicalResult convertMod(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<int64_t> fmod = ctx.getInt("fmod", 0);
  if (failed(fmod))
    return failure();
  Value lhs = ctx.getInput(0), rhs = ctx.getInput(1);
  // Opset 28 defines `fmod = 0` on floats (floor remainder, with special
  // cases for zeros and infinities); lmopt.mod implements it for integers.
  Type elementType = typeOf(lhs).getElementType();
  if (!*fmod && llvm::isa<FloatType>(elementType))
    return ctx.emitError() << "attribute 'fmod' = 0 is not supported for "
                           << elementType
                           << " operands (floor remainder on floats); it "
                              "must be 1";
  std::optional<KnownInts> known;
  if (!*fmod)
    known = foldBroadcast({ctx.getKnown(0), ctx.getKnown(1)}, strict<modInts>);
  if (known && known->isFullyKnown()) {
    ctx.setOutput(0, ctx.createConstant(*known, typeOf(lhs).getElementType()),
                  known);
    return success();
  }
  FailureOr<Value> result = buildBinary<ModOp>(ctx, lhs, rhs, false);
  if (failed(result))
    return failure();
  llvm::cast<ModOp>(result->getDefiningOp()).setFmod(*fmod != 0);
  ctx.setOutput(0, *result, known);
  return success();
}

/// Pow allows an exponent of another element type.
static LogicalResult convertPow(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  Value exponent = ctx.getInput(1);
  Type baseType = ctx.getInputType(0).getElementType();
  if (typeOf(exponent).getElementType() != baseType)
    exponent = ctx.createOp<CastOp>(
        RankedTensorType::get(typeOf(exponent).getShape(), baseType), exponent);
  FailureOr<Value> result =
      buildBinary<PowOp>(ctx, ctx.getInput(0), exponent, false);
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

/// a <= b as (a < b) or (a == b), which keeps NaN comparisons false.
template <typename StrictOpTy, FoldFn StrictFold>
static LogicalResult convertOrEqual(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  Value lhs = ctx.getInput(0), rhs = ctx.getInput(1);
  FailureOr<Value> strictResult = buildBinary<StrictOpTy>(ctx, lhs, rhs, true);
  if (failed(strictResult))
    return failure();
  FailureOr<Value> equal = buildBinary<EqualOp>(ctx, lhs, rhs, true);
  if (failed(equal))
    return failure();
  FailureOr<Value> result = buildBinary<OrOp>(ctx, *strictResult, *equal, true);
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

/// Max and Min take one or more inputs.
template <typename OpTy, FoldFn Fold>
static LogicalResult convertVariadic(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, ctx.getNumInputs() ? ctx.getNumInputs() : 1)))
    return failure();
  Value result = ctx.getInput(0);
  for (size_t i = 1; i < ctx.getNumInputs(); ++i) {
    FailureOr<Value> next =
        buildBinary<OpTy>(ctx, result, ctx.getInput(i), false);
    if (failed(next))
      return failure();
    result = *next;
  }
  std::optional<KnownInts> known;
  if (ctx.getNumInputs() == 2)
    known = foldBroadcast({ctx.getKnown(0), ctx.getKnown(1)}, Fold);
  ctx.setOutput(0, result, known);
  return success();
}

/// Unary ops keep their operand's type; operand type constraints (float
/// only, bool only) are checked by the op's verifier.
template <typename OpTy> static LogicalResult convertUnary(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  ctx.setOutput(0, ctx.createOp<OpTy>(ctx.getInput(0)).getOutput());
  return success();
}

/// ONNX Sign over the types the spec lists that lmopt's arithmetic has:
/// f16, bf16, f32, f64 and signed integers. Unsigned integers (no unsigned
/// arithmetic in the dialect) and anything else are refused by name.
static LogicalResult convertSign(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  Type element = ctx.getInputType(0).getElementType();
  auto intType = llvm::dyn_cast<IntegerType>(element);
  bool supported =
      llvm::isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(
          element) ||
      (intType && intType.isSignless() && intType.getWidth() >= 8);
  if (!supported)
    return ctx.emitError() << "Sign of element type " << element
                           << " is not supported (expected f16, bf16, f32, "
                              "f64 or a signed integer)";
  ctx.setOutput(0, ctx.createOp<SignOp>(ctx.getInput(0)).getOutput());
  return success();
}

static int64_t notInts(int64_t a) { return a == 0; }
static int64_t negInts(int64_t a) {
  return a == INT64_MIN ? ShapedType::kDynamic : -a;
}

/// A unary op over known integers folds (Not and Neg in exporters' shape
/// logic: conditions, counts of reduced axes).
template <typename OpTy, int64_t (*Fn)(int64_t)>
static LogicalResult convertFoldedUnary(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  const KnownInts *known = ctx.getKnown(0);
  if (known && known->isFullyKnown()) {
    KnownInts folded = *known;
    for (int64_t &v : folded.values)
      v = Fn(v);
    if (folded.isFullyKnown()) {
      ctx.setOutput(
          0, ctx.createConstant(folded, ctx.getInputType(0).getElementType()),
          folded);
      return success();
    }
  }
  ctx.setOutput(0, ctx.createOp<OpTy>(ctx.getInput(0)).getOutput());
  return success();
}

static LogicalResult convertIsNaN(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  auto inputType = llvm::cast<RankedTensorType>(ctx.getInput(0).getType());
  auto type = RankedTensorType::get(
      inputType.getShape(), IntegerType::get(inputType.getContext(), 1));
  ctx.setOutput(0, ctx.createOp<IsNaNOp>(type, ctx.getInput(0)).getOutput());
  return success();
}

/// A copy of the float constant `original` as a resource of its own, named
/// `name`: a distinct attribute, so that neither CSE nor the folder's
/// constant uniquing merges it back into the original.
static Value untieConstant(NodeContext &ctx, ConstantOp original,
                           StringRef name) {
  ElementsAttr value = original.getValue();
  auto type = llvm::cast<RankedTensorType>(value.getType());
  std::vector<char> bytes;
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value)) {
    ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
    bytes.assign(data.begin(), data.end());
  } else {
    auto dense = llvm::cast<DenseElementsAttr>(value);
    for (APFloat element : dense.getValues<APFloat>()) {
      APInt bits = element.bitcastToAPInt();
      for (unsigned i = 0; i < bits.getBitWidth() / 8; ++i)
        bytes.push_back(char(bits.extractBitsAsZExtValue(8, i * 8)));
    }
  }
  auto attr = DenseResourceElementsAttr::get(
      type, name,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(uint64_t)));
  return ConstantOp::create(
             ctx.getBuilder(),
             NameLoc::get(StringAttr::get(ctx.getContext(), name),
                          ctx.getLoc()),
             attr)
      .getOutput();
}

static LogicalResult convertIdentity(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  if (ctx.untiesInitializerAliases() && ctx.hasOutput(0)) {
    auto constant = ctx.getInput(0).getDefiningOp<ConstantOp>();
    auto type = llvm::dyn_cast<RankedTensorType>(ctx.getInput(0).getType());
    if (constant && type && type.getRank() >= 1 &&
        llvm::isa<FloatType>(type.getElementType())) {
      ctx.setOutput(0, untieConstant(ctx, constant, ctx.getOutputName(0)));
      return success();
    }
  }
  std::optional<KnownInts> known;
  if (const KnownInts *k = ctx.getKnown(0))
    known = *k;
  ctx.setOutput(0, ctx.getInput(0), known);
  return success();
}

/// `lmopt.cast` rounds to nearest even and never saturates: out-of-range
/// values become infinity or NaN, which is ONNX's `saturate = 0` for the
/// float8 types. Casts whose attributes ask for anything else are refused.
static LogicalResult checkCastRounding(NodeContext &ctx, Type target) {
  if (llvm::isa<Float8E8M0FNUType>(target)) {
    // Opset 24 added `round_mode` (default "up") for this type only.
    FailureOr<std::string> roundMode =
        ctx.getOpset() >= 24 ? ctx.getString("round_mode", "up")
                             : FailureOr<std::string>(std::string("up"));
    FailureOr<int64_t> saturate = ctx.getInt("saturate", 1);
    if (failed(roundMode) || failed(saturate))
      return failure();
    return ctx.emitError() << "cast to " << target << " with attribute "
                           << "'round_mode' = '" << *roundMode
                           << "' and 'saturate' = " << *saturate
                           << " is not supported: lmopt.cast rounds to "
                              "nearest even and does not saturate";
  }
  if (ctx.getOpset() < 19 ||
      !llvm::isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
                 Float8E5M2FNUZType>(target))
    return success();
  FailureOr<int64_t> saturate = ctx.getInt("saturate", 1);
  if (failed(saturate))
    return failure();
  if (*saturate != 0)
    return ctx.emitError()
           << "attribute 'saturate' = " << *saturate << " of a cast to "
           << target
           << " is not supported: lmopt.cast does not saturate (it "
              "implements 'saturate' = 0)";
  return success();
}

/// Cast of known integers folds; a cast to the same type is the input.
static LogicalResult castTo(NodeContext &ctx, Type target) {
  Value input = ctx.getInput(0);
  RankedTensorType type = typeOf(input);
  const KnownInts *known = ctx.getKnown(0);
  if (type.getElementType() == target) {
    ctx.setOutput(0, input,
                  known ? std::optional<KnownInts>(*known) : std::nullopt);
    return success();
  }
  if (failed(checkCastRounding(ctx, target)))
    return failure();
  if (known && known->isFullyKnown() &&
      (llvm::isa<IntegerType>(target) ||
       llvm::isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(
           target))) {
    KnownInts converted = *known;
    if (auto intType = llvm::dyn_cast<IntegerType>(target)) {
      for (int64_t &v : converted.values) {
        APInt value(64, v, /*isSigned=*/true);
        if (intType.getWidth() == 1)
          v = v != 0;
        else if (intType.isUnsigned())
          v = value.trunc(intType.getWidth()).getZExtValue();
        else
          v = value.trunc(intType.getWidth()).getSExtValue();
      }
      ctx.setOutput(0, ctx.createConstant(converted, target), converted);
      return success();
    }
    ctx.setOutput(0, ctx.createConstant(converted, target));
    return success();
  }
  auto resultType = RankedTensorType::get(type.getShape(), target);
  ctx.setOutput(0, ctx.createOp<CastOp>(resultType, input).getOutput());
  return success();
}

static LogicalResult convertCast(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  FailureOr<Type> target = ctx.getElementType("to");
  if (failed(target))
    return failure();
  return castTo(ctx, *target);
}

static LogicalResult convertCastLike(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  return castTo(ctx, ctx.getInputType(1).getElementType());
}

static int64_t selectInts(ArrayRef<int64_t> args) {
  if (ShapedType::isDynamic(args[0]))
    return ShapedType::kDynamic;
  return args[0] ? args[1] : args[2];
}

static LogicalResult convertWhere(NodeContext &ctx) {
  if (failed(ctx.checkInputs(3, 3)))
    return failure();
  Value condition = ctx.getInput(0), x = ctx.getInput(1), y = ctx.getInput(2);
  if (!typeOf(condition).getElementType().isInteger(1))
    return ctx.emitError() << "condition must be a bool tensor, got "
                           << typeOf(condition);
  if (typeOf(x).getElementType() != typeOf(y).getElementType())
    return ctx.emitError() << "operand element types "
                           << typeOf(x).getElementType() << " and "
                           << typeOf(y).getElementType() << " differ";
  std::optional<SmallVector<int64_t>> shape;
  shape = broadcastShapes(typeOf(condition).getShape(), typeOf(x).getShape());
  if (shape)
    shape = broadcastShapes(*shape, typeOf(y).getShape());
  if (!shape)
    return ctx.emitError() << "operand shapes "
                           << formatShape(typeOf(condition).getShape()) << ", "
                           << formatShape(typeOf(x).getShape()) << " and "
                           << formatShape(typeOf(y).getShape())
                           << " are not broadcast-compatible";
  Type elementType = typeOf(x).getElementType();
  std::optional<KnownInts> known;
  if (llvm::isa<IntegerType>(elementType))
    known = foldBroadcast({ctx.getKnown(0), ctx.getKnown(1), ctx.getKnown(2)},
                          selectInts);
  if (known && known->isFullyKnown()) {
    ctx.setOutput(0, ctx.createConstant(*known, elementType), known);
    return success();
  }
  auto type = RankedTensorType::get(*shape, elementType);
  ctx.setOutput(0, ctx.createOp<WhereOp>(type, condition, x, y).getOutput(),
                known);
  return success();
}

static LogicalResult convertGelu(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  FailureOr<std::string> approximate = ctx.getString("approximate", "none");
  if (failed(approximate))
    return failure();
  std::optional<GeluApproximation> kind =
      symbolizeGeluApproximation(*approximate);
  if (!kind)
    return ctx.emitError() << "attribute 'approximate' must be 'none' or "
                              "'tanh', got '"
                           << *approximate << "'";
  auto op = ctx.createOp<GeluOp>(ctx.getInput(0), *kind);
  ctx.setOutput(0, op.getOutput());
  return success();
}

/// Reads a constant scalar float operand (Dropout's ratio).
static std::optional<double> getConstantFloat(Value value) {
  auto constant = value ? value.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!constant)
    return std::nullopt;
  auto dense = llvm::dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  return (*dense.getValues<APFloat>().begin()).convertToDouble();
}

static LogicalResult convertDropout(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 3)))
    return failure();
  Value input = ctx.getInput(0);
  double ratio = 0.5;
  if (ctx.hasInput(1)) {
    std::optional<double> value = getConstantFloat(ctx.getInput(1));
    if (!value)
      return ctx.emitError() << "'ratio' must be a constant scalar";
    ratio = *value;
  }
  bool training = false;
  if (ctx.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> mode =
        ctx.getConstantInts(2, "training_mode");
    if (failed(mode) || mode->size() != 1)
      return failed(mode)
                 ? failure()
                 : ctx.emitError() << "'training_mode' must be a scalar";
    training = (*mode)[0] != 0;
  }
  if (!(ratio >= 0.0 && ratio < 1.0))
    return ctx.emitError() << "ratio " << ratio << " is not in [0, 1)";
  RankedTensorType type = typeOf(input);
  auto maskType =
      RankedTensorType::get(type.getShape(), ctx.getBuilder().getI1Type());
  OpBuilder &b = ctx.getBuilder();
  auto op = ctx.createOp<DropoutOp>(
      type, maskType, input, b.getF32FloatAttr(static_cast<float>(ratio)),
      b.getBoolAttr(training), IntegerAttr());
  ctx.setOutput(0, op.getOutput());
  ctx.setOutput(1, op.getMask());
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kElementwiseConverters[] = {
    {"", "Add", 7, kMax, convertBinary<AddOp, strict<addInts>>},
    {"", "Sub", 7, kMax, convertBinary<SubOp, strict<subInts>>},
    {"", "Mul", 7, kMax, convertBinary<MulOp, strict<mulInts>>},
    {"", "Div", 7, kMax, convertBinary<DivOp, strict<divInts>>},
    {"", "Pow", 7, kMax, convertPow},
    {"", "Mod", 10, kMax, convertMod},
    {"", "Equal", 7, kMax, convertBinary<EqualOp, strict<equalInts>, true>},
    {"", "Less", 7, kMax, convertBinary<LessOp, strict<lessInts>, true>},
    {"", "Greater", 7, kMax,
     convertBinary<GreaterOp, strict<greaterInts>, true>},
    {"", "LessOrEqual", 12, kMax, convertOrEqual<LessOp, strict<lessInts>>},
    {"", "GreaterOrEqual", 12, kMax,
     convertOrEqual<GreaterOp, strict<greaterInts>>},
    {"", "And", 7, kMax, convertBinary<AndOp, strict<andInts>, true>},
    {"", "Or", 7, kMax, convertBinary<OrOp, strict<orInts>, true>},
    {"", "Max", 8, kMax, convertVariadic<MaxOp, strict<maxInts>>},
    {"", "Min", 8, kMax, convertVariadic<MinOp, strict<minInts>>},
    {"", "Neg", 6, kMax, convertFoldedUnary<NegOp, negInts>},
    {"", "Abs", 6, kMax, convertUnary<AbsOp>},
    {"", "Sign", 9, kMax, convertSign},
    {"", "Relu", 6, kMax, convertUnary<ReluOp>},
    {"", "Exp", 6, kMax, convertUnary<ExpOp>},
    {"", "Log", 6, kMax, convertUnary<LogOp>},
    {"", "Sqrt", 6, kMax, convertUnary<SqrtOp>},
    {"", "Reciprocal", 6, kMax, convertUnary<ReciprocalOp>},
    {"", "Tanh", 6, kMax, convertUnary<TanhOp>},
    {"", "Erf", 9, kMax, convertUnary<ErfOp>},
    {"", "IsNaN", 9, kMax, convertIsNaN},
    {"", "Sigmoid", 6, kMax, convertUnary<SigmoidOp>},
    {"", "Cos", 7, kMax, convertUnary<CosOp>},
    {"", "Sin", 7, kMax, convertUnary<SinOp>},
    {"", "Ceil", 6, kMax, convertUnary<CeilOp>},
    {"", "Floor", 6, kMax, convertUnary<FloorOp>},
    {"", "Round", 11, kMax, convertUnary<RoundOp>},
    {"", "Not", 1, kMax, convertFoldedUnary<NotOp, notInts>},
    {"", "Identity", 1, kMax, convertIdentity},
    {"", "Cast", 6, kMax, convertCast},
    {"", "CastLike", 15, kMax, convertCastLike},
    {"", "Where", 9, kMax, convertWhere},
    {"", "Gelu", 20, kMax, convertGelu},
    {"", "Dropout", 12, kMax, convertDropout},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getElementwiseConverters() {
  return kElementwiseConverters;
}
