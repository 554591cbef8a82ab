//===- FusedOps.cpp - fused lmopt ops as standard ONNX operators ----------===//
//
// Each fused op decomposes into the standard operators whose semantics it
// was fused from, so that any ONNX runtime computes the same values
// (docs/exporter.md has the table). Gelu is the opset 20 operator when the
// model is written at opset 20 or later, else its Erf/Tanh formula.
//
//===----------------------------------------------------------------------===//

#include "GraphExporter.h"

#include "mlir/IR/TypeUtilities.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_export;

std::string mlir::lmopt::onnx_export::emitReduce(GraphExporter &ex,
                                                 StringRef onnxType,
                                                 StringRef input,
                                                 ArrayRef<int64_t> axes,
                                                 bool keepdims, Location loc) {
  bool axesAsInput = onnxType == "ReduceSum" || ex.getOpset() >= 18;
  SmallVector<std::string> inputs = {input.str()};
  // No axes reduces over every dim.
  if (axesAsInput && !axes.empty())
    inputs.push_back(ex.addInt64s(getLocName(loc, "reduce") + "/axes", axes));
  return ex.emit(onnxType, inputs, loc, [&](onnx::NodeProto &node) {
    if (!axesAsInput && !axes.empty())
      setIntsAttr(node, "axes", axes);
    setIntAttr(node, "keepdims", keepdims);
  });
}

FailureOr<std::string> mlir::lmopt::onnx_export::emitGelu(GraphExporter &ex,
                                                          StringRef input,
                                                          Type type, bool tanh,
                                                          Location loc) {
  std::string x = input.str();
  if (ex.getOpset() >= 20)
    return ex.emit("Gelu", {x}, loc, [&](onnx::NodeProto &node) {
      setStringAttr(node, "approximate", tanh ? "tanh" : "none");
    });
  std::string base = getLocName(loc, "gelu");
  auto constant = [&](StringRef name, double value) {
    return ex.addFloatScalar(base + "/" + name.str(), type, value, loc);
  };
  FailureOr<std::string> half = constant("half", 0.5);
  FailureOr<std::string> one = constant("one", 1.0);
  if (failed(half) || failed(one))
    return failure();
  std::string inner;
  if (!tanh) {
    // 0.5 x (1 + erf(x / sqrt(2)))
    FailureOr<std::string> sqrt2 = constant("sqrt2", std::sqrt(2.0));
    if (failed(sqrt2))
      return failure();
    inner = ex.emit("Erf", {ex.emit("Div", {x, *sqrt2}, loc)}, loc);
  } else {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    FailureOr<std::string> coefficient = constant("coefficient", 0.044715);
    FailureOr<std::string> sqrt2OverPi =
        constant("sqrt_2_over_pi", std::sqrt(2.0 / M_PI));
    if (failed(coefficient) || failed(sqrt2OverPi))
      return failure();
    std::string cube = ex.emit("Mul", {ex.emit("Mul", {x, x}, loc), x}, loc);
    std::string sum =
        ex.emit("Add", {x, ex.emit("Mul", {cube, *coefficient}, loc)}, loc);
    inner = ex.emit("Tanh", {ex.emit("Mul", {sum, *sqrt2OverPi}, loc)}, loc);
  }
  std::string scaled =
      ex.emit("Mul", {x, ex.emit("Add", {inner, *one}, loc)}, loc);
  return ex.emit("Mul", {scaled, *half}, loc);
}

static LogicalResult exportGelu(GraphExporter &ex, Operation *op,
                                const ExportEntry &) {
  auto gelu = cast<GeluOp>(op);
  FailureOr<std::string> input = ex.getName(gelu.getInput());
  if (failed(input))
    return failure();
  FailureOr<std::string> output =
      emitGelu(ex, *input, gelu.getType().getElementType(),
               gelu.getApproximate() == GeluApproximation::tanh, op->getLoc());
  if (failed(output))
    return failure();
  ex.bindResult(gelu.getOutput(), *output, op->getLoc());
  return success();
}

