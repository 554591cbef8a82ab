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

#include "mlir/Dialect/Quant/IR/QuantTypes.h"

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

/// Ops whose attributes map to the node's: one template, and per op only
/// what it sets.
template <typename OpTy, void (*SetAttrs)(OpTy, onnx::NodeProto &)>
static LogicalResult exportWithAttrs(GraphExporter &ex, Operation *op,
                                     const ExportEntry &entry) {
  return exportOneToOne(ex, op, entry.onnxType, [&](onnx::NodeProto &node) {
    SetAttrs(cast<OpTy>(op), node);
  });
}

static void setShapeAttrs(ShapeOp shape, onnx::NodeProto &node) {
  if (shape.getStart() != 0)
    setIntAttr(node, "start", shape.getStart());
  if (std::optional<int64_t> end = shape.getEnd())
    setIntAttr(node, "end", *end);
}

static void setGemmAttrs(GemmOp gemm, onnx::NodeProto &node) {
  setFloatAttr(node, "alpha", gemm.getAlpha().convertToFloat());
  setFloatAttr(node, "beta", gemm.getBeta().convertToFloat());
  setIntAttr(node, "transA", gemm.getTransA());
  setIntAttr(node, "transB", gemm.getTransB());
}

template <typename OpTy>
static void setAxisAttr(OpTy op, onnx::NodeProto &node) {
  setIntAttr(node, "axis", static_cast<int64_t>(op.getAxis()));
}

static void setLayerNormAttrs(LayerNormOp norm, onnx::NodeProto &node) {
  setIntAttr(node, "axis", static_cast<int64_t>(norm.getAxis()));
  setFloatAttr(node, "epsilon", norm.getEpsilon().convertToFloat());
}

/// Gather; from a row-quantized table (an f32 result of quantized data),
/// DequantizeLinear of the table along axis 0 first: ONNX Runtime computes
/// `(q - zero_point) * scale` in f32 exactly as lmopt does.
static LogicalResult exportGather(GraphExporter &ex, Operation *op,
                                  const ExportEntry &entry) {
  auto gather = llvm::cast<GatherOp>(op);
  auto tableType = llvm::cast<RankedTensorType>(gather.getData().getType());
  auto setAxis = [&](onnx::NodeProto &node) {
    setIntAttr(node, "axis", static_cast<int64_t>(gather.getAxis()));
  };
  if (!llvm::isa<quant::QuantizedType>(tableType.getElementType()) ||
      tableType.getElementType() ==
          gather.getOutput().getType().getElementType())
    return exportOneToOne(ex, op, entry.onnxType, setAxis);
  FailureOr<std::string> table = ex.getName(gather.getData());
  FailureOr<std::string> indices = ex.getName(gather.getIndices());
  if (failed(table) || failed(indices))
    return failure();
  FailureOr<std::string> rows =
      emitDequantize(ex, *table, tableType, op->getLoc());
  if (failed(rows))
    return failure();
  onnx::NodeProto &node =
      ex.addNode(entry.onnxType, {*rows, *indices},
                 {ex.defineResult(gather.getOutput())}, op->getLoc());
  setAxis(node);
  return success();
}

static void setGatherNDAttrs(GatherNDOp gather, onnx::NodeProto &node) {
  setIntAttr(node, "batch_dims", gather.getBatchDims());
}

static void setScatterNDAttrs(ScatterNDOp scatter, onnx::NodeProto &node) {
  if (scatter.getReduction() != ScatterReduction::none)
    setStringAttr(node, "reduction",
                  stringifyScatterReduction(scatter.getReduction()));
}

static void setReshapeAttrs(ReshapeOp reshape, onnx::NodeProto &node) {
  if (reshape.getAllowzero())
    setIntAttr(node, "allowzero", 1);
}

static void setTransposeAttrs(TransposeOp transpose, onnx::NodeProto &node) {
  setIntsAttr(node, "perm", transpose.getPerm());
}

