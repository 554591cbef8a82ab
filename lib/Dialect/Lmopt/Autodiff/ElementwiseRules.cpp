//===- ElementwiseRules.cpp - gradients of elementwise ops ----------------===//
//
// Broadcasting binary ops sum their gradient back to each operand's shape
// (GradBuilder::reduceToShape); unary ops multiply by their derivative,
// written from the result where that is cheaper (exp, tanh, sigmoid).
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;

static bool isFloat(Value value) {
  return llvm::isa<FloatType>(elementTypeOf(value));
}

static LogicalResult addRule(AddOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  og[0] = gb.reduceToShape(rg[0], op.getLhs());
  og[1] = gb.reduceToShape(rg[0], op.getRhs());
  return success();
}

static LogicalResult subRule(SubOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  og[0] = gb.reduceToShape(rg[0], op.getLhs());
  og[1] = gb.reduceToShape(gb.neg(rg[0]), op.getRhs());
  return success();
}

static LogicalResult mulRule(MulOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  og[0] = gb.reduceToShape(gb.mul(rg[0], op.getRhs()), op.getLhs());
  og[1] = gb.reduceToShape(gb.mul(rg[0], op.getLhs()), op.getRhs());
  return success();
}

static LogicalResult divRule(DivOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  if (!isFloat(op.getLhs()))
    return success();
  og[0] = gb.reduceToShape(gb.div(rg[0], op.getRhs()), op.getLhs());
  // d(l/r)/dr = -(l/r)/r.
  og[1] = gb.reduceToShape(
      gb.neg(gb.div(gb.mul(rg[0], op.getOutput()), op.getRhs())), op.getRhs());
  return success();
}

static LogicalResult powRule(PowOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  std::optional<double> exponent = getSplatValue(op.getRhs());
  if (!exponent)
    return op.emitError("no gradient for 'lmopt.pow' with a non-constant "
                        "exponent");
  Value x = op.getLhs();
  Value derivative =
      *exponent == 2.0
          ? gb.scale(x, 2.0)
          : gb.scale(gb.div(op.getOutput(), x), *exponent);
  og[0] = gb.reduceToShape(gb.mul(rg[0], derivative), x);
  return success();
}

static LogicalResult whereRule(WhereOp op, GradBuilder &gb, ArrayRef<Value> rg,
                               MutableArrayRef<Value> og) {
  if (!isFloat(op.getX()))
    return success();
  Value zero = gb.scalarLike(0.0, rg[0]);
  og[1] = gb.reduceToShape(gb.where(op.getCondition(), rg[0], zero),
                           op.getX());
  og[2] = gb.reduceToShape(gb.where(op.getCondition(), zero, rg[0]),
                           op.getY());
  return success();
}

static LogicalResult negRule(NegOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  og[0] = gb.neg(rg[0]);
  return success();
}

static LogicalResult expRule(ExpOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  og[0] = gb.mul(rg[0], op.getOutput());
  return success();
}

static LogicalResult logRule(LogOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  og[0] = gb.div(rg[0], op.getInput());
  return success();
}

static LogicalResult sqrtRule(SqrtOp op, GradBuilder &gb, ArrayRef<Value> rg,
                              MutableArrayRef<Value> og) {
  og[0] = gb.div(gb.scale(rg[0], 0.5), op.getOutput());
  return success();
}

static LogicalResult reciprocalRule(ReciprocalOp op, GradBuilder &gb,
                                    ArrayRef<Value> rg,
                                    MutableArrayRef<Value> og) {
  Value y = op.getOutput();
  og[0] = gb.neg(gb.mul(rg[0], gb.mul(y, y)));
  return success();
}

static LogicalResult tanhRule(TanhOp op, GradBuilder &gb, ArrayRef<Value> rg,
                              MutableArrayRef<Value> og) {
  Value y = op.getOutput();
  og[0] = gb.mul(rg[0], gb.sub(gb.scalarLike(1.0, y), gb.mul(y, y)));
  return success();
}

static LogicalResult erfRule(ErfOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  Value x = op.getInput();
  Value bell = gb.exp(gb.neg(gb.mul(x, x)));
  og[0] = gb.mul(rg[0], gb.scale(bell, 2.0 / std::sqrt(M_PI)));
  return success();
}

static LogicalResult cosRule(CosOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  og[0] = gb.neg(gb.mul(rg[0], gb.sin(op.getInput())));
  return success();
}

static LogicalResult sinRule(SinOp op, GradBuilder &gb, ArrayRef<Value> rg,
                             MutableArrayRef<Value> og) {
  og[0] = gb.mul(rg[0], gb.cos(op.getInput()));
  return success();
}

