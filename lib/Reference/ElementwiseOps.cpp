//===- ElementwiseOps.cpp - elementwise ops of the reference evaluator ----===//
//
// Unary math, broadcasting binary arithmetic, comparisons and logic, Where,
// Cast, Mod, GELU and dropout. Values are computed in double (or int64) and
// rounded to the result's element type by the evaluator.
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Format/AdamW.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

using UnaryFloatFn = double (*)(double);
using UnaryIntFn = int64_t (*)(int64_t);

static EvalResult evaluateUnary(Operation *op, const Tensor &input,
                                UnaryFloatFn onFloat, UnaryIntFn onInt) {
  Tensor result(getResultElementType(op), input.getShape());
  if (input.isFloat() != result.isFloat())
    return op->emitError() << "operand and result element types differ";
  if (!input.isFloat() && !onInt)
    return op->emitError() << "integer operands are not supported";
  if (input.isFloat() && !onFloat)
    return op->emitError() << "float operands are not supported";
  for (int64_t i = 0, e = input.getNumElements(); i < e; ++i) {
    if (input.isFloat())
      result.setDouble(i, onFloat(input.getDouble(i)));
    else
      result.setInt(i, onInt(input.getInt(i)));
  }
  return single(std::move(result));
}

template <typename OpTy>
static void addUnary(EvaluatorTable &table, UnaryFloatFn onFloat,
                     UnaryIntFn onInt = nullptr) {
  table.add<OpTy>([onFloat, onInt](OpTy op, ArrayRef<Tensor> operands) {
    return evaluateUnary(op, operands[0], onFloat, onInt);
  });
}

//===----------------------------------------------------------------------===//
// Binary, with numpy broadcasting
//===----------------------------------------------------------------------===//

/// A binary function on doubles (float operands) and on int64 (integer and
/// boolean operands); the integer one returns nullopt where it is undefined
/// (division by zero).
struct BinaryFns {
  double (*onFloat)(double, double);
  std::optional<int64_t> (*onInt)(int64_t, int64_t);
};

static EvalResult evaluateBinary(Operation *op, const Tensor &lhs,
                                 const Tensor &rhs, BinaryFns fns) {
  if (lhs.isFloat() != rhs.isFloat())
    return op->emitError() << "operand element types " << lhs.getElementType()
                           << " and " << rhs.getElementType() << " differ";
  if (lhs.isFloat() && !fns.onFloat)
    return op->emitError() << "float operands are not supported";
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOrError(op, lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return failure();
  std::vector<int64_t> lhsIndex = broadcastIndices(lhs.getShape(), *shape);
  std::vector<int64_t> rhsIndex = broadcastIndices(rhs.getShape(), *shape);
  Tensor result(getResultElementType(op), *shape);
  for (int64_t i = 0, e = result.getNumElements(); i < e; ++i) {
    if (lhs.isFloat()) {
      double value =
          fns.onFloat(lhs.getDouble(lhsIndex[i]), rhs.getDouble(rhsIndex[i]));
      if (result.isFloat())
        result.setDouble(i, value);
      else
        result.setInt(i, value != 0.0);
      continue;
    }
    std::optional<int64_t> value =
        fns.onInt(lhs.getInt(lhsIndex[i]), rhs.getInt(rhsIndex[i]));
    if (!value)
      return op->emitError() << "integer division by zero at element " << i;
    if (result.isFloat())
      return op->emitError() << "integer operands with a float result";
    result.setInt(i, *value);
  }
  return single(std::move(result));
}

template <typename OpTy>
static void addBinary(EvaluatorTable &table, BinaryFns fns) {
  table.add<OpTy>([fns](OpTy op, ArrayRef<Tensor> operands) {
    return evaluateBinary(op, operands[0], operands[1], fns);
  });
}

static double maxWithNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return std::max(a, b);
}

static double minWithNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return std::min(a, b);
}

static std::optional<int64_t> intPow(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return static_cast<int64_t>(std::trunc(
        std::pow(static_cast<double>(base), static_cast<double>(exponent))));
  int64_t result = 1;
  for (int64_t i = 0; i < exponent && i < 64; ++i)
    result = static_cast<int64_t>(static_cast<uint64_t>(result) *
                                  static_cast<uint64_t>(base));
  return result;
}

/// Integer remainder with the sign of the divisor (Python's `%`).
static std::optional<int64_t> floorMod(int64_t a, int64_t b) {
  if (b == 0)
    return std::nullopt;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/// Integer remainder with the sign of the dividend (C's `%`).
static std::optional<int64_t> truncMod(int64_t a, int64_t b) {
  if (b == 0)
    return std::nullopt;
  return a % b;
}

/// Float remainder with the sign of the divisor, for `fmod = false`.
static double floorModFloat(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0.0 && ((r < 0.0) != (b < 0.0)))
    r += b;
  return r;
}

