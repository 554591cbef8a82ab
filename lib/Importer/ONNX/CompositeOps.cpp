//===- CompositeOps.cpp - ONNX operators built from simpler lmopt ops -----===//
//
// Activations, Clip, Sum and Mean, IsInf, Xor, ArgMax and ArgMin and the
// norm-like reductions
// are defined by ONNX as functions of simpler operators (their function
// bodies in the operator schemas). Each becomes those operators here, so the
// verifier, the CPU lowering, the reference evaluator and autodiff see
// nothing new, and the generated kernels fuse the pieces back into one loop.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

namespace {

/// Builds the pieces of one composite node: scalars of the input's element
/// type and elementwise ops whose result takes the shape of their operands
/// broadcast together.
class Composer {
public:
  Composer(NodeContext &ctx, Type elementType)
      : ctx(ctx), elementType(elementType) {}

  Value scalar(double value) {
    auto type = RankedTensorType::get({}, elementType);
    Attribute attr =
        llvm::isa<FloatType>(elementType)
            ? Attribute(ctx.getBuilder().getFloatAttr(elementType, value))
            : Attribute(ctx.getBuilder().getIntegerAttr(elementType,
                                                        int64_t(value)));
    return ctx.createOp<ConstantOp>(DenseElementsAttr::get(type, attr))
        .getOutput();
  }

  template <typename OpTy> Value binary(Value lhs, Value rhs) {
    return ctx.createOp<OpTy>(resultType(lhs, rhs, elementOf(lhs)), lhs, rhs)
        .getOutput();
  }
  template <typename OpTy> Value compare(Value lhs, Value rhs) {
    return ctx
        .createOp<OpTy>(
            resultType(lhs, rhs, ctx.getBuilder().getI1Type()), lhs, rhs)
        .getOutput();
  }
  template <typename OpTy> Value unary(Value x) {
    return ctx.createOp<OpTy>(x).getOutput();
  }
  Value select(Value condition, Value x, Value y) {
    SmallVector<int64_t> shape = llvm::to_vector(shapeOf(condition));
    for (Value v : {x, y})
      if (auto both = broadcastShapes(shape, shapeOf(v)))
        shape = *both;
    return ctx
        .createOp<WhereOp>(RankedTensorType::get(shape, elementOf(x)),
                           condition, x, y)
        .getOutput();
  }

  Value add(Value a, Value b) { return binary<AddOp>(a, b); }
  Value sub(Value a, Value b) { return binary<SubOp>(a, b); }
  Value mul(Value a, Value b) { return binary<MulOp>(a, b); }
  Value div(Value a, Value b) { return binary<DivOp>(a, b); }
  Value max(Value a, Value b) { return binary<MaxOp>(a, b); }
  Value min(Value a, Value b) { return binary<MinOp>(a, b); }

  /// `max(x, 0) + log(1 + exp(-|x|))`: softplus without overflow for large
  /// `x` (ONNX's body, `log(exp(x) + 1)`, is infinite from x = 89 in f32).
  Value softplus(Value x) {
    Value zero = scalar(0), one = scalar(1);
    Value tail = unary<LogOp>(
        add(one, unary<ExpOp>(unary<NegOp>(unary<AbsOp>(x)))));
    return add(max(x, zero), tail);
  }

  /// `max(0, min(1, alpha * x + beta))`.
  Value hardSigmoid(Value x, double alpha, double beta) {
    Value linear = add(mul(x, scalar(alpha)), scalar(beta));
    return max(min(linear, scalar(1)), scalar(0));
  }

private:
  static Type elementOf(Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getElementType();
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getShape();
  }
  /// Operand shapes were checked by the node's own broadcast rules or are
  /// a shape and a scalar, so the broadcast exists.
  RankedTensorType resultType(Value lhs, Value rhs, Type element) {
    std::optional<SmallVector<int64_t>> shape =
        broadcastShapes(shapeOf(lhs), shapeOf(rhs));
    return RankedTensorType::get(shape ? *shape
                                       : llvm::to_vector(shapeOf(lhs)),
                                 element);
  }

