//===- SymbolicShapes.cpp - dims as polynomials over input dims -----------===//

#include "lmopt/Dialect/Lmopt/Transforms/SymbolicShapes.h"

#include "SymbolicShapeRules.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::lmopt;

using Exprs = SmallVector<SymExpr>;

//===----------------------------------------------------------------------===//
// SymbolicShapes
//===----------------------------------------------------------------------===//

SymbolicShapes::SymbolicShapes(func::FuncOp func) { analyse(func); }

SymbolicShapes::SymbolicShapes(func::FuncOp func,
                               const SymbolicShapeBounds &symbolBounds)
    : bounds(symbolBounds) {
  analyse(func);
}

std::optional<int64_t>
SymbolicShapes::getUpperBound(const SymExpr &expr) const {
  // Non-negative coefficients: the value grows with every symbol, so the
  // bounds give the largest one.
  if (!bounds || !expr.isNonNegative() || expr.hasOverflowed())
    return std::nullopt;
  int64_t total = 0;
  for (const auto &[monomial, coefficient] : expr.getTerms()) {
    int64_t term = coefficient;
    for (auto [symbol, exponent] : monomial) {
      if (symbol >= numInputSymbols || symbol >= bounds->bounds.size())
        return std::nullopt;
      for (unsigned i = 0; i < exponent; ++i)
        if (__builtin_mul_overflow(term, bounds->bounds[symbol], &term))
          return std::nullopt;
    }
    if (__builtin_add_overflow(total, term, &total))
      return std::nullopt;
  }
  return total;
}

bool SymbolicShapes::assumeEqual(const SymExpr &lhs, const SymExpr &rhs,
                                 Operation *op) {
  if (!bounds)
    return false;
  assumptions.push_back({lhs, rhs, op});
  SymExpr a = canonical(lhs), b = canonical(rhs);
  auto inputsOnly = [&](const SymExpr &expr) {
    for (const auto &term : expr.getTerms())
      for (const auto &[symbol, exponent] : term.first)
        if (symbol >= numInputSymbols)
          return false;
    return !expr.hasOverflowed();
  };
  if (a == b || !inputsOnly(a) || !inputsOnly(b))
    return true;
  std::optional<unsigned> sa = a.getSymbol(), sb = b.getSymbol();
  if (sa && sb)
    merged[std::max(*sa, *sb)] = *sa < *sb ? a : b;
  else if (sb && !a.contains(*sb))
    merged[*sb] = a;
  else if (sa && !b.contains(*sa))
    merged[*sa] = b;
  return true;
}

SymExpr SymbolicShapes::canonical(const SymExpr &expr) const {
  SymExpr out = expr;
  // Each replacement was canonical when made; a later merge can rename a
  // symbol in it, hence the repeat (bounded by the number of merges).
  for (size_t round = 0; round <= merged.size(); ++round) {
    bool changed = false;
    for (const auto &[symbol, replacement] : merged)
      if (out.contains(symbol)) {
        out = out.substitute(symbol, replacement);
        changed = true;
      }
    if (!changed)
      break;
  }
  return out;
}

void SymbolicShapes::analyse(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    std::string base = getGraphInputName(func, arg.getArgNumber());
    Exprs argDims;
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      if (!ShapedType::isDynamic(size)) {
        argDims.push_back(SymExpr::constant(size));
        continue;
      }
      names.push_back(base + "." + std::to_string(dim));
      argDims.push_back(SymExpr::symbol(names.size() - 1));
    }
    dims[arg] = argDims;
  }
  numInputSymbols = names.size();
  // Ops come in dominance order, so operands are analysed before their users.
  func.walk([&](Operation *op) {
    if (op == func.getOperation())
      return;
    applySymbolicShapeRule(op, *this);
    completeResults(op);
  });
  // Results derived before a merge take its canonical form too (the
  // arguments keep their own symbols, which the plan binds).
  if (merged.empty())
    return;
  func.walk([&](Operation *op) {
    for (Value result : op->getResults()) {
      if (auto it = dims.find(result); it != dims.end())
        for (SymExpr &dim : it->second)
          dim = canonical(dim);
      if (auto it = values.find(result); it != values.end())
        for (SymExpr &value : it->second)
          value = canonical(value);
    }
  });
}

void SymbolicShapes::completeResults(Operation *op) {
  // Whatever a rule did not set is unknown; static dims are facts either way.
  for (Value result : op->getResults()) {
    auto type = llvm::dyn_cast<RankedTensorType>(result.getType());
    if (!type)
      continue;
    Exprs &resultDims = dims[result];
    if (resultDims.size() != static_cast<size_t>(type.getRank())) {
      resultDims.clear();
      for (int64_t i = 0; i < type.getRank(); ++i)
        resultDims.push_back(fresh());
    }
    for (auto [expr, size] : llvm::zip_equal(resultDims, type.getShape()))
      if (!ShapedType::isDynamic(size))
        expr = SymExpr::constant(size);
  }
}

std::optional<ArrayRef<SymExpr>> SymbolicShapes::getDims(Value value) const {
  auto it = dims.find(value);
  if (it == dims.end())
    return std::nullopt;
  return ArrayRef<SymExpr>(it->second);
}

std::optional<ArrayRef<SymExpr>> SymbolicShapes::getValues(Value value) const {
  auto it = values.find(value);
  if (it == values.end())
    return std::nullopt;
  return ArrayRef<SymExpr>(it->second);
}

SymExpr SymbolicShapes::fresh() {
  names.push_back("?" + std::to_string(numFresh++));
  return SymExpr::symbol(names.size() - 1);
}

void SymbolicShapes::setDims(Value value, SmallVector<SymExpr> newDims) {
  for (SymExpr &dim : newDims)
    if (dim.hasOverflowed())
      dim = fresh();
    else
      dim = canonical(dim);
  dims[value] = std::move(newDims);
}

void SymbolicShapes::setValues(Value value, SmallVector<SymExpr> newValues) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (static_cast<int64_t>(newValues.size()) != type.getNumElements() ||
      llvm::any_of(newValues,
                   [](const SymExpr &value) { return value.hasOverflowed(); }))
    return;
  for (SymExpr &value : newValues)
    value = canonical(value);
  values[value] = std::move(newValues);
}

SymExpr SymbolicShapes::dimOf(Value value, int64_t dim) {
  auto it = dims.find(value);
  if (it != dims.end() && dim < static_cast<int64_t>(it->second.size()))
    return canonical(it->second[dim]);
  int64_t size = llvm::cast<RankedTensorType>(value.getType()).getDimSize(dim);
  return ShapedType::isDynamic(size) ? fresh() : SymExpr::constant(size);
}
