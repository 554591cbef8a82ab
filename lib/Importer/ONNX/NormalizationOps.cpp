//===- NormalizationOps.cpp - ONNX reductions and normalizations ----------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

FailureOr<ReduceSpec>
mlir::lmopt::onnx_import::getReduceSpec(NodeContext &ctx,
                                         int64_t axesInputOpset) {
  bool axesAsInput = ctx.getOpset() >= axesInputOpset;
  if (failed(ctx.checkInputs(1, axesAsInput ? 2 : 1)))
    return failure();
  FailureOr<int64_t> keepdims = ctx.getInt("keepdims", 1);
  FailureOr<int64_t> noop = ctx.getInt("noop_with_empty_axes", 0);
  if (failed(keepdims) || failed(noop))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = SmallVector<int64_t>();
  if (axesAsInput && ctx.hasInput(1))
    axes = ctx.getConstantInts(1, "axes");
  else if (!axesAsInput)
    axes = ctx.getInts("axes", ArrayRef<int64_t>());
  if (failed(axes))
    return failure();
  ReduceSpec spec;
  spec.axes = *axes;
  spec.keepdims = *keepdims != 0;
  RankedTensorType type = ctx.getInputType(0);
  if (axes->empty() && *noop) {
    spec.noop = true;
    spec.shape = llvm::to_vector(type.getShape());
    return spec;
  }
  FailureOr<SmallVector<int64_t>> normalized =
      ctx.normalizeAxes(*axes, type.getRank());
  if (failed(normalized))
    return failure();
  if (normalized->empty())
    normalized = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  for (auto [i, dim] : llvm::enumerate(type.getShape())) {
    if (!llvm::is_contained(*normalized, static_cast<int64_t>(i)))
      spec.shape.push_back(dim);
    else if (spec.keepdims)
      spec.shape.push_back(1);
  }
  return spec;
}

/// Reductions take `axes` as an attribute before `AxesInputOpset` and as an
/// optional constant input from then on.
template <typename OpTy, int64_t AxesInputOpset>
static LogicalResult convertReduce(NodeContext &ctx) {
  FailureOr<ReduceSpec> spec = getReduceSpec(ctx, AxesInputOpset);
  if (failed(spec))
    return failure();
  Value input = ctx.getInput(0);
  if (spec->noop) {
    ctx.setOutput(0, input);
    return success();
  }
  Type elementType = ctx.getInputType(0).getElementType();
  auto op = ctx.createOp<OpTy>(RankedTensorType::get(spec->shape, elementType),
                               input, spec->axes, spec->keepdims);
  ctx.setOutput(0, op.getOutput());
  return success();
}

/// Softmax from opset 13 normalizes one axis. Before 13 it flattens to 2-D at
/// `axis`, which is the same thing only when `axis` is the last dim.
template <typename OpTy> static LogicalResult convertSoftmax(NodeContext &ctx) {
  if (failed(ctx.checkInputs(1, 1)))
    return failure();
  bool flattening = ctx.getOpset() < 13;
  FailureOr<int64_t> axis = ctx.getInt("axis", flattening ? 1 : -1);
  if (failed(axis))
    return failure();
  int64_t rank = ctx.getInputType(0).getRank();
  std::optional<int64_t> normalized = normalizeAxis(*axis, rank);
  if (!normalized)
    return ctx.emitError() << "axis " << *axis << " is out of range for rank "
                           << rank;
  if (flattening && *normalized != rank - 1)
    return ctx.emitError() << "axis " << *axis
                           << " flattens the input (opset < 13 semantics), "
                              "which lmopt supports only for the last axis";
  auto op = ctx.createOp<OpTy>(ctx.getInput(0), *normalized);
  ctx.setOutput(0, op.getOutput());
  return success();
}

/// LayerNormalization's optional outputs, in `stash_type` (float by
/// default), over the axes from `axis` on with their dims kept:
/// Mean = mean(x), InvStdDev = 1 / sqrt(mean((x - Mean)^2) + epsilon).
static LogicalResult setStatisticsOutputs(NodeContext &ctx, int64_t axis,
                                          float epsilon) {
  FailureOr<Type> stash = ctx.getStashType();
  if (failed(stash))
    return failure();
  Type stashType = *stash;
  OpBuilder &b = ctx.getBuilder();
  RankedTensorType type = ctx.getInputType(0);
  Value x = ctx.getInput(0);
  auto stashed = RankedTensorType::get(type.getShape(), stashType);
  if (type.getElementType() != stashType)
    x = ctx.createOp<CastOp>(stashed, x).getOutput();
  SmallVector<int64_t> axes, shape(type.getShape());
  for (int64_t i = axis; i < type.getRank(); ++i) {
    axes.push_back(i);
    shape[i] = 1;
  }
  auto statType = RankedTensorType::get(shape, stashType);
  Value mean = ctx.createOp<ReduceMeanOp>(statType, x, axes, true).getOutput();
  Value centered = ctx.createOp<SubOp>(stashed, x, mean).getOutput();
  Value squared = ctx.createOp<MulOp>(stashed, centered, centered).getOutput();
  Value variance =
      ctx.createOp<ReduceMeanOp>(statType, squared, axes, true).getOutput();
  auto scalar = RankedTensorType::get({}, stashType);
  Value eps =
      ctx.createOp<ConstantOp>(
             DenseElementsAttr::get(scalar, b.getFloatAttr(stashType, epsilon)))
          .getOutput();
  Value shifted = ctx.createOp<AddOp>(statType, variance, eps).getOutput();
  Value stdDev = ctx.createOp<SqrtOp>(shifted).getOutput();
  ctx.setOutput(1, mean);
  ctx.setOutput(2, ctx.createOp<ReciprocalOp>(stdDev).getOutput());
  return success();
}