  NodeContext &ctx;
  Type elementType;
};

} // namespace

/// Fails, naming the type and the operator, unless input 0 is a
/// floating-point tensor.
static LogicalResult requireFloatInput(NodeContext &ctx) {
  Type element = ctx.getInputType(0).getElementType();
  if (llvm::isa<FloatType>(element))
    return success();
  return ctx.emitError() << "input 0 has element type " << element << "; "
                         << ctx.getOpType() << " takes floating-point tensors";
}

/// The node's first input, which must be a floating-point tensor.
static FailureOr<Value> floatInput(NodeContext &ctx, size_t min = 1,
                                   size_t max = 1) {
  if (failed(ctx.checkInputs(min, max)) || failed(requireFloatInput(ctx)))
    return failure();
  return ctx.getInput(0);
}

/// An activation of one float input and float attributes (their values in
/// the order the table lists them).
using ActivationFn = Value (*)(Composer &, Value, NodeContext &,
                             ArrayRef<double>);

struct AttrDefault {
  const char *name;
  double defaultValue;
};

static LogicalResult convertActivation(NodeContext &ctx, ActivationFn fn,
                                       ArrayRef<AttrDefault> attrs) {
  FailureOr<Value> x = floatInput(ctx);
  if (failed(x))
    return failure();
  SmallVector<double> values;
  for (const AttrDefault &attr : attrs) {
    FailureOr<float> value = ctx.getFloat(attr.name, float(attr.defaultValue));
    if (failed(value))
      return failure();
    values.push_back(*value);
  }
  Composer c(ctx, ctx.getInputType(0).getElementType());
  ctx.setOutput(0, fn(c, *x, ctx, values));
  return success();
}

// x < 0 ? alpha * (exp(x) - 1) : x
static Value elu(Composer &c, Value x, NodeContext &, ArrayRef<double> a) {
  Value negative = c.compare<LessOp>(x, c.scalar(0));
  Value curve = c.mul(c.sub(c.unary<ExpOp>(x), c.scalar(1)), c.scalar(a[0]));
  return c.select(negative, curve, x);
}

// max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
static Value celu(Composer &c, Value x, NodeContext &, ArrayRef<double> a) {
  Value curve = c.mul(
      c.sub(c.unary<ExpOp>(c.div(x, c.scalar(a[0]))), c.scalar(1)),
      c.scalar(a[0]));
  return c.add(c.max(x, c.scalar(0)), c.min(curve, c.scalar(0)));
}

// x < 0 ? alpha * x : x
static Value leakyRelu(Composer &c, Value x, NodeContext &,
                       ArrayRef<double> a) {
  return c.select(c.compare<LessOp>(x, c.scalar(0)), c.mul(x, c.scalar(a[0])),
                  x);
}

// max(0, min(1, alpha * x + beta))
static Value hardSigmoid(Composer &c, Value x, NodeContext &,
                         ArrayRef<double> a) {
  return c.hardSigmoid(x, a[0], a[1]);
}

// x * max(0, min(1, x / 6 + 1 / 2))
static Value hardSwish(Composer &c, Value x, NodeContext &,
                       ArrayRef<double>) {
  return c.mul(x, c.hardSigmoid(x, 1.0 / 6.0, 0.5));
}

// gamma * (x > 0 ? x : alpha * exp(x) - alpha)
static Value selu(Composer &c, Value x, NodeContext &, ArrayRef<double> a) {
  Value curve =
      c.sub(c.mul(c.unary<ExpOp>(x), c.scalar(a[0])), c.scalar(a[0]));
  Value positive = c.compare<GreaterOp>(x, c.scalar(0));
  return c.mul(c.select(positive, x, curve), c.scalar(a[1]));
}

// x > alpha ? x : 0
static Value thresholdedRelu(Composer &c, Value x, NodeContext &,
                             ArrayRef<double> a) {
  return c.select(c.compare<GreaterOp>(x, c.scalar(a[0])), x, c.scalar(0));
}