static EvalResult evaluateMod(ModOp op, ArrayRef<Tensor> operands) {
  if (op.getFmod())
    return evaluateBinary(
        op, operands[0], operands[1],
        {[](double a, double b) { return std::fmod(a, b); }, truncMod});
  return evaluateBinary(op, operands[0], operands[1],
                        {floorModFloat, floorMod});
}

//===----------------------------------------------------------------------===//
// Where, Cast, Identity, GELU, dropout
//===----------------------------------------------------------------------===//

static EvalResult evaluateWhere(WhereOp op, ArrayRef<Tensor> operands) {
  const Tensor &condition = operands[0], &x = operands[1], &y = operands[2];
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOrError(op, condition.getShape(), x.getShape());
  if (failed(shape))
    return failure();
  shape = broadcastOrError(op, *shape, y.getShape());
  if (failed(shape))
    return failure();
  std::vector<int64_t> cIndex = broadcastIndices(condition.getShape(), *shape);
  std::vector<int64_t> xIndex = broadcastIndices(x.getShape(), *shape);
  std::vector<int64_t> yIndex = broadcastIndices(y.getShape(), *shape);
  Tensor result(getResultElementType(op), *shape);
  for (int64_t i = 0, e = result.getNumElements(); i < e; ++i) {
    bool pick = condition.getInt(cIndex[i]) != 0;
    const Tensor &from = pick ? x : y;
    int64_t index = pick ? xIndex[i] : yIndex[i];
    if (result.isFloat())
      result.setDouble(i, from.getDouble(index));
    else
      result.setInt(i, from.getInt(index));
  }
  return single(std::move(result));
}

static EvalResult evaluateGelu(GeluOp op, ArrayRef<Tensor> operands) {
  Activation activation = op.getApproximate() == GeluApproximation::tanh
                              ? Activation::gelu_tanh
                              : Activation::gelu;
  Tensor result = operands[0];
  for (double &value : result.getFloats())
    value = applyActivation(activation, value);
  return single(std::move(result));
}

static EvalResult evaluateDropout(DropoutOp op, ArrayRef<Tensor> operands) {
  // Training-mode dropout draws random numbers; only its inert forms have a
  // reference value.
  if (op.getTraining() && op.getRatio().convertToFloat() != 0.0f)
    return op.emitError() << "reference evaluator cannot run training-mode "
                             "dropout with ratio "
                          << op.getRatio().convertToFloat()
                          << " (it is random)";
  SmallVector<Tensor> results;
  results.push_back(operands[0]);
  Tensor mask(getResultElementType(op, 1), operands[0].getShape());
  for (int64_t &value : mask.getInts())
    value = 1;
  results.push_back(std::move(mask));
  return results;
}

/// AdamW in float32, as include/lmopt/Format/AdamW.h defines it.
static EvalResult evaluateAdamW(AdamWOp op, ArrayRef<Tensor> operands) {
  auto constants = ::lmopt::adamw::Constants::from(
      op.getBeta1().convertToDouble(), op.getBeta2().convertToDouble(),
      op.getEpsilon().convertToDouble(), op.getWeightDecay().convertToDouble());
  ::lmopt::adamw::Scalars s;
  s.lr = float(operands[4].getDouble(0));
  s.stepSize = float(operands[5].getDouble(0));
  s.biasCorrection2Sqrt = float(operands[6].getDouble(0));
  s.gradScale = float(operands[7].getDouble(0));
  s.clipCoef = float(operands[8].getDouble(0));
  float decay = s.decay(constants);
  Tensor param = operands[0], m = operands[2], v = operands[3];
  for (int64_t i = 0; i < param.getNumElements(); ++i) {
    float p = float(param.getDouble(i)), mi = float(m.getDouble(i)),
          vi = float(v.getDouble(i));
    ::lmopt::adamw::update(p, mi, vi, float(operands[1].getDouble(i)), s,
                           constants, decay);
    param.setDouble(i, p);
    m.setDouble(i, mi);
    v.setDouble(i, vi);
  }
  SmallVector<Tensor> results;
  results.push_back(std::move(param));
  results.push_back(std::move(m));
  results.push_back(std::move(v));
  return results;
}

