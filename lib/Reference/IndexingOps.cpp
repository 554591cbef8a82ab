//===- IndexingOps.cpp - gathers and scans --------------------------------===//
//
// Gather, GatherElements, GatherND, ScatterND and CumSum. Negative indices
// count from the end of their axis; indices out of range are reported, never
// read. A gather from a row-quantized table dequantizes the rows it takes.
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Format/Philox.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

/// Maps an index into an axis of size `dim` to [0, dim), or reports it.
static FailureOr<int64_t> resolveIndex(Operation *op, int64_t index,
                                       int64_t dim, int64_t axis) {
  if (index < -dim || index >= dim)
    return op->emitError() << "index " << index << " is out of range for dim "
                           << axis << " of size " << dim;
  return index < 0 ? index + dim : index;
}

static EvalResult evaluateGather(GatherOp op, ArrayRef<Tensor> operands) {
  const Tensor &data = operands[0], &indices = operands[1];
  FailureOr<int64_t> axis = normalizeAxis(op, op.getAxis(), data.getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> dataShape = data.getShape();
  SmallVector<int64_t> shape(dataShape.take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, dataShape.drop_front(*axis + 1));
  SmallVector<int64_t> dataStrides = getStrides(dataShape);
  SmallVector<int64_t> indexStrides = getStrides(indices.getShape());
  int64_t q = indices.getRank();
  std::vector<int64_t> positions;
  LogicalResult status = success();
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    if (failed(status))
      return;
    int64_t at = indices.getInt(linearize(index.slice(*axis, q), indexStrides));
    FailureOr<int64_t> resolved = resolveIndex(op, at, dataShape[*axis], *axis);
    if (failed(resolved)) {
      status = failure();
      return;
    }
    int64_t linear = linearize(index.take_front(*axis), dataStrides) +
                     *resolved * dataStrides[*axis];
    for (int64_t d = *axis + 1; d < data.getRank(); ++d)
      linear += index[d - 1 + q] * dataStrides[d];
    positions.push_back(linear);
  });
  if (failed(status))
    return failure();
  // A row-quantized table with a float result dequantizes what it takes.
  auto rowQuantized =
      llvm::dyn_cast<quant::UniformQuantizedPerAxisType>(data.getElementType());
  if (!rowQuantized || getResultElementType(op) == data.getElementType())
    return single(data.take(positions, shape));
  // The verifier allows per-axis-0 types only: the scale of a row is that of
  // its index along axis 0.
  ArrayRef<double> scales = rowQuantized.getScales();
  ArrayRef<int64_t> zeroPoints = rowQuantized.getZeroPoints();
  if (static_cast<int64_t>(scales.size()) != dataShape[0])
    return op->emitError() << "quantized table has " << scales.size()
                           << " row scales for " << dataShape[0] << " rows";
  // The scale is taken as the f32 it expresses (as the bundle and the ONNX
  // export store it), so that every backend computes the same products.
  Tensor result(getResultElementType(op), shape);
  for (auto [i, at] : llvm::enumerate(positions)) {
    int64_t row = at / dataStrides[0];
    double scale = static_cast<float>(scales[row]);
    result.setDouble(
        i, static_cast<double>(data.getInt(at) - zeroPoints[row]) * scale);
  }
  return single(std::move(result));
}

