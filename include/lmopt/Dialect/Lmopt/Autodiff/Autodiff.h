//===- Autodiff.h - reverse-mode differentiation of lmopt IR ----*- C++ -*-===//
//
// Reverse-mode autodiff over the lmopt dialect: each op's rule is its
// GradientOpInterface (lmopt/Dialect/Lmopt/IR/GradientOpInterface.h), whose
// models registerGradientModels attaches; buildGradients walks a function
// backwards from a scalar loss and asks each op that lies between the loss
// and the arguments for its rule, summing the gradients of values with
// several users. The pass `lmopt-autodiff` (Passes.td) exposes it on
// functions whose arguments are marked trainable; the training compiler
// (lmopt/Training) calls it directly.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_AUTODIFF_AUTODIFF_H
#define LMOPT_DIALECT_LMOPT_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::lmopt {

/// The argument attribute that marks an argument to differentiate with
/// respect to: the parameter's name.
inline constexpr const char *kTrainableAttrName = "lmopt.trainable";
/// The result attribute `lmopt-autodiff` gives each gradient result: the
/// name of the parameter it is the gradient of.
inline constexpr const char *kGradientAttrName = "lmopt.gradient";

/// Attaches every gradient rule to its op (the external models of
/// GradientOpInterface).
void registerGradientModels(DialectRegistry &registry);

/// What buildGradients did, for the training report.
struct AutodiffStats {
  /// Forward ops on a path from an argument to the loss.
  unsigned activeOps = 0;
  /// Ops the rules added.
  unsigned backwardOps = 0;
};

/// Builds, before the terminator of `func`'s single block, the gradient of
/// `loss` (a rank-0 float value of the block) with respect to each of
/// `wrt` (values of the block, usually arguments), in order; a value the
/// loss does not depend on gets zeros. Fails, with an error at the op, when
/// an op on the path has no rule or its rule refuses the instance.
FailureOr<SmallVector<Value>> buildGradients(func::FuncOp func, Value loss,
                                             ArrayRef<Value> wrt,
                                             AutodiffStats *stats = nullptr);

/// Erases the ops of `block` whose results nothing reads, last first: the
/// rules build every operand's gradient, and a caller drops the ones no
/// parameter needs once it has wired up the gradients it returns.
void eraseDeadOps(Block &block);

#define GEN_PASS_DECL
#include "lmopt/Dialect/Lmopt/Autodiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lmopt/Dialect/Lmopt/Autodiff/Passes.h.inc"

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_AUTODIFF_AUTODIFF_H