static LogicalResult convertLayerNorm(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 3)))
    return failure();
  FailureOr<int64_t> axis = ctx.getInt("axis", -1);
  FailureOr<float> epsilon = ctx.getFloat("epsilon", 1e-5f);
  if (failed(axis) || failed(epsilon))
    return failure();
  RankedTensorType type = ctx.getInputType(0);
  std::optional<int64_t> normalized = normalizeAxis(*axis, type.getRank());
  if (!normalized)
    return ctx.emitError() << "axis " << *axis << " is out of range for rank "
                           << type.getRank();
  auto op =
      ctx.createOp<LayerNormOp>(type, ctx.getInput(0), ctx.getInput(1),
                                ctx.getInput(2), *axis, APFloat(*epsilon));
  ctx.setOutput(0, op.getOutput());
  // The training outputs are computed on their own, so that Y stays one
  // fusable layer norm.
  if (ctx.hasOutput(1) || ctx.hasOutput(2))
    return setStatisticsOutputs(ctx, *normalized, *epsilon);
  return success();
}

/// RMSNormalization (opset 23): `lmopt.rms_norm` over `[axis, rank)`, which
/// computes in float as `stash_type` 1 asks.
static LogicalResult convertRmsNorm(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<int64_t> axis = ctx.getInt("axis", -1);
  FailureOr<float> epsilon = ctx.getFloat("epsilon", 1e-5f);
  FailureOr<Type> stash = ctx.getStashType();
  if (failed(axis) || failed(epsilon) || failed(stash))
    return failure();
  if (!stash->isF32())
    return ctx.emitError() << "attribute 'stash_type' = 11 is not supported: "
                              "lmopt.rms_norm computes in float";
  RankedTensorType type = ctx.getInputType(0);
  if (!normalizeAxis(*axis, type.getRank()))
    return ctx.emitError() << "axis " << *axis << " is out of range for rank "
                           << type.getRank();
  if (ctx.getInputType(1).getElementType() != type.getElementType())
    return ctx.emitError() << "'scale' element type "
                           << ctx.getInputType(1).getElementType()
                           << " differs from the input's "
                           << type.getElementType();
  ctx.setOutput(0,
                ctx.createOp<RmsNormOp>(type, ctx.getInput(0), ctx.getInput(1),
                                        *axis, APFloat(*epsilon))
                    .getOutput());
  return success();
}

static LogicalResult convertCumSum(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  FailureOr<int64_t> exclusive = ctx.getInt("exclusive", 0);
  FailureOr<int64_t> reverse = ctx.getInt("reverse", 0);
  FailureOr<SmallVector<int64_t>> axis = ctx.getConstantInts(1, "axis");
  if (failed(exclusive) || failed(reverse) || failed(axis))
    return failure();
  if (axis->size() != 1)
    return ctx.emitError() << "'axis' must hold one value, got "
                           << axis->size();
  int64_t rank = ctx.getInputType(0).getRank();
  std::optional<int64_t> normalized = normalizeAxis((*axis)[0], rank);
  if (!normalized)
    return ctx.emitError() << "axis " << (*axis)[0]
                           << " is out of range for rank " << rank;
  ctx.setOutput(0, ctx.createOp<CumSumOp>(ctx.getInput(0), *normalized,
                                          *exclusive != 0, *reverse != 0)
                       .getOutput());
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kNormalizationConverters[] = {
    {"", "ReduceMean", 1, kMax, convertReduce<ReduceMeanOp, 18>},
    {"", "ReduceSum", 1, kMax, convertReduce<ReduceSumOp, 13>},
    {"", "ReduceMax", 1, kMax, convertReduce<ReduceMaxOp, 18>},
    {"", "ReduceMin", 1, kMax, convertReduce<ReduceMinOp, 18>},
    {"", "Softmax", 1, kMax, convertSoftmax<SoftmaxOp>},
    {"", "LogSoftmax", 1, kMax, convertSoftmax<LogSoftmaxOp>},
    {"", "LayerNormalization", 17, kMax, convertLayerNorm},
    {"", "RMSNormalization", 23, kMax, convertRmsNorm},
    {"", "CumSum", 11, kMax, convertCumSum},
};

ArrayRef<ConverterEntry>
mlir::lmopt::onnx_import::getNormalizationConverters() {
  return kNormalizationConverters;
}