static LogicalResult sigmoidRule(SigmoidOp op, GradBuilder &gb,
                                 ArrayRef<Value> rg,
                                 MutableArrayRef<Value> og) {
  Value y = op.getOutput();
  og[0] = gb.mul(rg[0], gb.mul(y, gb.sub(gb.scalarLike(1.0, y), y)));
  return success();
}

static LogicalResult reluRule(ReluOp op, GradBuilder &gb, ArrayRef<Value> rg,
                              MutableArrayRef<Value> og) {
  Value x = op.getInput();
  og[0] = gb.where(gb.greater(x, gb.scalarLike(0.0, x)), rg[0],
                   gb.scalarLike(0.0, x));
  return success();
}

static LogicalResult identityRule(IdentityOp op, GradBuilder &gb,
                                  ArrayRef<Value> rg,
                                  MutableArrayRef<Value> og) {
  og[0] = rg[0];
  return success();
}

static LogicalResult castRule(CastOp op, GradBuilder &gb, ArrayRef<Value> rg,
                              MutableArrayRef<Value> og) {
  if (isFloat(op.getInput()))
    og[0] = gb.cast(rg[0], elementTypeOf(op.getInput()));
  return success();
}

Value mlir::lmopt::geluDerivative(GradBuilder &gb, Value x, Value grad,
                                  bool tanhForm) {
  Value one = gb.scalarLike(1.0, x);
  if (!tanhForm) {
    // Phi(x) + x phi(x).
    Value cdf = gb.scale(gb.add(one, gb.erf(gb.scale(x, M_SQRT1_2))), 0.5);
    Value pdf = gb.scale(gb.exp(gb.scale(gb.mul(x, x), -0.5)),
                         1.0 / std::sqrt(2.0 * M_PI));
    return gb.mul(grad, gb.add(cdf, gb.mul(x, pdf)));
  }
  // u = c (x + a x^3), t = tanh(u): 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3a x^2).
  const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
  Value x2 = gb.mul(x, x);
  Value u = gb.scale(gb.add(x, gb.scale(gb.mul(x2, x), a)), c);
  Value t = gb.tanh(u);
  Value left = gb.scale(gb.add(one, t), 0.5);
  Value du = gb.scale(gb.add(one, gb.scale(x2, 3.0 * a)), c);
  Value right =
      gb.mul(gb.scale(x, 0.5), gb.mul(gb.sub(one, gb.mul(t, t)), du));
  return gb.mul(grad, gb.add(left, right));
}

static LogicalResult geluRule(GeluOp op, GradBuilder &gb, ArrayRef<Value> rg,
                              MutableArrayRef<Value> og) {
  og[0] = geluDerivative(gb, op.getInput(), rg[0],
                         op.getApproximate() == GeluApproximation::tanh);
  return success();
}

FailureOr<Value> mlir::lmopt::applyActivationDerivative(GradBuilder &gb,
                                                        Operation *op,
                                                        Activation activation,
                                                        Value z, Value grad) {
  switch (activation) {
  case Activation::none:
    return grad;
  case Activation::relu:
    return gb.where(gb.greater(z, gb.scalarLike(0.0, z)), grad,
                    gb.scalarLike(0.0, z));
  case Activation::gelu:
    return geluDerivative(gb, z, grad, /*tanhForm=*/false);
  case Activation::gelu_tanh:
    return geluDerivative(gb, z, grad, /*tanhForm=*/true);
  }
  return op->emitError("no gradient for activation ")
         << stringifyActivation(activation);
}

void mlir::lmopt::attachElementwiseRules(MLIRContext &context) {
  attachRule<AddOp, addRule>(context);
  attachRule<SubOp, subRule>(context);
  attachRule<MulOp, mulRule>(context);
  attachRule<DivOp, divRule>(context);
  attachRule<PowOp, powRule>(context);
  attachRule<WhereOp, whereRule>(context);
  attachRule<NegOp, negRule>(context);
  attachRule<ExpOp, expRule>(context);
  attachRule<LogOp, logRule>(context);
  attachRule<SqrtOp, sqrtRule>(context);
  attachRule<ReciprocalOp, reciprocalRule>(context);
  attachRule<TanhOp, tanhRule>(context);
  attachRule<ErfOp, erfRule>(context);
  attachRule<SigmoidOp, sigmoidRule>(context);
  attachRule<CosOp, cosRule>(context);
  attachRule<SinOp, sinRule>(context);
  attachRule<ReluOp, reluRule>(context);
  attachRule<IdentityOp, identityRule>(context);
  attachRule<CastOp, castRule>(context);
  attachRule<GeluOp, geluRule>(context);
}