static Value softplus(Composer &c, Value x, NodeContext &, ArrayRef<double>) {
  return c.softplus(x);
}

// x / (1 + |x|)
static Value softsign(Composer &c, Value x, NodeContext &, ArrayRef<double>) {
  return c.div(x, c.add(c.scalar(1), c.unary<AbsOp>(x)));
}

// x * tanh(softplus(x))
static Value mish(Composer &c, Value x, NodeContext &, ArrayRef<double>) {
  return c.mul(x, c.unary<TanhOp>(c.softplus(x)));
}

// x * sigmoid(alpha * x)
static Value swish(Composer &c, Value x, NodeContext &, ArrayRef<double> a) {
  return c.mul(x, c.unary<SigmoidOp>(c.mul(x, c.scalar(a[0]))));
}

// x < -lambd ? x + bias : x > lambd ? x - bias : 0
static Value shrink(Composer &c, Value x, NodeContext &, ArrayRef<double> a) {
  double bias = a[0], lambd = a[1];
  Value above = c.select(c.compare<GreaterOp>(x, c.scalar(lambd)),
                         c.sub(x, c.scalar(bias)), c.scalar(0));
  return c.select(c.compare<LessOp>(x, c.scalar(-lambd)),
                  c.add(x, c.scalar(bias)), above);
}

/// PRelu: `x < 0 ? slope * x : x`, the slope broadcasting to x's shape
/// (unidirectionally: the result has x's shape).
static LogicalResult convertPRelu(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 2, 2);
  if (failed(x))
    return failure();
  RankedTensorType xType = ctx.getInputType(0),
                   slopeType = ctx.getInputType(1);
  if (slopeType.getElementType() != xType.getElementType())
    return ctx.emitError() << "slope has element type "
                           << slopeType.getElementType() << ", X has "
                           << xType.getElementType();
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(xType.getShape(), slopeType.getShape());
  if (!shape || ArrayRef<int64_t>(*shape) != xType.getShape())
    return ctx.emitError() << "slope of shape "
                           << formatShape(slopeType.getShape())
                           << " does not broadcast to X's shape "
                           << formatShape(xType.getShape());
  Composer c(ctx, xType.getElementType());
  Value negative = c.compare<LessOp>(*x, c.scalar(0));
  ctx.setOutput(0, c.select(negative, c.mul(*x, ctx.getInput(1)), *x));
  return success();
}

/// Clip: `min(max(x, lo), hi)`, so that lo > hi gives hi as ONNX specifies.
/// Bounds are float attributes before opset 11 and optional scalar inputs
/// from then on; an absent bound does not clip.
static LogicalResult convertClip(NodeContext &ctx) {
  bool boundsAsInputs = ctx.getOpset() >= 11;
  if (failed(ctx.checkInputs(1, boundsAsInputs ? 3 : 1)))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  Composer c(ctx, type.getElementType());
  Value result = ctx.getInput(0);
  for (int side = 0; side < 2; ++side) {
    Value bound;
    if (boundsAsInputs) {
      if (!ctx.hasInput(1 + side))
        continue;
      RankedTensorType boundType = ctx.getInputType(1 + side);
      // A scalar; some exporters write a one-element vector.
      bool scalarLike = boundType.getRank() == 0 ||
                        (boundType.getShape() == ArrayRef<int64_t>{1} &&
                         type.getRank() >= 1);
      if (!scalarLike || boundType.getElementType() != type.getElementType())
        return ctx.emitError()
               << (side ? "max" : "min") << " has type " << boundType
               << "; Clip takes a scalar of the input's element type "
               << type.getElementType();
      bound = ctx.getInput(1 + side);
    } else {
      const char *name = side ? "max" : "min";
      if (!ctx.hasAttr(name))
        continue;
      if (!llvm::isa<FloatType>(type.getElementType()))
        return ctx.emitError() << "attribute '" << name
                               << "' bounds a tensor of element type "
                               << type.getElementType()
                               << "; before opset 11 Clip is float-only";
      FailureOr<float> value = ctx.getFloat(name, 0.0f);
      if (failed(value))
        return failure();
      bound = c.scalar(*value);
    }
    result = side ? c.min(result, bound) : c.max(result, bound);
  }
  ctx.setOutput(0, result);
  return success();
}