void mlir::lmopt::reference::registerElementwiseEvaluators(
    EvaluatorTable &table) {
  table.add<AdamWOp>(evaluateAdamW);
  addUnary<NegOp>(
      table, [](double x) { return -x; },
      [](int64_t x) {
        return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
      });
  addUnary<AbsOp>(
      table, [](double x) { return std::fabs(x); },
      [](int64_t x) { return x < 0 ? -x : x; });
  // Zero and NaN are their own sign.
  addUnary<SignOp>(
      table, [](double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x; },
      [](int64_t x) { return int64_t(x > 0) - int64_t(x < 0); });
  addUnary<ReluOp>(
      table, [](double x) { return x > 0.0 ? x : 0.0; },
      [](int64_t x) { return x > 0 ? x : int64_t(0); });
  addUnary<ExpOp>(table, [](double x) { return std::exp(x); });
  addUnary<LogOp>(table, [](double x) { return std::log(x); });
  addUnary<SqrtOp>(table, [](double x) { return std::sqrt(x); });
  addUnary<ReciprocalOp>(table, [](double x) { return 1.0 / x; });
  addUnary<TanhOp>(table, [](double x) { return std::tanh(x); });
  addUnary<ErfOp>(table, [](double x) { return std::erf(x); });
  addUnary<CosOp>(table, [](double x) { return std::cos(x); });
  addUnary<SinOp>(table, [](double x) { return std::sin(x); });
  addUnary<CeilOp>(table, [](double x) { return std::ceil(x); });
  addUnary<FloorOp>(table, [](double x) { return std::floor(x); });
  // Ties to even, the default rounding mode, as ONNX Round specifies.
  addUnary<RoundOp>(table, [](double x) { return std::nearbyint(x); });
  addUnary<SigmoidOp>(table,
                      [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  addUnary<NotOp>(table, nullptr, [](int64_t x) { return int64_t(x == 0); });
  table.add<IsNaNOp>([](IsNaNOp op, ArrayRef<Tensor> operands) -> EvalResult {
    const Tensor &input = operands[0];
    if (!input.isFloat())
      return op->emitError() << "integer operands are not supported";
    Tensor result(getResultElementType(op), input.getShape());
    for (int64_t i = 0, e = input.getNumElements(); i < e; ++i)
      result.setInt(i, std::isnan(input.getDouble(i)) ? 1 : 0);
    return single(std::move(result));
  });
  table.add<IdentityOp>([](IdentityOp, ArrayRef<Tensor> operands) {
    return single(operands[0]);
  });
  table.add<CastOp>([](CastOp op, ArrayRef<Tensor> operands) {
    return single(operands[0].castTo(getResultElementType(op)));
  });

  addBinary<AddOp>(table,
                   {[](double a, double b) { return a + b; },
                    [](int64_t a, int64_t b) -> std::optional<int64_t> {
                      return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
                    }});
  addBinary<SubOp>(table,
                   {[](double a, double b) { return a - b; },
                    [](int64_t a, int64_t b) -> std::optional<int64_t> {
                      return static_cast<int64_t>(uint64_t(a) - uint64_t(b));
                    }});
  addBinary<MulOp>(table,
                   {[](double a, double b) { return a * b; },
                    [](int64_t a, int64_t b) -> std::optional<int64_t> {
                      return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
                    }});
  // Integer division truncates toward zero, as ONNX Div does.
  addBinary<DivOp>(table, {[](double a, double b) { return a / b; },
                           [](int64_t a, int64_t b) -> std::optional<int64_t> {
                             if (b == 0)
                               return std::nullopt;
                             return a / b;
                           }});
  addBinary<PowOp>(table,
                   {[](double a, double b) { return std::pow(a, b); }, intPow});
  addBinary<MaxOp>(
      table, {maxWithNaN, [](int64_t a, int64_t b) -> std::optional<int64_t> {
                return std::max(a, b);
              }});
  addBinary<MinOp>(
      table, {minWithNaN, [](int64_t a, int64_t b) -> std::optional<int64_t> {
                return std::min(a, b);
              }});
  addBinary<EqualOp>(
      table,
      {[](double a, double b) { return double(a == b); },
       [](int64_t a, int64_t b) -> std::optional<int64_t> { return a == b; }});
  addBinary<LessOp>(table, {[](double a, double b) { return double(a < b); },
                            [](int64_t a, int64_t b) -> std::optional<int64_t> {
                              return a < b;
                            }});
  addBinary<GreaterOp>(
      table,
      {[](double a, double b) { return double(a > b); },
       [](int64_t a, int64_t b) -> std::optional<int64_t> { return a > b; }});
  addBinary<AndOp>(
      table, {nullptr, [](int64_t a, int64_t b) -> std::optional<int64_t> {
                return a != 0 && b != 0;
              }});
  addBinary<OrOp>(table,
                  {nullptr, [](int64_t a, int64_t b) -> std::optional<int64_t> {
                     return a != 0 || b != 0;
                   }});
  table.add<ModOp>(evaluateMod);
  table.add<WhereOp>(evaluateWhere);
  table.add<GeluOp>(evaluateGelu);
  table.add<DropoutOp>(evaluateDropout);
}
