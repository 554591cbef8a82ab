//===- OnnxOps.cpp - ONNX-level lmopt ops to their operators --------------===//
//
// ONNX-level ops mirror one ONNX operator each. Most export with operands as
// inputs and results as outputs; the rest turn attributes back into what
// the ONNX operator takes at the chosen opset (axes of reductions become an
// input from opset 18, Squeeze/Unsqueeze/Split/CumSum take inputs).
//
//===----------------------------------------------------------------------===//

#include "GraphExporter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_export;

static LogicalResult exportDirect(GraphExporter &ex, Operation *op,
                                  const ExportEntry &entry) {
  return exportOneToOne(ex, op, entry.onnxType);
}

static LogicalResult exportCast(GraphExporter &ex, Operation *op,
                                const ExportEntry &entry) {
  auto cast = llvm::cast<CastOp>(op);
  FailureOr<DataType> to =
      getDataType(cast.getType().getElementType(), op->getLoc());
  if (failed(to))
    return failure();
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    setIntAttr(node, "to", *to);
  });
}

static LogicalResult exportShape(GraphExporter &ex, Operation *op,
                                 const ExportEntry &entry) {
  auto shape = cast<ShapeOp>(op);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    if (shape.getStart() != 0)
      setIntAttr(node, "start", shape.getStart());
    if (std::optional<int64_t> end = shape.getEnd())
      setIntAttr(node, "end", *end);
  });
}

static LogicalResult exportConstantOfShape(GraphExporter &ex, Operation *op,
                                           const ExportEntry &entry) {
  auto fill = cast<ConstantOfShapeOp>(op);
  Type elementType = fill.getType().getElementType();
  auto type = RankedTensorType::get({1}, elementType);
  ElementsAttr value;
  if (auto elements = dyn_cast<DenseElementsAttr>(fill.getValue()))
    value = elements.reshape(type);
  else
    value = DenseElementsAttr::get(type, cast<Attribute>(fill.getValue()));
  FailureOr<DataType> code = getDataType(elementType, op->getLoc());
  if (failed(code))
    return failure();
  FailureOr<std::string> bytes = getRawData(value, op->getLoc());
  if (failed(bytes))
    return failure();
  onnx::TensorProto tensor;
  tensor.set_data_type(*code);
  tensor.add_dims(1);
  tensor.set_raw_data(*bytes);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    setTensorAttr(node, "value", std::move(tensor));
  });
}

static LogicalResult exportGemm(GraphExporter &ex, Operation *op,
                                const ExportEntry &entry) {
  auto gemm = cast<GemmOp>(op);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    setFloatAttr(node, "alpha", gemm.getAlpha().convertToFloat());
    setFloatAttr(node, "beta", gemm.getBeta().convertToFloat());
    setIntAttr(node, "transA", gemm.getTransA());
    setIntAttr(node, "transB", gemm.getTransB());
  });
}

/// ReduceSum takes `axes` as an input from opset 13, the others from 18.
template <typename OpTy>
static LogicalResult exportReduce(GraphExporter &ex, Operation *op,
                                  const ExportEntry &entry) {
  auto reduce = cast<OpTy>(op);
  ArrayRef<int64_t> axes = reduce.getAxes();
  bool axesAsInput =
      std::is_same_v<OpTy, ReduceSumOp> || ex.getOpset() >= 18;
  SmallVector<std::string> inputs;
  FailureOr<std::string> input = ex.getName(reduce.getInput());
  if (failed(input))
    return failure();
  inputs.push_back(*input);
  if (axesAsInput && !axes.empty())
    inputs.push_back(ex.addInt64s(getLocName(op->getLoc(), "reduce") + "/axes",
                                  axes));
  onnx::NodeProto &node =
      ex.addNode(entry.onnxType, inputs, {ex.defineResult(reduce.getOutput())},
                 op->getLoc());
  if (!axesAsInput && !axes.empty())
    setIntsAttr(node, "axes", axes);
  setIntAttr(node, "keepdims", reduce.getKeepdims());
  return success();
}

template <typename OpTy>
static LogicalResult exportWithAxis(GraphExporter &ex, Operation *op,
                                    const ExportEntry &entry) {
  auto typed = cast<OpTy>(op);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    setIntAttr(node, "axis", typed.getAxis());
  });
}