static LogicalResult exportSkipLayerNorm(GraphExporter &ex, Operation *op,
                                         const ExportEntry &) {
  auto norm = cast<SkipLayerNormOp>(op);
  FailureOr<SmallVector<std::string>> inputs = ex.getNames(
      {norm.getInput(), norm.getSkip(), norm.getScale(), norm.getBias()});
  if (failed(inputs))
    return failure();
  std::string sum = ex.defineResult(norm.getSum());
  ex.addNode("Add", {(*inputs)[0], (*inputs)[1]}, {sum}, op->getLoc());
  onnx::NodeProto &node =
      ex.addNode("LayerNormalization", {sum, (*inputs)[2], (*inputs)[3]},
                 {ex.defineResult(norm.getOutput())}, op->getLoc());
  setIntAttr(node, "axis", -1);
  setFloatAttr(node, "epsilon", norm.getEpsilon().convertToFloat());
  return success();
}

static LogicalResult exportRmsNorm(GraphExporter &ex, Operation *op,
                                   const ExportEntry &) {
  auto norm = cast<RmsNormOp>(op);
  Location loc = op->getLoc();
  auto type = cast<RankedTensorType>(norm.getInput().getType());
  int64_t rank = type.getRank();
  int64_t axis = static_cast<int64_t>(norm.getAxis());
  if (axis < 0)
    axis += rank;
  FailureOr<SmallVector<std::string>> inputs =
      ex.getNames({norm.getInput(), norm.getScale()});
  FailureOr<std::string> epsilon = ex.addFloatScalar(
      getLocName(loc, "rms_norm") + "/epsilon", type.getElementType(),
      norm.getEpsilon().convertToDouble(), loc);
  if (failed(inputs) || failed(epsilon))
    return failure();
  // x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale
  std::string x = (*inputs)[0];
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  std::string meanSquare =
      emitReduce(ex, "ReduceMean", ex.emit("Mul", {x, x}, loc), axes,
                 /*keepdims=*/true, loc);
  std::string rms =
      ex.emit("Sqrt", {ex.emit("Add", {meanSquare, *epsilon}, loc)}, loc);
  ex.addNode("Mul", {ex.emit("Div", {x, rms}, loc), (*inputs)[1]},
             {ex.defineResult(norm.getOutput())}, loc);
  return success();
}

