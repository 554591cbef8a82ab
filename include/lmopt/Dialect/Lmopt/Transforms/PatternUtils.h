//===- PatternUtils.h - matching helpers for fusion patterns ----*- C++ -*-===//
//
// Small predicates shared by the fusion patterns, so that each pattern reads
// as the subgraph it matches.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_PATTERNUTILS_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_PATTERNUTILS_H

#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::lmopt {

/// The value of `value` when it is a constant whose elements are all equal
/// (a splat or a one-element tensor) of float or integer type.
std::optional<double> getSplatValue(Value value);

/// True when `value` is such a constant within `tolerance` of `expected`
/// (relative to |expected| when that exceeds 1).
bool isSplatNear(Value value, double expected, double tolerance = 1e-5);

/// True when `value` is produced by a constant op (any contents).
bool isConstant(Value value);

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_PATTERNUTILS_H
