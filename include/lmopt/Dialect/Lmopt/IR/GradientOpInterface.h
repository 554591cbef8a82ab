//===- GradientOpInterface.h - an op's reverse-mode rule --------*- C++ -*-===//
//
// See GradientOpInterface.td; the rules are registered by
// registerGradientModels (lmopt/Dialect/Lmopt/Autodiff/Autodiff.h).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_IR_GRADIENTOPINTERFACE_H
#define LMOPT_DIALECT_LMOPT_IR_GRADIENTOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "lmopt/Dialect/Lmopt/IR/GradientOpInterface.h.inc"

#endif // LMOPT_DIALECT_LMOPT_IR_GRADIENTOPINTERFACE_H
