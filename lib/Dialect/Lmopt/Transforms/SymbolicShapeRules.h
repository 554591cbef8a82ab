//===- SymbolicShapeRules.h - per-op rules of the symbolic shapes -*- C++ -*-===//
//
// The analysis's transfer function, kept apart from its bookkeeping.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_SYMBOLICSHAPERULES_H
#define LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_SYMBOLICSHAPERULES_H

#include "lmopt/Dialect/Lmopt/Transforms/SymbolicShapes.h"

namespace mlir::lmopt {

/// Sets the dims (and tracked values) of `op`'s results from its operands'
/// by the op's rule: a rule of its own, the first operand's shape for
/// same-shape ops, nothing for ops without one (their dims stay unknown).
void applySymbolicShapeRule(Operation *op, SymbolicShapes &shapes);

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_SYMBOLICSHAPERULES_H
