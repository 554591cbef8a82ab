//===- NormalizationOps.cpp - reductions, softmax and normalizations ------===//
//
// ReduceMean/Sum/Max/Min (with keepdims, empty axes reducing everything),
// Softmax and LogSoftmax over one axis, and the normalizations: layer norm
// over [axis, rank), skip layer norm over the last dim, RMS norm. Statistics
// are computed in double.
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
enum class ReduceKind { Mean, Sum, Max, Min };
} // namespace

static EvalResult evaluateReduce(Operation *op, const Tensor &input,
                                 ArrayRef<int64_t> axes, bool keepdims,
                                 ReduceKind kind) {
  int64_t rank = input.getRank();
  SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(op, axis, rank);
    if (failed(normalized))
      return failure();
    reduced[*normalized] = true;
  }
  SmallVector<int64_t> keptShape, shape;
  for (int64_t d = 0; d < rank; ++d) {
    keptShape.push_back(reduced[d] ? 1 : input.getShape()[d]);
    if (!reduced[d] || keepdims)
      shape.push_back(keptShape.back());
  }
  int64_t outCount = getNumElements(keptShape);
  if (input.getNumElements() == 0 &&
      (kind == ReduceKind::Max || kind == ReduceKind::Min) && outCount > 0)
    return op->emitError() << "cannot take the max or min of no elements";
  SmallVector<int64_t> keptStrides = getStrides(keptShape);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      keptStrides[d] = 0;
  double initial =
      kind == ReduceKind::Max   ? -std::numeric_limits<double>::infinity()
      : kind == ReduceKind::Min ? std::numeric_limits<double>::infinity()
                                : 0.0;
  std::vector<double> floatAcc(outCount, initial);
  std::vector<int64_t> intAcc(outCount, 0);
  std::vector<bool> seen(outCount, false);
  int64_t n = 0;
  forEachIndex(input.getShape(), [&](ArrayRef<int64_t> index) {
    int64_t out = linearize(index, keptStrides);
    int64_t at = n++;
    if (input.isFloat()) {
      double x = input.getDouble(at);
      double &acc = floatAcc[out];
      if (kind == ReduceKind::Max)
        acc = std::isnan(x) || std::isnan(acc) ? NAN : std::max(acc, x);
      else if (kind == ReduceKind::Min)
        acc = std::isnan(x) || std::isnan(acc) ? NAN : std::min(acc, x);
      else
        acc += x;
      return;
    }
    int64_t x = input.getInt(at);
    int64_t &acc = intAcc[out];
    if (kind == ReduceKind::Max)
      acc = seen[out] ? std::max(acc, x) : x;
    else if (kind == ReduceKind::Min)
      acc = seen[out] ? std::min(acc, x) : x;
    else
      acc += x;
    seen[out] = true;
  });
  int64_t count = outCount == 0 ? 0 : input.getNumElements() / outCount;
  Tensor result(getResultElementType(op), shape);
  for (int64_t i = 0; i < outCount; ++i) {
    if (result.isFloat()) {
      double value = floatAcc[i];
      if (kind == ReduceKind::Mean)
        value /= static_cast<double>(count);
      result.setDouble(i, value);
      continue;
    }
    int64_t value = intAcc[i];
    if (kind == ReduceKind::Mean)
      value = count == 0 ? 0 : value / count;
    result.setInt(i, value);
  }
  return single(std::move(result));
}

