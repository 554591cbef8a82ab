//===- MatMulOps.cpp - matrix products ------------------------------------===//
//
// MatMul with numpy semantics (rank-1 promotion, batch broadcast), Gemm, and
// the fused linear with its bias, activation and residual epilogue. Sums
// accumulate in double.
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

double mlir::lmopt::reference::applyActivation(Activation activation,
                                               double x) {
  switch (activation) {
  case Activation::none:
    return x;
  case Activation::relu:
    return x > 0.0 ? x : 0.0;
  case Activation::gelu:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case Activation::gelu_tanh:
    return 0.5 * x *
           (1.0 +
            std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  llvm_unreachable("unknown activation");
}

/// Batched product of `lhs` [..., M, K] and `rhs` [..., K, N] (both of rank
/// at least 2) with numpy broadcasting of the batch dims.
static FailureOr<Tensor> batchedProduct(Operation *op, const Tensor &lhs,
                                        const Tensor &rhs, Type resultType) {
  ArrayRef<int64_t> lhsShape = lhs.getShape(), rhsShape = rhs.getShape();
  int64_t m = lhsShape[lhsShape.size() - 2], k = lhsShape.back();
  int64_t rhsK = rhsShape[rhsShape.size() - 2], n = rhsShape.back();
  if (k != rhsK)
    return op->emitError() << "contraction dims differ: "
                           << formatShape(lhsShape) << " by "
                           << formatShape(rhsShape);
  FailureOr<SmallVector<int64_t>> batch =
      broadcastOrError(op, lhsShape.drop_back(2), rhsShape.drop_back(2));
  if (failed(batch))
    return failure();
  std::vector<int64_t> lhsBatch =
      broadcastIndices(lhsShape.drop_back(2), *batch);
  std::vector<int64_t> rhsBatch =
      broadcastIndices(rhsShape.drop_back(2), *batch);
  SmallVector<int64_t> shape(*batch);
  shape.append({m, n});
  Tensor result(resultType, shape);
  bool isFloat = lhs.isFloat();
  for (size_t b = 0; b < lhsBatch.size(); ++b) {
    int64_t lhsBase = lhsBatch[b] * m * k, rhsBase = rhsBatch[b] * k * n;
    int64_t outBase = static_cast<int64_t>(b) * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double floatSum = 0.0;
        int64_t intSum = 0;
        for (int64_t p = 0; p < k; ++p) {
          int64_t l = lhsBase + i * k + p, r = rhsBase + p * n + j;
          if (isFloat)
            floatSum += lhs.getDouble(l) * rhs.getDouble(r);
          else
            intSum += lhs.getInt(l) * rhs.getInt(r);
        }
        if (result.isFloat())
          result.setDouble(outBase + i * n + j,
                           isFloat ? floatSum : static_cast<double>(intSum));
        else
          result.setInt(outBase + i * n + j, intSum);
      }
    }
  }
  return result;
}

FailureOr<Tensor> mlir::lmopt::reference::numpyMatMul(Operation *op, Tensor lhs,
                                                      Tensor rhs,
                                                      Type resultType) {
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return op->emitError() << "matmul operands must have rank 1 or more";
  if (lhs.isFloat() != rhs.isFloat())
    return op->emitError() << "operand element types differ";
  bool promoteLhs = lhs.getRank() == 1, promoteRhs = rhs.getRank() == 1;
  if (promoteLhs)
    lhs = lhs.reshaped({1, lhs.getShape()[0]});
  if (promoteRhs)
    rhs = rhs.reshaped({rhs.getShape()[0], 1});
  FailureOr<Tensor> product = batchedProduct(op, lhs, rhs, resultType);
  if (failed(product))
    return failure();
  SmallVector<int64_t> shape(product->getShape());
  if (promoteRhs)
    shape.pop_back();
  if (promoteLhs)
    shape.erase(shape.end() - (promoteRhs ? 1 : 2));
  return product->reshaped(shape);
}

static EvalResult evaluateMatMul(MatMulOp op, ArrayRef<Tensor> operands) {
  FailureOr<Tensor> product =
      numpyMatMul(op, operands[0], operands[1], getResultElementType(op));
  if (failed(product))
    return failure();
  return single(std::move(*product));
}

/// `matrix` transposed as a 2-D tensor.
static Tensor transpose2D(const Tensor &matrix) {
  int64_t rows = matrix.getShape()[0], cols = matrix.getShape()[1];
  std::vector<int64_t> indices;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i)
      indices.push_back(i * cols + j);
  return matrix.take(indices, {cols, rows});
}

static EvalResult evaluateGemm(GemmOp op, ArrayRef<Tensor> operands) {
  if (operands[0].getRank() != 2 || operands[1].getRank() != 2)
    return op.emitError() << "gemm operands must have rank 2, got "
                          << formatShape(operands[0].getShape()) << " and "
                          << formatShape(operands[1].getShape());
  Tensor a = op.getTransA() ? transpose2D(operands[0]) : operands[0];
  Tensor b = op.getTransB() ? transpose2D(operands[1]) : operands[1];
  FailureOr<Tensor> product =
      batchedProduct(op, a, b, getResultElementType(op));
  if (failed(product))
    return failure();
  double alpha = op.getAlpha().convertToFloat();
  double beta = op.getBeta().convertToFloat();
  std::vector<double> &values = product->getFloats();
  for (double &value : values)
    value *= alpha;
  if (op.getC()) {
    FailureOr<Tensor> c =
        broadcastTo(op, operands[2], product->getShape(), "gemm operand 'c'");
    if (failed(c))
      return failure();
    for (size_t i = 0; i < values.size(); ++i)
      values[i] += beta * c->getDouble(i);
  }
  return single(std::move(*product));
}

