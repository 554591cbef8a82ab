//===- Evaluator.h - reference evaluator for lmopt IR -----------*- C++ -*-===//
//
// Runs a `func.func` of lmopt ops on concrete tensors, one op at a time, with
// each op's semantics written out plainly from its ODS description and the
// ONNX specification. It is the numeric reference against which the importer
// and every graph pass are checked (docs/reference-evaluator.md); exactness
// and clear diagnostics come before speed.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_REFERENCE_EVALUATOR_H
#define LMOPT_REFERENCE_EVALUATOR_H

#include "lmopt/Reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::lmopt::reference {

/// Evaluates one op on its operands' values. Unsupported ops and bad inputs
/// (shapes that do not match the op's rules or its declared result types,
/// indices out of range) are reported as diagnostics at the op.
FailureOr<SmallVector<Tensor>> evaluateOp(Operation *op,
                                          ArrayRef<Tensor> operands);

/// Evaluates `func` (one block of ops ending in `func.return`) on
/// `arguments`, which must match the function's argument types up to
/// dynamic dims.
FailureOr<SmallVector<Tensor>> evaluateFunction(func::FuncOp func,
                                                ArrayRef<Tensor> arguments);

} // namespace mlir::lmopt::reference

#endif // LMOPT_REFERENCE_EVALUATOR_H
