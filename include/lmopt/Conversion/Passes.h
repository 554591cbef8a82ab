//===- Passes.h - lmopt conversion passes -----------------------*- C++ -*-===//

#ifndef LMOPT_CONVERSION_PASSES_H
#define LMOPT_CONVERSION_PASSES_H

#include "lmopt/Conversion/LmoptToLinalg/LmoptToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::lmopt {

#define GEN_PASS_DECL
#include "lmopt/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lmopt/Conversion/Passes.h.inc"

} // namespace mlir::lmopt

#endif // LMOPT_CONVERSION_PASSES_H
