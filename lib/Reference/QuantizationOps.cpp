//===- QuantizationOps.cpp - quantize and dequantize ----------------------===//
//
// `lmopt.quantize` and `lmopt.dequantize` with the scale and zero point of
// the `!quant.uniform` element type, per tensor or per axis, as ONNX
// QuantizeLinear/DequantizeLinear: round half to even, then saturate to the
// storage range.
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

/// For every element of `shape`, the scale and zero point that apply to it.
static FailureOr<std::pair<std::vector<double>, std::vector<int64_t>>>
getQuantParams(Operation *op, Type type, ArrayRef<int64_t> shape) {
  int64_t count = getNumElements(shape);
  if (auto uniform = llvm::dyn_cast<quant::UniformQuantizedType>(type))
    return std::make_pair(std::vector<double>(count, uniform.getScale()),
                          std::vector<int64_t>(count, uniform.getZeroPoint()));
  auto perAxis = llvm::dyn_cast<quant::UniformQuantizedPerAxisType>(type);
  if (!perAxis)
    return op->emitError() << "unsupported quantized type " << type;
  int64_t axis = perAxis.getQuantizedDimension();
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
      static_cast<int64_t>(perAxis.getScales().size()) != shape[axis])
    return op->emitError() << "per-axis type " << type << " does not fit shape "
                           << formatShape(shape);
  std::vector<double> scales;
  std::vector<int64_t> zeroPoints;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    scales.push_back(perAxis.getScales()[index[axis]]);
    zeroPoints.push_back(perAxis.getZeroPoints()[index[axis]]);
  });
  return std::make_pair(std::move(scales), std::move(zeroPoints));
}

static EvalResult evaluateQuantize(QuantizeOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  Type type = getResultElementType(op);
  auto params = getQuantParams(op, type, input.getShape());
  if (failed(params))
    return failure();
  Tensor result(type, input.getShape());
  for (int64_t i = 0, e = input.getNumElements(); i < e; ++i) {
    double scaled = input.getDouble(i) / params->first[i];
    result.setInt(i, static_cast<int64_t>(std::nearbyint(scaled)) +
                         params->second[i]);
  }
  return single(std::move(result));
}

static EvalResult evaluateDequantize(DequantizeOp op,
                                     ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  auto params = getQuantParams(op, input.getElementType(), input.getShape());
  if (failed(params))
    return failure();
  Tensor result(getResultElementType(op), input.getShape());
  for (int64_t i = 0, e = input.getNumElements(); i < e; ++i)
    result.setDouble(i,
                     static_cast<double>(input.getInt(i) - params->second[i]) *
                         params->first[i]);
  return single(std::move(result));
}

void mlir::lmopt::reference::registerQuantizationEvaluators(
    EvaluatorTable &table) {
  table.add<QuantizeOp>(evaluateQuantize);
  table.add<DequantizeOp>(evaluateDequantize);
}
