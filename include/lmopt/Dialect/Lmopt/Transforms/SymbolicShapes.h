//===- SymbolicShapes.h - dims as polynomials over input dims ---*- C++ -*-===//
//
// A forward analysis that names every dim of every tensor in a function as a
// polynomial over the function's dynamic input dims, and every element of a
// small integer shape vector likewise. It is the first step towards planning
// with bounded dynamic dims: a dim the analysis cannot prove becomes a fresh
// opaque symbol, so two dims compare equal only when they provably are.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_SYMBOLICSHAPES_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_SYMBOLICSHAPES_H

#include "lmopt/Dialect/Lmopt/Transforms/SymExpr.h"

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class Operation;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::lmopt {

/// A fact the analysis relied on under SymbolicShapeBounds: two dims equal.
struct SymbolicAssumption {
  SymExpr lhs, rhs;
  /// The op whose result dims rely on it.
  Operation *op = nullptr;
};

/// Upper bounds of the input symbols (indexed like them), which let the
/// analysis plan for bounded dynamic shapes: a slice end `min(c, s)` with
/// bound(s) <= c is `s`, and two different symbolic dims that must agree
/// (broadcasting, concat) are assumed equal, recorded, and merged: where
/// both are made of input dims only (so the plan checks the equality on
/// every run), one symbol is replaced by the other side in every dim the
/// analysis reads or derives from then on (the later symbol by the earlier
/// one when both sides are symbols), so that dims derived from either side
/// compare equal.
struct SymbolicShapeBounds {
  std::vector<int64_t> bounds;
};

/// Symbolic dims (and small integer contents) of the values of one function.
class SymbolicShapes {
public:
  /// Analyses `func`. Dynamic dims of its arguments become symbols named
  /// `<name>.<dim>` after the input's name (getGraphInputName), numbered
  /// from 0 in argument then dim order.
  explicit SymbolicShapes(func::FuncOp func);
  /// The same with bounds on those symbols (SymbolicShapeBounds).
  SymbolicShapes(func::FuncOp func, const SymbolicShapeBounds &bounds);

  bool hasBounds() const { return bounds.has_value(); }
  /// Number of symbols that are input dims (ids 0 .. n-1).
  unsigned getNumInputSymbols() const { return numInputSymbols; }
  /// The equalities relied on (only with bounds), in the order made.
  ArrayRef<SymbolicAssumption> getAssumptions() const { return assumptions; }
  /// With bounds: the largest value of `expr` (nullopt without bounds, with
  /// fresh symbols, or when the expression can decrease as a symbol grows).
  std::optional<int64_t> getUpperBound(const SymExpr &expr) const;
  /// With bounds: records `lhs == rhs` for `op`, merges the two (above) and
  /// returns true (false without bounds).
  bool assumeEqual(const SymExpr &lhs, const SymExpr &rhs, Operation *op);
  /// `expr` with the merged symbols replaced.
  SymExpr canonical(const SymExpr &expr) const;

  /// The dims of `value` (ranked tensor); nullopt for other types.
  std::optional<ArrayRef<SymExpr>> getDims(Value value) const;
  /// The elements of `value` when it is a small 0-D/1-D integer tensor whose
  /// contents the analysis derived; nullopt otherwise.
  std::optional<ArrayRef<SymExpr>> getValues(Value value) const;

  /// A new opaque symbol, equal to nothing but itself.
  SymExpr fresh();
  StringRef getName(unsigned id) const { return names[id]; }
  ArrayRef<std::string> getNames() const { return names; }
  unsigned getNumFresh() const { return numFresh; }

  void setDims(Value value, SmallVector<SymExpr> dims);
  void setValues(Value value, SmallVector<SymExpr> values);
  /// Dim `dim` of `value`, or a fresh symbol when the value is not known.
  SymExpr dimOf(Value value, int64_t dim);

private:
  /// Gives every result dim a rule did not set a fresh symbol, and every
  /// static dim its size.
  void completeResults(Operation *op);

  void analyse(func::FuncOp func);

  std::vector<std::string> names;
  unsigned numFresh = 0;
  unsigned numInputSymbols = 0;
  std::optional<SymbolicShapeBounds> bounds;
  std::vector<SymbolicAssumption> assumptions;
  /// Symbols merged into an expression of input symbols (assumeEqual).
  llvm::DenseMap<unsigned, SymExpr> merged;
  llvm::DenseMap<Value, SmallVector<SymExpr>> dims;
  llvm::DenseMap<Value, SmallVector<SymExpr>> values;
};

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_SYMBOLICSHAPES_H