static LogicalResult exportLayerNorm(GraphExporter &ex, Operation *op,
                                     const ExportEntry &entry) {
  auto norm = cast<LayerNormOp>(op);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    setIntAttr(node, "axis", norm.getAxis());
    setFloatAttr(node, "epsilon", norm.getEpsilon().convertToFloat());
  });
}

static LogicalResult exportGatherND(GraphExporter &ex, Operation *op,
                                    const ExportEntry &entry) {
  auto gather = cast<GatherNDOp>(op);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    setIntAttr(node, "batch_dims", gather.getBatchDims());
  });
}

static LogicalResult exportReshape(GraphExporter &ex, Operation *op,
                                   const ExportEntry &entry) {
  auto reshape = cast<ReshapeOp>(op);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    if (reshape.getAllowzero())
      setIntAttr(node, "allowzero", 1);
  });
}

static LogicalResult exportTranspose(GraphExporter &ex, Operation *op,
                                     const ExportEntry &entry) {
  auto transpose = cast<TransposeOp>(op);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    setIntsAttr(node, "perm", transpose.getPerm());
  });
}

static LogicalResult exportSlice(GraphExporter &ex, Operation *op,
                                 const ExportEntry &entry) {
  auto slice = cast<SliceOp>(op);
  FailureOr<SmallVector<std::string>> inputs =
      ex.getNames({slice.getInput(), slice.getStarts(), slice.getEnds(),
                   slice.getAxes(), slice.getSteps()});
  if (failed(inputs))
    return failure();
  ex.addNode(entry.onnxType, *inputs, {ex.defineResult(slice.getOutput())},
             op->getLoc());
  return success();
}

static LogicalResult exportSplit(GraphExporter &ex, Operation *op,
                                 const ExportEntry &entry) {
  auto split = cast<SplitOp>(op);
  FailureOr<std::string> input = ex.getName(split.getInput());
  if (failed(input))
    return failure();
  std::string sizes = ex.addInt64s(
      getLocName(op->getLoc(), "split") + "/split", split.getSplitSizes());
  SmallVector<std::string> outputs;
  for (Value result : split.getOutputs())
    outputs.push_back(ex.defineResult(result));
  onnx::NodeProto &node =
      ex.addNode(entry.onnxType, {*input, sizes}, outputs, op->getLoc());
  setIntAttr(node, "axis", split.getAxis());
  return success();
}

/// Squeeze and Unsqueeze take `axes` as an input (opset 13+).
template <typename OpTy>
static LogicalResult exportAxesInput(GraphExporter &ex, Operation *op,
                                     const ExportEntry &entry) {
  auto typed = cast<OpTy>(op);
  FailureOr<std::string> input = ex.getName(typed.getInput());
  if (failed(input))
    return failure();
  SmallVector<std::string> inputs = {*input};
  if (!typed.getAxes().empty())
    inputs.push_back(ex.addInt64s(
        getLocName(op->getLoc(), "squeeze") + "/axes", typed.getAxes()));
  ex.addNode(entry.onnxType, inputs, {ex.defineResult(typed.getOutput())},
             op->getLoc());
  return success();
}

static LogicalResult exportMod(GraphExporter &ex, Operation *op,
                               const ExportEntry &entry) {
  auto mod = cast<ModOp>(op);
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    setIntAttr(node, "fmod", mod.getFmod());
  });
}

static LogicalResult exportCumSum(GraphExporter &ex, Operation *op,
                                  const ExportEntry &entry) {
  auto cumsum = cast<CumSumOp>(op);
  FailureOr<std::string> input = ex.getName(cumsum.getInput());
  if (failed(input))
    return failure();
  std::string axis = ex.addInt64s(getLocName(op->getLoc(), "cumsum") + "/axis",
                                  {static_cast<int64_t>(cumsum.getAxis())},
                                  /*scalar=*/true);
  onnx::NodeProto &node =
      ex.addNode(entry.onnxType, {*input, axis},
                 {ex.defineResult(cumsum.getOutput())}, op->getLoc());
  setIntAttr(node, "exclusive", cumsum.getExclusive());
  setIntAttr(node, "reverse", cumsum.getReverse());
  return success();
}

static LogicalResult exportMatMulInteger(GraphExporter &ex, Operation *op,
                                         const ExportEntry &entry) {
  auto matmul = cast<MatMulIntegerOp>(op);
  FailureOr<SmallVector<std::string>> inputs =
      ex.getNames({matmul.getA(), matmul.getB(), matmul.getAZeroPoint(),
                   matmul.getBZeroPoint()});
  if (failed(inputs))
    return failure();
  ex.addNode(entry.onnxType, *inputs, {ex.defineResult(matmul.getOutput())},
             op->getLoc());
  return success();
}

