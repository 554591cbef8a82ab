//===- SymExpr.h - integer polynomials over symbols -------------*- C++ -*-===//
//
// The expressions of the symbolic shape analysis: a dim or a shape-vector
// element as a polynomial over symbols (input dims, or opaque unknowns).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_SYMEXPR_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_SYMEXPR_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::lmopt {

/// A canonical integer polynomial: a sum of monomials `c * s1^a * s2^b ...`
/// over symbol ids, with no zero coefficients. Constants are the monomial of
/// degree 0, so equality of two expressions is structural.
class SymExpr {
public:
  /// Sorted (symbol, exponent) pairs, exponents > 0.
  using Monomial = std::vector<std::pair<unsigned, unsigned>>;

  SymExpr() = default;
  static SymExpr constant(int64_t value);
  static SymExpr symbol(unsigned id);

  SymExpr operator+(const SymExpr &rhs) const;
  SymExpr operator-(const SymExpr &rhs) const;
  SymExpr operator*(const SymExpr &rhs) const;
  bool operator==(const SymExpr &rhs) const {
    return !overflowed && !rhs.overflowed && terms == rhs.terms;
  }
  bool operator!=(const SymExpr &rhs) const { return !(*this == rhs); }

  /// `this / rhs` when `rhs` is one monomial dividing every term exactly
  /// (symbols and coefficient), so the quotient is exact for every value of
  /// the symbols; nullopt otherwise.
  std::optional<SymExpr> divideExactly(const SymExpr &rhs) const;

  std::optional<int64_t> getConstant() const;
  /// The symbol id when the expression is one symbol (coefficient 1,
  /// exponent 1).
  std::optional<unsigned> getSymbol() const;
  /// Every occurrence of symbol `id` replaced by `replacement`.
  SymExpr substitute(unsigned id, const SymExpr &replacement) const;
  /// True when symbol `id` occurs in the expression.
  bool contains(unsigned id) const;
  bool isConstant(int64_t value) const { return getConstant() == value; }
  /// True when every coefficient is >= 0, so the value is >= 0 whenever the
  /// symbols are (they all stand for dims).
  bool isNonNegative() const;
  /// True when it is non-negative with a positive constant term, so > 0.
  bool isPositive() const;

  /// Prints terms by descending degree, symbols by `names`, coefficient last
  /// ("input_ids.1 * 12 + 3").
  std::string print(ArrayRef<std::string> names) const;

  /// The canonical terms: monomial -> nonzero coefficient.
  const std::map<Monomial, int64_t> &getTerms() const { return terms; }

  /// True when a coefficient overflowed int64 (constants come from the
  /// model's file): such an expression equals nothing and is never stored.
  bool hasOverflowed() const { return overflowed; }

private:
  std::map<Monomial, int64_t> terms;
  bool overflowed = false;
};

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_SYMEXPR_H