/// Sum and Mean of one or more inputs with multidirectional broadcasting.
template <bool IsMean> static LogicalResult convertSumOrMean(NodeContext &ctx) {
  size_t count = ctx.getNumInputs();
  if (failed(ctx.checkInputs(1, std::max<size_t>(count, 1))))
    return failure();
  Type element = ctx.getInputType(0).getElementType();
  if (IsMean && failed(requireFloatInput(ctx)))
    return failure();
  Value total = ctx.getInput(0);
  for (size_t i = 1; i < count; ++i) {
    FailureOr<Value> next = buildBroadcastAdd(ctx, total, ctx.getInput(i));
    if (failed(next))
      return failure();
    total = *next;
  }
  if (IsMean && count > 1) {
    Composer c(ctx, element);
    total = c.div(total, c.scalar(double(count)));
  }
  ctx.setOutput(0, total);
  return success();
}

/// IsInf: `x == +inf` and/or `x == -inf`, as the attributes select.
static LogicalResult convertIsInf(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx);
  FailureOr<int64_t> negative = ctx.getInt("detect_negative", 1);
  FailureOr<int64_t> positive = ctx.getInt("detect_positive", 1);
  if (failed(x) || failed(negative) || failed(positive))
    return failure();
  Composer c(ctx, ctx.getInputType(0).getElementType());
  const double inf = std::numeric_limits<double>::infinity();
  Value result;
  for (auto [detect, value] : {std::pair{*positive, inf}, {*negative, -inf}}) {
    if (!detect)
      continue;
    Value hit = c.compare<EqualOp>(*x, c.scalar(value));
    result = result ? c.binary<OrOp>(result, hit) : hit;
  }
  // Detecting neither: NaN equals nothing, so every element is false.
  if (!result)
    result = c.compare<EqualOp>(*x, c.scalar(std::nan("")));
  ctx.setOutput(0, result);
  return success();
}

/// Xor of booleans: `a != b`, broadcasting.
static LogicalResult convertXor(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  RankedTensorType lhs = ctx.getInputType(0), rhs = ctx.getInputType(1);
  if (!lhs.getElementType().isInteger(1) || !rhs.getElementType().isInteger(1))
    return ctx.emitError() << "inputs have element types "
                           << lhs.getElementType() << " and "
                           << rhs.getElementType()
                           << "; Xor takes booleans";
  if (!broadcastShapes(lhs.getShape(), rhs.getShape()))
    return ctx.emitError() << "operand shapes " << formatShape(lhs.getShape())
                           << " and " << formatShape(rhs.getShape())
                           << " are not broadcast-compatible";
  Composer c(ctx, lhs.getElementType());
  Value equal = c.compare<EqualOp>(ctx.getInput(0), ctx.getInput(1));
  ctx.setOutput(0, c.unary<NotOp>(equal));
  return success();
}

/// The norm-like reductions: a map before the sum and one after it.
enum class NormReduce { L1, L2, SumSquare, LogSum, LogSumExp };

