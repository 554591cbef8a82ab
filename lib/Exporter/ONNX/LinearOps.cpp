//===- LinearOps.cpp - lmopt.linear in every precision --------------------===//
//
// `linear` decomposes into MatMul + Add(bias) + activation + Add(residual).
// The product depends on the mode (docs/dialect.md, "Quantized and
// mixed-precision linears"; docs/exporter.md):
//   - float: MatMul in f32; bf16/f16 operands are Cast to f32 first (exact,
//     and what ONNX Runtime's CPU provider runs), the result cast back;
//   - quantized weight: the integer initializer + DequantizeLinear (QDQ);
//   - static int8 input: DequantizeLinear of the QuantizeLinear'd input;
//   - dynamic per tensor: DynamicQuantizeLinear + MatMulInteger + scale Mul
//     (onnxruntime's quantize_dynamic form);
//   - dynamic per token: the row quantization spelled out (ReduceMax(Abs),
//     Div, Round, Clip, Cast) + MatMulInteger + row and channel scales.
// A constant weight stored transposed is written transposed once.
//
//===----------------------------------------------------------------------===//

#include "GraphExporter.h"

#include "mlir/IR/TypeUtilities.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_export;

namespace {
/// Builds the nodes of one `lmopt.linear`.
class LinearExporter {
public:
  LinearExporter(GraphExporter &ex, LinearOp op)
      : ex(ex), op(op), loc(op.getLoc()),
        base(getLocName(op.getLoc(), "linear")),
        f32(Float32Type::get(op.getContext())) {}

  LogicalResult run();

private:
  /// `name` (of element type `type`) as f32.
  std::string toF32(StringRef name, Type type) {
    if (type.isF32())
      return name.str();
    return ex.emit("Cast", {name.str()}, loc, [](onnx::NodeProto &node) {
      setIntAttr(node, "to", onnx::TensorProto::FLOAT);
    });
  }
  /// The weight as [K, N] and the type that describes it: a constant is
  /// transposed in its initializer, anything else by a Transpose node.
  FailureOr<std::pair<std::string, RankedTensorType>> weightKN();
  /// The float product input x W, in f32.
  FailureOr<std::string> floatProduct();
  /// The product with the input quantized at run time (int8 x int8 in
  /// MatMulInteger, then the scales), in f32.
  FailureOr<std::string> integerProduct();
  /// A FLOAT scalar initializer.
  std::string scalar(StringRef name, float value) {
    return ex.addFloat(base + "/" + name.str(), value);
  }

  GraphExporter &ex;
  LinearOp op;
  Location loc;
  std::string base;
  Type f32;
};
} // namespace