static EvalResult evaluateGatherElements(GatherElementsOp op,
                                         ArrayRef<Tensor> operands) {
  const Tensor &data = operands[0], &indices = operands[1];
  if (data.getRank() != indices.getRank())
    return op.emitError() << "indices of rank " << indices.getRank()
                          << " for data of rank " << data.getRank();
  FailureOr<int64_t> axis = normalizeAxis(op, op.getAxis(), data.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> dataStrides = getStrides(data.getShape());
  std::vector<int64_t> positions;
  LogicalResult status = success();
  int64_t n = 0;
  forEachIndex(indices.getShape(), [&](ArrayRef<int64_t> index) {
    if (failed(status))
      return;
    FailureOr<int64_t> resolved =
        resolveIndex(op, indices.getInt(n++), data.getShape()[*axis], *axis);
    if (failed(resolved)) {
      status = failure();
      return;
    }
    int64_t linear = 0;
    for (int64_t d = 0; d < data.getRank(); ++d) {
      int64_t i = d == *axis ? *resolved : index[d];
      if (i >= data.getShape()[d]) {
        status = op.emitError()
                 << "indices dim " << d << " of size " << indices.getShape()[d]
                 << " exceeds data dim of size " << data.getShape()[d];
        return;
      }
      linear += i * dataStrides[d];
    }
    positions.push_back(linear);
  });
  if (failed(status))
    return failure();
  return single(data.take(positions, indices.getShape()));
}

static EvalResult evaluateGatherND(GatherNDOp op, ArrayRef<Tensor> operands) {
  const Tensor &data = operands[0], &indices = operands[1];
  int64_t batchDims = op.getBatchDims();
  int64_t q = indices.getRank();
  if (q < 1 || batchDims < 0 || batchDims >= q || batchDims > data.getRank())
    return op.emitError() << "batch_dims " << batchDims
                          << " is invalid for indices of rank " << q;
  int64_t tuple = indices.getShape().back();
  if (batchDims + tuple > data.getRank())
    return op.emitError() << "index tuples of length " << tuple
                          << " exceed data of rank " << data.getRank();
  for (int64_t d = 0; d < batchDims; ++d)
    if (indices.getShape()[d] != data.getShape()[d])
      return op.emitError()
             << "batch dim " << d << " differs: " << indices.getShape()[d]
             << " in indices, " << data.getShape()[d] << " in data";
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(batchDims + tuple));
  SmallVector<int64_t> dataStrides = getStrides(data.getShape());
  SmallVector<int64_t> indexStrides = getStrides(indices.getShape());
  std::vector<int64_t> positions;
  LogicalResult status = success();
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    if (failed(status))
      return;
    int64_t linear = 0;
    for (int64_t d = 0; d < batchDims; ++d)
      linear += index[d] * dataStrides[d];
    int64_t tupleStart =
        linearize(index.take_front(q - 1), ArrayRef(indexStrides).drop_back());
    for (int64_t k = 0; k < tuple; ++k) {
      int64_t d = batchDims + k;
      FailureOr<int64_t> resolved = resolveIndex(
          op, indices.getInt(tupleStart + k), data.getShape()[d], d);
      if (failed(resolved)) {
        status = failure();
        return;
      }
      linear += *resolved * dataStrides[d];
    }
    for (int64_t d = batchDims + tuple; d < data.getRank(); ++d)
      linear += index[q - 1 + d - batchDims - tuple] * dataStrides[d];
    positions.push_back(linear);
  });
  if (failed(status))
    return failure();
  return single(data.take(positions, shape));
}

/// data with each slice of updates combined into the slice its index tuple
/// names, in the order of the tuples.
static EvalResult evaluateScatterND(ScatterNDOp op, ArrayRef<Tensor> operands) {
  const Tensor &data = operands[0], &indices = operands[1],
               &updates = operands[2];
  if (indices.getRank() < 1)
    return op.emitError() << "indices must have rank at least 1";
  int64_t tuple = indices.getShape().back();
  if (tuple < 1 || tuple > data.getRank())
    return op.emitError() << "index tuples of length " << tuple
                          << " do not fit data of rank " << data.getRank();
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(tuple));
  if (ArrayRef<int64_t>(expected) != updates.getShape())
    return op.emitError() << "updates of shape "
                          << formatShape(updates.getShape())
                          << " for indices.shape[:-1] + data.shape[" << tuple
                          << ":] = " << formatShape(expected);
  Tensor result = data;
  int64_t sliceSize = getNumElements(data.getShape().drop_front(tuple));
  SmallVector<int64_t> strides = getStrides(data.getShape());
  int64_t count = getNumElements(indices.getShape().drop_back());
  ScatterReduction reduction = op.getReduction();
  for (int64_t t = 0; t < count; ++t) {
    int64_t base = 0;
    for (int64_t k = 0; k < tuple; ++k) {
      FailureOr<int64_t> resolved = resolveIndex(
          op, indices.getInt(t * tuple + k), data.getShape()[k], k);
      if (failed(resolved))
        return failure();
      base += *resolved * strides[k];
    }
    for (int64_t e = 0; e < sliceSize; ++e) {
      int64_t at = base + e, from = t * sliceSize + e;
      if (reduction == ScatterReduction::none) {
        result.copyElement(at, updates, from);
        continue;
      }
      auto combine = [&](auto lhs, auto rhs) -> decltype(lhs) {
        switch (reduction) {
        case ScatterReduction::add:
          return lhs + rhs;
        case ScatterReduction::mul:
          return lhs * rhs;
        case ScatterReduction::max:
          return std::max(lhs, rhs);
        case ScatterReduction::min:
          return std::min(lhs, rhs);
        case ScatterReduction::none:
          break;
        }
        return rhs;
      };
      if (result.isFloat())
        result.setDouble(
            at, combine(result.getDouble(at), updates.getDouble(from)));
      else
        result.setInt(at, combine(result.getInt(at), updates.getInt(from)));
    }
  }
  result.roundToElementType();
  return single(std::move(result));
}