template <NormReduce Kind> static LogicalResult convertNormReduce(NodeContext &ctx) {
  FailureOr<ReduceSpec> spec = getReduceSpec(ctx, 18);
  if (failed(spec))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  Type element = type.getElementType();
  bool floatOnly = Kind == NormReduce::L2 || Kind == NormReduce::LogSum ||
                   Kind == NormReduce::LogSumExp;
  if (floatOnly && failed(requireFloatInput(ctx)))
    return failure();
  Composer c(ctx, element);
  Value x = ctx.getInput(0);
  auto reduce = [&](auto tag, Value input, bool keepdims) -> Value {
    using OpTy = decltype(tag);
    if (spec->noop)
      return input;
    SmallVector<int64_t> shape = spec->shape;
    if (keepdims && !spec->keepdims) {
      shape = llvm::to_vector(type.getShape());
      FailureOr<SmallVector<int64_t>> axes =
          ctx.normalizeAxes(spec->axes, type.getRank());
      for (auto [i, dim] : llvm::enumerate(shape))
        if (axes->empty() || llvm::is_contained(*axes, int64_t(i)))
          dim = 1;
    }
    return ctx
        .createOp<OpTy>(RankedTensorType::get(shape, element), input,
                        spec->axes, keepdims)
        .getOutput();
  };
  Value result;
  switch (Kind) {
  case NormReduce::L1:
    result = reduce(ReduceSumOp(), c.unary<AbsOp>(x), spec->keepdims);
    break;
  case NormReduce::L2:
    result = c.unary<SqrtOp>(reduce(ReduceSumOp(), c.mul(x, x),
                                    spec->keepdims));
    break;
  case NormReduce::SumSquare:
    result = reduce(ReduceSumOp(), c.mul(x, x), spec->keepdims);
    break;
  case NormReduce::LogSum:
    result = c.unary<LogOp>(reduce(ReduceSumOp(), x, spec->keepdims));
    break;
  case NormReduce::LogSumExp: {
    // Over an empty set the sum is 0 and the result -inf; the maximum that
    // stabilizes the general case has no value there.
    if (!spec->noop && type.getNumElements() == 0 &&
        type.hasStaticShape()) {
      result = c.unary<LogOp>(
          reduce(ReduceSumOp(), c.unary<ExpOp>(x), spec->keepdims));
      break;
    }
    // log(sum(exp(x - m))) + m with m the maximum, so that exp cannot
    // overflow; m is kept once with the reduced dims (to subtract) and once
    // as the result's shape (to add back).
    Value shift = reduce(ReduceMaxOp(), x, /*keepdims=*/true);
    Value sum = reduce(ReduceSumOp(), c.unary<ExpOp>(c.sub(x, shift)),
                       spec->keepdims);
    result = c.add(c.unary<LogOp>(sum),
                   spec->keepdims ? shift
                                  : reduce(ReduceMaxOp(), x, false));
    break;
  }
  }
  ctx.setOutput(0, result);
  return success();
}