/// Each row (all dims but the last) quantized to i8 with scale
/// `max|row| / 127` (1 for a row of zeros), zero point 0, round half to
/// even, and dequantized again; scale and quotient in f32 as kernels compute
/// them.
static Tensor quantizePerToken(const Tensor &input, Type f32) {
  Tensor result(f32, input.getShape());
  int64_t k = input.getShape().back();
  const std::vector<double> &values = input.getFloats();
  for (size_t row = 0; k > 0 && row < values.size(); row += k) {
    float max = 0.0f;
    for (int64_t i = 0; i < k; ++i)
      max = std::max(max, std::fabs(static_cast<float>(values[row + i])));
    float scale = max == 0.0f ? 1.0f : max / 127.0f;
    for (int64_t i = 0; i < k; ++i) {
      float q = std::nearbyint(static_cast<float>(values[row + i]) / scale);
      result.setDouble(row + i, std::clamp(q, -127.0f, 127.0f) *
                                    static_cast<double>(scale));
    }
  }
  return result;
}

/// The whole input quantized to u8 as ONNX DynamicQuantizeLinear does, and
/// dequantized again.
static Tensor quantizePerTensor(const Tensor &input, Type f32) {
  Tensor result(f32, input.getShape());
  DynamicQuantization quantized = dynamicQuantizeLinear(input.getFloats());
  for (auto [i, value] : llvm::enumerate(quantized.values))
    result.setDouble(i, static_cast<double>(value - quantized.zeroPoint) *
                            static_cast<double>(quantized.scale));
  return result;
}

/// The input as the linear multiplies it: dequantized when its type is
/// quantized (static int8), quantized and dequantized again as
/// `input_quantization` says, else as is.
static FailureOr<Tensor> getLinearInput(LinearOp op, const Tensor &input) {
  if (!input.isFloat())
    return dequantizeToF32(op, input);
  Type f32 = Float32Type::get(op.getContext());
  switch (op.getInputQuantization()) {
  case InputQuantization::none:
    return input;
  case InputQuantization::dynamic_per_token:
    return quantizePerToken(input, f32);
  case InputQuantization::dynamic_per_tensor:
    return quantizePerTensor(input, f32);
  }
  llvm_unreachable("unknown input quantization");
}

static EvalResult evaluateLinear(LinearOp op, ArrayRef<Tensor> operands) {
  if (operands[0].getRank() < 1 || operands[1].getRank() != 2)
    return op.emitError() << "linear needs an input of rank 1 or more and a "
                             "weight of rank 2, got "
                          << formatShape(operands[0].getShape()) << " and "
                          << formatShape(operands[1].getShape());
  FailureOr<Tensor> linearInput = getLinearInput(op, operands[0]);
  FailureOr<Tensor> floatWeight = operands[1].isFloat()
                                      ? FailureOr<Tensor>(operands[1])
                                      : dequantizeToF32(op, operands[1]);
  if (failed(linearInput) || failed(floatWeight))
    return failure();
  if (op.getTransposeInput() && linearInput->getRank() != 2)
    return op.emitError() << "linear with transpose_input needs a rank-2 "
                             "input, got "
                          << formatShape(linearInput->getShape());
  const Tensor &input =
      op.getTransposeInput() ? transpose2D(*linearInput) : *linearInput;
  Tensor weight =
      op.getTransposeWeight() ? transpose2D(*floatWeight) : *floatWeight;
  int64_t k = input.getShape().back();
  Tensor rows =
      input.reshaped({getNumElements(input.getShape().drop_back()), k});
  FailureOr<Tensor> product =
      batchedProduct(op, rows, weight, getResultElementType(op));
  if (failed(product))
    return failure();
  SmallVector<int64_t> shape(input.getShape().drop_back());
  shape.push_back(weight.getShape()[1]);
  Tensor result = product->reshaped(shape);
  std::vector<double> &values = result.getFloats();
  size_t next = 2;
  if (op.getBias()) {
    FailureOr<Tensor> bias =
        broadcastTo(op, operands[next++], shape, "linear bias");
    if (failed(bias))
      return failure();
    for (size_t i = 0; i < values.size(); ++i)
      values[i] += bias->getDouble(i);
  }
  for (double &value : values)
    value = applyActivation(op.getActivation(), value);
  if (op.getResidual()) {
    FailureOr<Tensor> residual =
        broadcastTo(op, operands[next++], shape, "linear residual");
    if (failed(residual))
      return failure();
    for (size_t i = 0; i < values.size(); ++i)
      values[i] += residual->getDouble(i);
  }
  return single(std::move(result));
}

void mlir::lmopt::reference::registerMatMulEvaluators(EvaluatorTable &table) {
  table.add<MatMulOp>(evaluateMatMul);
  table.add<GemmOp>(evaluateGemm);
  table.add<LinearOp>(evaluateLinear);
}