static EvalResult evaluateCumSum(CumSumOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  FailureOr<int64_t> axis = normalizeAxis(op, op.getAxis(), input.getRank());
  if (failed(axis))
    return failure();
  Tensor result(input.getElementType(), input.getShape());
  ArrayRef<int64_t> shape = input.getShape();
  int64_t outer = getNumElements(shape.take_front(*axis));
  int64_t dim = shape[*axis];
  int64_t inner = getNumElements(shape.drop_front(*axis + 1));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      double floatSum = 0.0;
      int64_t intSum = 0;
      for (int64_t step = 0; step < dim; ++step) {
        int64_t i = op.getReverse() ? dim - 1 - step : step;
        int64_t at = (o * dim + i) * inner + k;
        if (op.getExclusive()) {
          result.isFloat() ? result.setDouble(at, floatSum)
                           : result.setInt(at, intSum);
        }
        floatSum += input.isFloat() ? input.getDouble(at) : 0.0;
        intSum += input.isFloat() ? 0 : input.getInt(at);
        if (!op.getExclusive()) {
          result.isFloat() ? result.setDouble(at, floatSum)
                           : result.setInt(at, intSum);
        }
      }
    }
  }
  return single(std::move(result));
}


/// The keep-mask of a training-mode dropout (Philox.h).
static EvalResult evaluateDropoutMask(DropoutMaskOp op,
                                      ArrayRef<Tensor> operands) {
  const Tensor &like = operands[0], &seed = operands[1];
  Tensor mask(IntegerType::get(op.getContext(), 1), like.getShape());
  float ratio = op.getRatio().convertToFloat();
  auto stream = uint32_t(op.getStream());
  auto key = uint64_t(seed.getInt(0));
  for (int64_t i = 0; i < mask.getNumElements(); ++i)
    mask.setInt(i, ::lmopt::philox::uniform(key, stream, uint64_t(i)) >= ratio);
  return single(std::move(mask));
}

/// The rows of `grad` added into zeros at their indices' rows.
static EvalResult evaluateGatherGrad(GatherGradOp op,
                                     ArrayRef<Tensor> operands) {
  const Tensor &grad = operands[0], &indices = operands[1];
  auto type = llvm::cast<RankedTensorType>(op.getOutput().getType());
  Tensor result(type.getElementType(), type.getShape());
  int64_t rowSize = result.getNumElements() / type.getShape()[0];
  if (grad.getNumElements() != indices.getNumElements() * rowSize)
    return op.emitError("gradient of ")
           << grad.getNumElements() << " elements does not hold "
           << indices.getNumElements() << " rows of " << rowSize;
  for (int64_t p = 0; p < indices.getNumElements(); ++p) {
    FailureOr<int64_t> row =
        resolveIndex(op, indices.getInt(p), type.getShape()[0], 0);
    if (failed(row))
      return failure();
    for (int64_t e = 0; e < rowSize; ++e)
      result.setDouble(*row * rowSize + e,
                       result.getDouble(*row * rowSize + e) +
                           grad.getDouble(p * rowSize + e));
  }
  result.roundToElementType();
  return single(std::move(result));
}

void mlir::lmopt::reference::registerIndexingEvaluators(EvaluatorTable &table) {
  table.add<GatherOp>(evaluateGather);
  table.add<GatherGradOp>(evaluateGatherGrad);
  table.add<DropoutMaskOp>(evaluateDropoutMask);
  table.add<GatherElementsOp>(evaluateGatherElements);
  table.add<GatherNDOp>(evaluateGatherND);
  table.add<ScatterNDOp>(evaluateScatterND);
  table.add<CumSumOp>(evaluateCumSum);
}