template <typename OpTy> static TypeID id() { return TypeID::get<OpTy>(); }

SmallVector<ExportEntry> mlir::lmopt::onnx_export::getOnnxOpExporters() {
  return {
      // Elementwise, matrix products and shapes: operands in, results out.
      {id<AddOp>(), "Add", exportDirect},
      {id<SubOp>(), "Sub", exportDirect},
      {id<MulOp>(), "Mul", exportDirect},
      {id<DivOp>(), "Div", exportDirect},
      {id<PowOp>(), "Pow", exportDirect},
      {id<MaxOp>(), "Max", exportDirect},
      {id<MinOp>(), "Min", exportDirect},
      {id<EqualOp>(), "Equal", exportDirect},
      {id<LessOp>(), "Less", exportDirect},
      {id<GreaterOp>(), "Greater", exportDirect},
      {id<AndOp>(), "And", exportDirect},
      {id<OrOp>(), "Or", exportDirect},
      {id<WhereOp>(), "Where", exportDirect},
      {id<NegOp>(), "Neg", exportDirect},
      {id<AbsOp>(), "Abs", exportDirect},
      {id<ReluOp>(), "Relu", exportDirect},
      {id<ExpOp>(), "Exp", exportDirect},
      {id<LogOp>(), "Log", exportDirect},
      {id<SqrtOp>(), "Sqrt", exportDirect},
      {id<ReciprocalOp>(), "Reciprocal", exportDirect},
      {id<TanhOp>(), "Tanh", exportDirect},
      {id<ErfOp>(), "Erf", exportDirect},
      {id<SigmoidOp>(), "Sigmoid", exportDirect},
      {id<NotOp>(), "Not", exportDirect},
      {id<IsNaNOp>(), "IsNaN", exportDirect},
      {id<IdentityOp>(), "Identity", exportDirect},
      {id<MatMulOp>(), "MatMul", exportDirect},
      {id<SizeOp>(), "Size", exportDirect},
      {id<RangeOp>(), "Range", exportDirect},
      {id<ExpandOp>(), "Expand", exportDirect},
      {id<GatherOp>(), "Gather", exportWithAxis<GatherOp>},
      {id<GatherElementsOp>(), "GatherElements",
       exportWithAxis<GatherElementsOp>},
      {id<GatherNDOp>(), "GatherND", exportGatherND},
      {id<CastOp>(), "Cast", exportCast},
      {id<ShapeOp>(), "Shape", exportShape},
      {id<ConstantOfShapeOp>(), "ConstantOfShape", exportConstantOfShape},
      {id<GemmOp>(), "Gemm", exportGemm},
      // Reductions and normalizations.
      {id<ReduceMeanOp>(), "ReduceMean", exportReduce<ReduceMeanOp>},
      {id<ReduceSumOp>(), "ReduceSum", exportReduce<ReduceSumOp>},
      {id<ReduceMaxOp>(), "ReduceMax", exportReduce<ReduceMaxOp>},
      {id<ReduceMinOp>(), "ReduceMin", exportReduce<ReduceMinOp>},
      {id<SoftmaxOp>(), "Softmax", exportWithAxis<SoftmaxOp>},
      {id<LogSoftmaxOp>(), "LogSoftmax", exportWithAxis<LogSoftmaxOp>},
      {id<LayerNormOp>(), "LayerNormalization", exportLayerNorm},
      // Data movement.
      {id<ReshapeOp>(), "Reshape", exportReshape},
      {id<TransposeOp>(), "Transpose", exportTranspose},
      {id<SliceOp>(), "Slice", exportSlice},
      {id<ConcatOp>(), "Concat", exportWithAxis<ConcatOp>},
      {id<SplitOp>(), "Split", exportSplit},
      {id<SqueezeOp>(), "Squeeze", exportAxesInput<SqueezeOp>},
      {id<UnsqueezeOp>(), "Unsqueeze", exportAxesInput<UnsqueezeOp>},
      {id<ModOp>(), "Mod", exportMod},
      {id<CumSumOp>(), "CumSum", exportCumSum},
      // Integer quantization with run-time parameters.
      {id<DynamicQuantizeLinearOp>(), "DynamicQuantizeLinear", exportDirect},
      {id<MatMulIntegerOp>(), "MatMulInteger", exportMatMulInteger},
  };
}