/// ArgMax and ArgMin along one axis: the extreme value m (kept dims), then
/// the smallest index where x == m (the largest with select_last_index), as
/// a reduce_min (reduce_max) over `where(x == m, index, sentinel)`. i64
/// result; ties resolve like numpy.argmax.
template <bool IsMax> static LogicalResult convertArgExtreme(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  FailureOr<int64_t> axis = ctx.getInt("axis", 0);
  FailureOr<int64_t> keepdims = ctx.getInt("keepdims", 1);
  FailureOr<int64_t> last = ctx.getInt("select_last_index", 0);
  if (failed(axis) || failed(keepdims) || failed(last))
    return failure();
  Value x = ctx.getInput(0);
  RankedTensorType type = ctx.getInputType(0);
  if (type.getElementType().isInteger(1))
    return ctx.emitError() << "input 0 is boolean; " << ctx.getOpType()
                           << " takes numeric tensors";
  int64_t rank = type.getRank();
  FailureOr<SmallVector<int64_t>> normalized = ctx.normalizeAxes({*axis}, rank);
  if (failed(normalized))
    return failure();
  int64_t dim = normalized->front();
  if (type.getDimSize(dim) == 0)
    return ctx.emitError() << "axis " << *axis << " of the input (shape "
                           << formatShape(type.getShape())
                           << ") is empty: " << ctx.getOpType()
                           << " has no index to return";
  auto reducedShape = [&](bool keep) {
    SmallVector<int64_t> shape;
    for (auto [i, size] : llvm::enumerate(type.getShape()))
      if (int64_t(i) != dim)
        shape.push_back(size);
      else if (keep)
        shape.push_back(1);
    return shape;
  };
  Type i64 = ctx.getBuilder().getI64Type();
  SmallVector<int64_t> axes = {dim};
  // reduce_max over the axis when `useMax`, else reduce_min.
  auto extremeOf = [&](bool useMax, Value input, Type element, bool keep) {
    auto resultType = RankedTensorType::get(reducedShape(keep), element);
    return useMax ? ctx.createOp<ReduceMaxOp>(resultType, input, axes, keep)
                        .getOutput()
                  : ctx.createOp<ReduceMinOp>(resultType, input, axes, keep)
                        .getOutput();
  };
  Value extreme = extremeOf(IsMax, x, type.getElementType(), true);
  Composer values(ctx, type.getElementType()), indices(ctx, i64);
  Value hit = values.compare<EqualOp>(x, extreme);
  // The axis' indices as a tensor of x's rank, size 1 everywhere else.
  Value index = createAxisIndices(ctx, x, dim);
  SmallVector<int64_t> unitAxes, indexShape(rank, 1);
  indexShape[dim] = type.getDimSize(dim);
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim)
      unitAxes.push_back(i);
  if (!unitAxes.empty())
    index = ctx.createOp<UnsqueezeOp>(RankedTensorType::get(indexShape, i64),
                                      index, unitAxes)
                .getOutput();
  Value sentinel =
      indices.scalar(*last ? -1.0 : double(std::numeric_limits<int32_t>::max()));
  Value candidates = indices.select(hit, index, sentinel);
  Value result = extremeOf(*last != 0, candidates, i64, *keepdims != 0);
  ctx.setOutput(0, result);
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getCompositeConverters() {
  static const ConverterEntry entries[] = {
      {"", "Elu", 6, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, elu, {{"alpha", 1.0}});
       }},
      {"", "Celu", 12, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, celu, {{"alpha", 1.0}});
       }},
      {"", "LeakyRelu", 6, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, leakyRelu, {{"alpha", 0.01}});
       }},
      {"", "HardSigmoid", 6, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, hardSigmoid, {{"alpha", 0.2}, {"beta", 0.5}});
       }},
      {"", "HardSwish", 14, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, hardSwish, {});
       }},
      {"", "Selu", 6, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, selu, {{"alpha", 1.67326319217681884765625},
                {"gamma", 1.05070102214813232421875}});
       }},
      {"", "ThresholdedRelu", 10, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, thresholdedRelu, {{"alpha", 1.0}});
       }},
      {"", "Softplus", 1, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, softplus, {});
       }},
      {"", "Softsign", 1, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, softsign, {});
       }},
      {"", "Mish", 18, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, mish, {});
       }},
      {"", "Swish", 24, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, swish, {{"alpha", 1.0}});
       }},
      {"", "Shrink", 9, kMax,
       [](NodeContext &ctx) {
         return convertActivation(ctx, shrink, {{"bias", 0.0}, {"lambd", 0.5}});
       }},
      {"", "PRelu", 7, kMax, convertPRelu},
      {"", "Clip", 6, kMax, convertClip},
      {"", "Sum", 6, kMax, convertSumOrMean<false>},
      {"", "Mean", 6, kMax, convertSumOrMean<true>},
      {"", "IsInf", 10, kMax, convertIsInf},
      {"", "Xor", 7, kMax, convertXor},
      {"", "ArgMax", 1, kMax, convertArgExtreme<true>},
      {"", "ArgMin", 1, kMax, convertArgExtreme<false>},
      {"", "ReduceL1", 1, kMax, convertNormReduce<NormReduce::L1>},
      {"", "ReduceL2", 1, kMax, convertNormReduce<NormReduce::L2>},
      {"", "ReduceSumSquare", 1, kMax,
       convertNormReduce<NormReduce::SumSquare>},
      {"", "ReduceLogSum", 1, kMax, convertNormReduce<NormReduce::LogSum>},
      {"", "ReduceLogSumExp", 1, kMax,
       convertNormReduce<NormReduce::LogSumExp>},
  };
  return entries;
}