static void setModAttrs(ModOp mod, onnx::NodeProto &node) {
  setIntAttr(node, "fmod", mod.getFmod());
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

/// Through emitReduce, which places `axes` as the opset wants.
template <typename OpTy>
static LogicalResult exportReduce(GraphExporter &ex, Operation *op,
                                  const ExportEntry &entry) {
  auto reduce = cast<OpTy>(op);
  FailureOr<std::string> input = ex.getName(reduce.getInput());
  if (failed(input))
    return failure();
  ex.bindResult(reduce.getOutput(),
                emitReduce(ex, entry.onnxType, *input, reduce.getAxes(),
                           reduce.getKeepdims(), op->getLoc()),
                op->getLoc());
  return success();
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
  std::string sizes = ex.addInt64s(getLocName(op->getLoc(), "split") + "/split",
                                   split.getSplitSizes());
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
    inputs.push_back(ex.addInt64s(getLocName(op->getLoc(), "squeeze") + "/axes",
                                  typed.getAxes()));
  ex.addNode(entry.onnxType, inputs, {ex.defineResult(typed.getOutput())},
             op->getLoc());
  return success();
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
      {id<SignOp>(), "Sign", exportDirect},
      {id<ReluOp>(), "Relu", exportDirect},
      {id<ExpOp>(), "Exp", exportDirect},
      {id<LogOp>(), "Log", exportDirect},
      {id<SqrtOp>(), "Sqrt", exportDirect},
      {id<ReciprocalOp>(), "Reciprocal", exportDirect},
      {id<TanhOp>(), "Tanh", exportDirect},
      {id<ErfOp>(), "Erf", exportDirect},
      {id<SigmoidOp>(), "Sigmoid", exportDirect},
      {id<CosOp>(), "Cos", exportDirect},
      {id<SinOp>(), "Sin", exportDirect},
      {id<CeilOp>(), "Ceil", exportDirect},
      {id<FloorOp>(), "Floor", exportDirect},
      {id<RoundOp>(), "Round", exportDirect},
      {id<NotOp>(), "Not", exportDirect},
      {id<IsNaNOp>(), "IsNaN", exportDirect},
      {id<IdentityOp>(), "Identity", exportDirect},
      {id<MatMulOp>(), "MatMul", exportDirect},
      {id<SizeOp>(), "Size", exportDirect},
      {id<RangeOp>(), "Range", exportDirect},
      {id<ExpandOp>(), "Expand", exportDirect},
      {id<GatherOp>(), "Gather", exportGather},
      {id<GatherElementsOp>(), "GatherElements",
       exportWithAttrs<GatherElementsOp, setAxisAttr<GatherElementsOp>>},
      {id<GatherNDOp>(), "GatherND",
       exportWithAttrs<GatherNDOp, setGatherNDAttrs>},
      // Reductions max and min are opset 18's.
      {id<ScatterNDOp>(), "ScatterND",
       exportWithAttrs<ScatterNDOp, setScatterNDAttrs>, 18},
      {id<CastOp>(), "Cast", exportCast},
      {id<ShapeOp>(), "Shape", exportWithAttrs<ShapeOp, setShapeAttrs>},
      {id<ConstantOfShapeOp>(), "ConstantOfShape", exportConstantOfShape},
      {id<GemmOp>(), "Gemm", exportWithAttrs<GemmOp, setGemmAttrs>},
      // Reductions and normalizations.
      {id<ReduceMeanOp>(), "ReduceMean", exportReduce<ReduceMeanOp>},
      {id<ReduceSumOp>(), "ReduceSum", exportReduce<ReduceSumOp>},
      {id<ReduceMaxOp>(), "ReduceMax", exportReduce<ReduceMaxOp>},
      {id<ReduceMinOp>(), "ReduceMin", exportReduce<ReduceMinOp>},
      {id<SoftmaxOp>(), "Softmax",
       exportWithAttrs<SoftmaxOp, setAxisAttr<SoftmaxOp>>},
      {id<LogSoftmaxOp>(), "LogSoftmax",
       exportWithAttrs<LogSoftmaxOp, setAxisAttr<LogSoftmaxOp>>},
      {id<LayerNormOp>(), "LayerNormalization",
       exportWithAttrs<LayerNormOp, setLayerNormAttrs>},
      // Data movement.
      {id<ReshapeOp>(), "Reshape", exportWithAttrs<ReshapeOp, setReshapeAttrs>},
      {id<TransposeOp>(), "Transpose",
       exportWithAttrs<TransposeOp, setTransposeAttrs>},
      {id<SliceOp>(), "Slice", exportSlice},
      {id<ConcatOp>(), "Concat",
       exportWithAttrs<ConcatOp, setAxisAttr<ConcatOp>>},
      {id<SplitOp>(), "Split", exportSplit},
      {id<SqueezeOp>(), "Squeeze", exportAxesInput<SqueezeOp>},
      {id<UnsqueezeOp>(), "Unsqueeze", exportAxesInput<UnsqueezeOp>},
      {id<ModOp>(), "Mod", exportWithAttrs<ModOp, setModAttrs>},
      {id<CumSumOp>(), "CumSum", exportCumSum},
      // Integer quantization with run-time parameters.
      {id<DynamicQuantizeLinearOp>(), "DynamicQuantizeLinear", exportDirect},
      {id<MatMulIntegerOp>(), "MatMulInteger", exportMatMulInteger},
  };
}