/// A 2-D `attr` transposed.
static DenseElementsAttr transpose2D(DenseElementsAttr attr) {
  ArrayRef<int64_t> shape = attr.getType().getShape();
  int64_t rows = shape[0], cols = shape[1];
  SmallVector<Attribute> values(attr.getValues<Attribute>());
  SmallVector<Attribute> transposed(values.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      transposed[c * rows + r] = values[r * cols + c];
  return DenseElementsAttr::get(
      RankedTensorType::get({cols, rows}, attr.getType().getElementType()),
      transposed);
}

/// `type` ([N, K]) as the type of its transpose: per-axis parameters move
/// to the other axis, block-wise ones are transposed with the blocks.
static RankedTensorType getTransposedType(RankedTensorType type) {
  SmallVector<int64_t, 2> shape = {type.getDimSize(1), type.getDimSize(0)};
  Type elementType = type.getElementType();
  if (auto perAxis =
          dyn_cast<quant::UniformQuantizedPerAxisType>(elementType)) {
    elementType = quant::UniformQuantizedPerAxisType::get(
        perAxis.getFlags(), perAxis.getStorageType(),
        perAxis.getExpressedType(), perAxis.getScales(),
        perAxis.getZeroPoints(), 1 - perAxis.getQuantizedDimension(),
        perAxis.getStorageTypeMin(), perAxis.getStorageTypeMax());
  } else if (auto blocked =
                 dyn_cast<quant::UniformQuantizedSubChannelType>(elementType)) {
    SmallVector<std::pair<int32_t, int64_t>> blocks;
    for (auto [dim, size] : blocked.getBlockSizeInfo())
      blocks.push_back({1 - dim, size});
    llvm::sort(blocks);
    SmallVector<int32_t> dims;
    SmallVector<int64_t> sizes;
    for (auto [dim, size] : blocks) {
      dims.push_back(dim);
      sizes.push_back(size);
    }
    elementType = quant::UniformQuantizedSubChannelType::get(
        blocked.getFlags(), blocked.getStorageType(),
        blocked.getExpressedType(), transpose2D(blocked.getScales()),
        transpose2D(blocked.getZeroPoints()), dims, sizes,
        blocked.getStorageTypeMin(), blocked.getStorageTypeMax());
  }
  return RankedTensorType::get(shape, elementType);
}

/// The constant behind a weight, seen through a storage cast, or null.
static ConstantOp getWeightConstant(Value weight) {
  if (auto cast = weight.getDefiningOp<quant::StorageCastOp>())
    weight = cast.getInput();
  return weight.getDefiningOp<ConstantOp>();
}

FailureOr<std::pair<std::string, RankedTensorType>> LinearExporter::weightKN() {
  Value weight = op.getWeight();
  auto type = cast<RankedTensorType>(weight.getType());
  if (!op.getTransposeWeight()) {
    FailureOr<std::string> name = ex.getName(weight);
    if (failed(name))
      return failure();
    return std::make_pair(*name, type);
  }
  ConstantOp constant = getWeightConstant(weight);
  Type elementType = type.getElementType();
  auto quantized = dyn_cast<quant::QuantizedType>(elementType);
  unsigned bits = quantized ? quantized.getStorageTypeIntegralWidth()
                            : elementType.getIntOrFloatBitWidth();
  RankedTensorType transposedType = getTransposedType(type);
  if (!constant) {
    FailureOr<std::string> name = ex.getName(weight);
    if (failed(name))
      return failure();
    std::string transposed =
        ex.emit("Transpose", {*name}, loc, [](onnx::NodeProto &node) {
          setIntsAttr(node, "perm", {1, 0});
        });
    return std::make_pair(transposed, transposedType);
  }
  // 4-bit values are transposed one per byte, then packed.
  FailureOr<DataType> code = getDataType(elementType, loc);
  FailureOr<std::string> bytes =
      getRawData(constant.getValue(), loc, /*pack4Bit=*/false);
  if (failed(code) || failed(bytes))
    return failure();
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  std::string transposed =
      transposeBytes(*bytes, rows, cols, bits < 8 ? 1 : bits / 8);
  if (bits == 4)
    transposed = packNibbles(transposed);
  std::string name = ex.addInitializer(getConstantName(constant) + "_t", *code,
                                       {cols, rows}, std::move(transposed));
  return std::make_pair(name, transposedType);
}

FailureOr<std::string> LinearExporter::floatProduct() {
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  auto weightType = cast<RankedTensorType>(op.getWeight().getType());
  FailureOr<std::string> input = ex.getName(op.getInput());
  if (failed(input))
    return failure();
  std::string x;
  if (isa<quant::QuantizedType>(inputType.getElementType())) {
    FailureOr<std::string> dequantized =
        emitDequantize(ex, *input, inputType, loc);
    if (failed(dequantized))
      return failure();
    x = *dequantized;
  } else {
    x = toF32(*input, inputType.getElementType());
  }
  if (op.getTransposeInput())
    x = ex.emit("Transpose", {x}, loc, [](onnx::NodeProto &node) {
      setIntsAttr(node, "perm", {1, 0});
    });

  std::string w;
  auto quantized = dyn_cast<quant::QuantizedType>(weightType.getElementType());
  if (quantized && isa<quant::UniformQuantizedSubChannelType>(quantized) &&
      op.getTransposeWeight() && !getWeightConstant(op.getWeight())) {
    // A computed 4-bit tensor is transposed after dequantization, in f32.
    FailureOr<std::string> stored = ex.getName(op.getWeight());
    if (failed(stored))
      return failure();
    FailureOr<std::string> dequantized =
        emitDequantize(ex, *stored, weightType, loc);
    if (failed(dequantized))
      return failure();
    w = ex.emit("Transpose",
                {toF32(*dequantized, quantized.getExpressedType())}, loc,
                [](onnx::NodeProto &node) {
                  setIntsAttr(node, "perm", {1, 0});
                });
  } else {
    FailureOr<std::pair<std::string, RankedTensorType>> kn = weightKN();
    if (failed(kn))
      return failure();
    w = kn->first;
    if (quantized) {
      FailureOr<std::string> dequantized =
          emitDequantize(ex, w, kn->second, loc);
      if (failed(dequantized))
        return failure();
      w = toF32(*dequantized, quantized.getExpressedType());
    } else {
      w = toF32(w, weightType.getElementType());
    }
  }
  return ex.emit("MatMul", {x, w}, loc);
}

FailureOr<std::string> LinearExporter::integerProduct() {
  auto weightType = cast<RankedTensorType>(op.getWeight().getType());
  if (!isa<quant::QuantizedType>(weightType.getElementType()))
    return op.emitError() << "cannot export a linear that quantizes its input "
                             "at run time with weight type "
                          << weightType << ": it needs an integer weight";
  FailureOr<std::pair<std::string, RankedTensorType>> kn = weightKN();
  if (failed(kn))
    return failure();
  // MatMulInteger takes one zero point per column of [K, N], or one in all.
  Type knElement = kn->second.getElementType();
  auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(knElement);
  if ((perAxis && perAxis.getQuantizedDimension() != 1) ||
      isa<quant::UniformQuantizedSubChannelType>(knElement))
    return op.emitError() << "cannot export weight type " << weightType
                          << " with MatMulInteger: it needs one scale per "
                             "output channel or one in all";
  FailureOr<QuantParams> weightParams = addQuantParams(
      ex, cast<quant::QuantizedType>(knElement), kn->second.getShape(), loc);
  FailureOr<std::string> x = ex.getName(op.getInput());
  if (failed(weightParams) || failed(x))
    return failure();
  auto toFloat = [&](StringRef name) {
    return ex.emit("Cast", {name.str()}, loc, [](onnx::NodeProto &node) {
      setIntAttr(node, "to", onnx::TensorProto::FLOAT);
    });
  };

  if (op.getInputQuantization() == InputQuantization::dynamic_per_tensor) {
    // onnxruntime's quantize_dynamic form.
    std::string xq = ex.freshName(base + "/x_quantized");
    std::string xScale = ex.freshName(base + "/x_scale");
    std::string xZeroPoint = ex.freshName(base + "/x_zero_point");
    ex.addNode("DynamicQuantizeLinear", {*x}, {xq, xScale, xZeroPoint}, loc);
    std::string product =
        ex.emit("MatMulInteger",
                {xq, kn->first, xZeroPoint, weightParams->zeroPoint}, loc);
    std::string scale = ex.emit("Mul", {xScale, weightParams->scale}, loc);
    return ex.emit("Mul", {toFloat(product), scale}, loc);
  }

  // dynamic_per_token: each row to i8 with scale max|row| / 127 (1 for a
  // row of zeros), round half to even, as docs/dialect.md states; the
  // division and rounding are the same f32 operations the reference does.
  int64_t rank = cast<RankedTensorType>(op.getInput().getType()).getRank();
  std::string rowMax =
      emitReduce(ex, "ReduceMax", ex.emit("Abs", {*x}, loc), {rank - 1},
                 /*keepdims=*/true, loc);
  std::string rowScale =
      ex.emit("Where",
              {ex.emit("Equal", {rowMax, scalar("zero", 0.0f)}, loc),
               scalar("one", 1.0f),
               ex.emit("Div", {rowMax, scalar("int8_max", 127.0f)}, loc)},
              loc);
  std::string rounded =
      ex.emit("Round", {ex.emit("Div", {*x, rowScale}, loc)}, loc);
  std::string clipped = ex.emit(
      "Clip",
      {rounded, scalar("int8_low", -127.0f), scalar("int8_high", 127.0f)}, loc);
  std::string xq = ex.emit("Cast", {clipped}, loc, [](onnx::NodeProto &node) {
    setIntAttr(node, "to", onnx::TensorProto::INT8);
  });
  std::string product = ex.emit(
      "MatMulInteger", {xq, kn->first, "", weightParams->zeroPoint}, loc);
  std::string rowScaled = ex.emit("Mul", {toFloat(product), rowScale}, loc);
  return ex.emit("Mul", {rowScaled, weightParams->scale}, loc);
}

LogicalResult LinearExporter::run() {
  FailureOr<std::string> product =
      op.getInputQuantization() == InputQuantization::none ? floatProduct()
                                                           : integerProduct();
  if (failed(product))
    return failure();
  std::string y = *product;
  auto addF32 = [&](Value operand) -> LogicalResult {
    FailureOr<std::string> name = ex.getName(operand);
    if (failed(name))
      return failure();
    y = ex.emit("Add", {y, toF32(*name, getElementTypeOrSelf(operand))}, loc);
    return success();
  };
  if (op.getBias() && failed(addF32(op.getBias())))
    return failure();
  switch (op.getActivation()) {
  case Activation::none:
    break;
  case Activation::relu:
    y = ex.emit("Relu", {y}, loc);
    break;
  case Activation::gelu:
  case Activation::gelu_tanh: {
    FailureOr<std::string> gelu =
        emitGelu(ex, y, f32, op.getActivation() == Activation::gelu_tanh, loc);
    if (failed(gelu))
      return failure();
    y = *gelu;
    break;
  }
  }
  if (op.getResidual() && failed(addF32(op.getResidual())))
    return failure();
  Type resultType = getElementTypeOrSelf(op.getOutput());
  if (!resultType.isF32()) {
    FailureOr<DataType> code = getDataType(resultType, loc);
    if (failed(code))
      return failure();
    y = ex.emit("Cast", {y}, loc,
                [&](onnx::NodeProto &node) { setIntAttr(node, "to", *code); });
  }
  ex.bindResult(op.getOutput(), y, loc);
  return success();
}

static LogicalResult exportLinear(GraphExporter &ex, Operation *op,
                                  const ExportEntry &) {
  return LinearExporter(ex, cast<LinearOp>(op)).run();
}

SmallVector<ExportEntry> mlir::lmopt::onnx_export::getLinearExporters() {
  return {{TypeID::get<LinearOp>(), "", exportLinear}};
}