static LogicalResult exportDropout(GraphExporter &ex, Operation *op,
                                   const ExportEntry &) {
  auto dropout = cast<DropoutOp>(op);
  Location loc = op->getLoc();
  FailureOr<std::string> input = ex.getName(dropout.getInput());
  if (failed(input))
    return failure();
  std::string base = getLocName(loc, "dropout");
  std::string ratio =
      ex.addFloat(base + "/ratio", dropout.getRatio().convertToFloat());
  std::string training =
      ex.addInitializer(base + "/training_mode", onnx::TensorProto::BOOL, {},
                        std::string(1, dropout.getTraining() ? 1 : 0));
  onnx::NodeProto &node = ex.addNode("Dropout", {*input, ratio, training},
                                     {ex.defineResult(dropout.getOutput()),
                                      ex.defineResult(dropout.getMask())},
                                     loc);
  if (std::optional<int64_t> seed = dropout.getSeed())
    setIntAttr(node, "seed", *seed);
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {
/// Builds the standard-op form of one `lmopt.attention`.
class AttentionExporter {
public:
  AttentionExporter(GraphExporter &ex, AttentionOp op)
      : ex(ex), op(op), loc(op.getLoc()),
        base(getLocName(op.getLoc(), "attention")) {}

  LogicalResult run();

private:
  std::string shapeConstant(StringRef name, ArrayRef<int64_t> values) {
    return ex.addInt64s(base + "/" + name.str(), values);
  }
  std::string transpose(StringRef input, ArrayRef<int64_t> perm) {
    return ex.emit("Transpose", {input.str()}, loc, [&](onnx::NodeProto &node) {
      setIntsAttr(node, "perm", perm);
    });
  }
  /// [B, S, heads*D] -> [B, heads, S, D], or [B, heads, D, S] for keys.
  std::string splitHeads(StringRef input, bool keys, int64_t heads) {
    std::string split = ex.emit(
        "Reshape",
        {input.str(), shapeConstant("heads_shape", {0, 0, heads, headDim})},
        loc);
    return transpose(split, keys ? ArrayRef<int64_t>{0, 2, 3, 1}
                                 : ArrayRef<int64_t>{0, 2, 1, 3});
  }
  /// Grouped-query attention as Llama's repeat_kv spells it: [B, G, a, b]
  /// heads each repeated H/G times, [B, H, a, b]; `keys` says b is the
  /// dynamic one (keys are [B, G, D, S]).
  std::string repeatHeads(StringRef heads, int64_t kvHeads, bool keys) {
    std::string unsqueezed =
        ex.emit("Unsqueeze",
                {heads.str(), ex.addInt64s(base + "/group_axis", {2})}, loc);
    std::string expanded =
        ex.emit("Expand",
                {unsqueezed, shapeConstant("group_shape",
                                           {1, 1, numHeads / kvHeads, 1, 1})},
                loc);
    return ex.emit(
        "Reshape",
        {expanded,
         shapeConstant("repeated_shape",
                       keys ? ArrayRef<int64_t>{0, numHeads, headDim, -1}
                            : ArrayRef<int64_t>{0, numHeads, -1, headDim})},
        loc);
  }
  /// True where key j is visible from query i: j <= i + (Sk - Sq).
  std::string causalKeep(StringRef scores);

  GraphExporter &ex;
  AttentionOp op;
  Location loc;
  std::string base;
  int64_t numHeads = 0;
  int64_t headDim = 0;
};
} // namespace

std::string AttentionExporter::causalKeep(StringRef scores) {
  std::string shape = ex.emit("Shape", {scores.str()}, loc);
  auto dim = [&](int64_t index) {
    return ex.emit("Gather",
                   {shape, ex.addInt64s(base + "/dim", {index}, true)}, loc,
                   [](onnx::NodeProto &node) { setIntAttr(node, "axis", 0); });
  };
  std::string queries = dim(2), keys = dim(3);
  std::string zero = ex.addInt64s(base + "/zero", {0}, true);
  std::string one = ex.addInt64s(base + "/one", {1}, true);
  std::string queryIndex = ex.emit("Unsqueeze",
                                   {ex.emit("Range", {zero, queries, one}, loc),
                                    ex.addInt64s(base + "/last_axis", {1})},
                                   loc);
  std::string keyIndex = ex.emit("Range", {zero, keys, one}, loc);
  std::string limit =
      ex.emit("Add", {queryIndex, ex.emit("Sub", {keys, queries}, loc)}, loc);
  return ex.emit("LessOrEqual", {keyIndex, limit}, loc);
}

LogicalResult AttentionExporter::run() {
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  Type elementType = queryType.getElementType();
  int64_t hidden = queryType.getShape().back();
  numHeads = op.getNumHeads();
  const int64_t kvHeads = op.getKvHeads();
  if (ShapedType::isDynamic(hidden) || hidden % numHeads != 0)
    return op.emitError() << "cannot export attention whose query has "
                             "a dynamic or indivisible last dim ("
                          << queryType << ", " << numHeads << " heads)";
  headDim = hidden / numHeads;
  FailureOr<SmallVector<std::string>> inputs = ex.getNames(
      {op.getQuery(), op.getKey(), op.getValue(), op.getMask(), op.getBias()});
  if (failed(inputs))
    return failure();
  std::string query = splitHeads((*inputs)[0], /*keys=*/false, numHeads);
  std::string key, value;
  if (op.getKvHeadsSplit()) {
    key = transpose((*inputs)[1], {0, 1, 3, 2});
    value = (*inputs)[2];
  } else {
    key = splitHeads((*inputs)[1], /*keys=*/true, kvHeads);
    value = splitHeads((*inputs)[2], /*keys=*/false, kvHeads);
  }
  if (kvHeads != numHeads) {
    key = repeatHeads(key, kvHeads, /*keys=*/true);
    value = repeatHeads(value, kvHeads, /*keys=*/false);
  }

  double scaleValue = op.getScale()
                          ? op.getScale()->convertToDouble()
                          : 1.0 / std::sqrt(static_cast<double>(headDim));
  FailureOr<std::string> scale =
      ex.addFloatScalar(base + "/scale", elementType, scaleValue, loc);
  if (failed(scale))
    return failure();
  std::string scores =
      ex.emit("Mul", {ex.emit("MatMul", {query, key}, loc), *scale}, loc);
  // The score bias ([1|B, 1|H, 1|Sq, Sk]) is added after the scale, before
  // the mask, as the op defines it.
  if (op.getBias())
    scores = ex.emit("Add", {scores, (*inputs)[4]}, loc);

  // Hidden positions: the float mask is added; the i1 mask and causal keep
  // what is true. Hidden scores are -inf when fully hidden rows become zeros
  // (the NaN softmax gives them is replaced below), else the lowest float.
  Value mask = op.getMask();
  std::optional<std::string> keep;
  if (mask && getElementTypeOrSelf(mask.getType()).isInteger(1))
    keep = (*inputs)[3];
  else if (mask)
    scores = ex.emit("Add", {scores, (*inputs)[3]}, loc);
  if (op.getCausal()) {
    std::string causal = causalKeep(scores);
    keep = keep ? ex.emit("And", {*keep, causal}, loc) : causal;
  }
  bool zeroRows = op.getZeroMaskedRows();
  if (keep) {
    auto floatType = cast<FloatType>(elementType);
    double hiddenScore =
        zeroRows ? -std::numeric_limits<double>::infinity()
                 : APFloat::getLargest(floatType.getFloatSemantics(),
                                       /*Negative=*/true)
                       .convertToDouble();
    FailureOr<std::string> fill = ex.addFloatScalar(
        base + "/hidden_score", elementType, hiddenScore, loc);
    if (failed(fill))
      return failure();
    scores = ex.emit("Where", {*keep, scores, *fill}, loc);
  }
  std::string probs =
      ex.emit("Softmax", {scores}, loc,
              [](onnx::NodeProto &node) { setIntAttr(node, "axis", -1); });
  if (zeroRows) {
    FailureOr<std::string> zero =
        ex.addFloatScalar(base + "/zero_prob", elementType, 0.0, loc);
    if (failed(zero))
      return failure();
    probs =
        ex.emit("Where", {ex.emit("IsNaN", {probs}, loc), *zero, probs}, loc);
  }
  std::string context =
      transpose(ex.emit("MatMul", {probs, value}, loc), {0, 2, 1, 3});
  ex.addNode("Reshape",
             {context, shapeConstant("merged_shape", {0, 0, hidden})},
             {ex.defineResult(op.getOutput())}, loc);
  return success();
}

static LogicalResult exportAttention(GraphExporter &ex, Operation *op,
                                     const ExportEntry &) {
  return AttentionExporter(ex, cast<AttentionOp>(op)).run();
}

/// x * cos + concat(-x[..., half:], x[..., :half]) * sin, as the Llama
/// exports spell it.
static LogicalResult exportRotary(GraphExporter &ex, Operation *op,
                                  const ExportEntry &) {
  auto rotary = cast<RotaryOp>(op);
  Location loc = op->getLoc();
  FailureOr<SmallVector<std::string>> inputs =
      ex.getNames({rotary.getInput(), rotary.getCos(), rotary.getSin()});
  if (failed(inputs))
    return failure();
  std::string x = (*inputs)[0];
  int64_t half =
      cast<RankedTensorType>(rotary.getInput().getType()).getShape().back() / 2;
  std::string base = getLocName(loc, "rotary");
  std::string axis = ex.addInt64s(base + "/axis", {-1});
  std::string zero = ex.addInt64s(base + "/zero", {0});
  std::string middle = ex.addInt64s(base + "/half", {half});
  std::string end = ex.addInt64s(base + "/end", {2 * half});
  std::string low = ex.emit("Slice", {x, zero, middle, axis}, loc);
  std::string high = ex.emit("Slice", {x, middle, end, axis}, loc);
  std::string rotated =
      ex.emit("Concat", {ex.emit("Neg", {high}, loc), low}, loc,
              [](onnx::NodeProto &node) { setIntAttr(node, "axis", -1); });
  ex.addNode("Add",
             {ex.emit("Mul", {x, (*inputs)[1]}, loc),
              ex.emit("Mul", {rotated, (*inputs)[2]}, loc)},
             {ex.defineResult(rotary.getOutput())}, loc);
  return success();
}

template <typename OpTy> static TypeID id() { return TypeID::get<OpTy>(); }

SmallVector<ExportEntry> mlir::lmopt::onnx_export::getFusedOpExporters() {
  return {
      {id<GeluOp>(), "", exportGelu},
      {id<SkipLayerNormOp>(), "", exportSkipLayerNorm},
      {id<RmsNormOp>(), "", exportRmsNorm},
      {id<RotaryOp>(), "", exportRotary},
      {id<DropoutOp>(), "Dropout", exportDropout},
      {id<AttentionOp>(), "", exportAttention},
  };
}