template <typename OpTy>
static void addReduce(EvaluatorTable &table, ReduceKind kind) {
  table.add<OpTy>([kind](OpTy op, ArrayRef<Tensor> operands) {
    return evaluateReduce(op, operands[0], op.getAxes(), op.getKeepdims(),
                          kind);
  });
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

static EvalResult evaluateSoftmax(Operation *op, const Tensor &input,
                                  int64_t axisAttr, bool logarithm) {
  FailureOr<int64_t> axis = normalizeAxis(op, axisAttr, input.getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> shape = input.getShape();
  int64_t outer = getNumElements(shape.take_front(*axis));
  int64_t dim = shape[*axis];
  int64_t inner = getNumElements(shape.drop_front(*axis + 1));
  Tensor result = input;
  std::vector<double> &values = result.getFloats();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      auto at = [&](int64_t i) { return (o * dim + i) * inner + k; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < dim; ++i)
        max = std::max(max, values[at(i)]);
      double sum = 0.0;
      for (int64_t i = 0; i < dim; ++i)
        sum += std::exp(values[at(i)] - max);
      for (int64_t i = 0; i < dim; ++i) {
        double shifted = values[at(i)] - max;
        values[at(i)] =
            logarithm ? shifted - std::log(sum) : std::exp(shifted) / sum;
      }
    }
  }
  return single(std::move(result));
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

/// Layer norm (or RMS norm) of `input` over dims [axis, rank) into `output`.
static LogicalResult normalize(Operation *op, const Tensor &input,
                               int64_t axisAttr, double epsilon,
                               const Tensor &scale, const Tensor *bias,
                               bool rms, Tensor &output) {
  FailureOr<int64_t> axis = normalizeAxis(op, axisAttr, input.getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> normalizedShape = input.getShape().drop_front(*axis);
  FailureOr<Tensor> gamma = broadcastTo(op, scale, normalizedShape, "scale");
  if (failed(gamma))
    return failure();
  FailureOr<Tensor> beta = Tensor();
  if (bias) {
    beta = broadcastTo(op, *bias, normalizedShape, "bias");
    if (failed(beta))
      return failure();
  }
  int64_t size = getNumElements(normalizedShape);
  int64_t rows = size == 0 ? 0 : input.getNumElements() / size;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = r * size;
    double mean = 0.0;
    if (!rms) {
      for (int64_t i = 0; i < size; ++i)
        mean += input.getDouble(base + i);
      mean /= static_cast<double>(size);
    }
    double variance = 0.0;
    for (int64_t i = 0; i < size; ++i) {
      double centered = input.getDouble(base + i) - mean;
      variance += centered * centered;
    }
    variance /= static_cast<double>(size);
    double inverse = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t i = 0; i < size; ++i) {
      double value =
          (input.getDouble(base + i) - mean) * inverse * gamma->getDouble(i);
      if (bias)
        value += beta->getDouble(i);
      output.setDouble(base + i, value);
    }
  }
  return success();
}

static EvalResult evaluateLayerNorm(LayerNormOp op, ArrayRef<Tensor> operands) {
  Tensor output(getResultElementType(op), operands[0].getShape());
  const Tensor *bias = op.getBias() ? &operands[2] : nullptr;
  if (failed(normalize(op, operands[0], op.getAxis(),
                       op.getEpsilon().convertToFloat(), operands[1], bias,
                       /*rms=*/false, output)))
    return failure();
  return single(std::move(output));
}

static EvalResult evaluateRmsNorm(RmsNormOp op, ArrayRef<Tensor> operands) {
  Tensor output(getResultElementType(op), operands[0].getShape());
  if (failed(normalize(op, operands[0], op.getAxis(),
                       op.getEpsilon().convertToFloat(), operands[1],
                       /*bias=*/nullptr, /*rms=*/true, output)))
    return failure();
  return single(std::move(output));
}

static EvalResult evaluateSkipLayerNorm(SkipLayerNormOp op,
                                        ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0], &skip = operands[1];
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOrError(op, input.getShape(), skip.getShape());
  if (failed(shape))
    return failure();
  std::vector<int64_t> inputIndex = broadcastIndices(input.getShape(), *shape);
  std::vector<int64_t> skipIndex = broadcastIndices(skip.getShape(), *shape);
  // The sum is a result of its own, so it is rounded before it is normalized,
  // as the unfused add would be.
  Tensor sum(getResultElementType(op, 1), *shape);
  for (int64_t i = 0, e = sum.getNumElements(); i < e; ++i)
    sum.setDouble(i, input.getDouble(inputIndex[i]) +
                         skip.getDouble(skipIndex[i]));
  sum.roundToElementType();
  Tensor output(getResultElementType(op, 0), *shape);
  const Tensor *bias = op.getBias() ? &operands[3] : nullptr;
  if (failed(normalize(op, sum, /*axis=*/-1, op.getEpsilon().convertToFloat(),
                       operands[2], bias, /*rms=*/false, output)))
    return failure();
  SmallVector<Tensor> results;
  results.push_back(std::move(output));
  results.push_back(std::move(sum));
  return results;
}

void mlir::lmopt::reference::registerNormalizationEvaluators(
    EvaluatorTable &table) {
  addReduce<ReduceMeanOp>(table, ReduceKind::Mean);
  addReduce<ReduceSumOp>(table, ReduceKind::Sum);
  addReduce<ReduceMaxOp>(table, ReduceKind::Max);
  addReduce<ReduceMinOp>(table, ReduceKind::Min);
  table.add<SoftmaxOp>([](SoftmaxOp op, ArrayRef<Tensor> operands) {
    return evaluateSoftmax(op, operands[0], op.getAxis(), false);
  });
  table.add<LogSoftmaxOp>([](LogSoftmaxOp op, ArrayRef<Tensor> operands) {
    return evaluateSoftmax(op, operands[0], op.getAxis(), true);
  });
  table.add<LayerNormOp>(evaluateLayerNorm);
  table.add<RmsNormOp>(evaluateRmsNorm);
  table.add<SkipLayerNormOp>(evaluateSkipLayerNorm);
}
