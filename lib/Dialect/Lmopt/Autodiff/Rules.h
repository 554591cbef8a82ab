//===- Rules.h - attaching gradient rules to ops ----------------*- C++ -*-===//
//
// Each rule is a function of the op, a GradBuilder, the results' gradients
// (null where none reached a result) and the operands' gradients to fill
// (all null on entry). RuleModel makes one the op's GradientOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DIALECT_LMOPT_AUTODIFF_RULES_H
#define LMOPT_LIB_DIALECT_LMOPT_AUTODIFF_RULES_H

#include "GradBuilder.h"

#include "lmopt/Dialect/Lmopt/IR/GradientOpInterface.h"

namespace mlir::lmopt {

template <typename OpT>
using GradientRule = LogicalResult (*)(OpT, GradBuilder &, ArrayRef<Value>,
                                       MutableArrayRef<Value>);

template <typename OpT, GradientRule<OpT> Rule>
struct RuleModel
    : GradientOpInterface::ExternalModel<RuleModel<OpT, Rule>, OpT> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    operandGrads.assign(op->getNumOperands(), Value());
    GradBuilder gb(builder, op->getLoc());
    return Rule(llvm::cast<OpT>(op), gb, resultGrads, operandGrads);
  }
};

template <typename OpT, GradientRule<OpT> Rule>
void attachRule(MLIRContext &context) {
  OpT::template attachInterface<RuleModel<OpT, Rule>>(context);
}

/// The rules of each file, attached to their ops.
void attachElementwiseRules(MLIRContext &context);
void attachStructureRules(MLIRContext &context);
void attachLayerRules(MLIRContext &context);

/// `grad` times the derivative of `activation` at `preActivation`.
FailureOr<Value> applyActivationDerivative(GradBuilder &gb, Operation *op,
                                           Activation activation,
                                           Value preActivation, Value grad);

/// The gradient of GELU at `x` (exact or tanh form) times `grad`.
Value geluDerivative(GradBuilder &gb, Value x, Value grad, bool tanhForm);

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DIALECT_LMOPT_AUTODIFF_RULES_H
