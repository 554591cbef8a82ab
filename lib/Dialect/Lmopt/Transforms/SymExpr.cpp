//===- SymExpr.cpp - integer polynomials over symbols ---------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/SymExpr.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::lmopt;

SymExpr SymExpr::constant(int64_t value) {
  SymExpr expr;
  if (value != 0)
    expr.terms[{}] = value;
  return expr;
}

SymExpr SymExpr::symbol(unsigned id) {
  SymExpr expr;
  expr.terms[{{id, 1}}] = 1;
  return expr;
}

std::optional<unsigned> SymExpr::getSymbol() const {
  if (overflowed || terms.size() != 1)
    return std::nullopt;
  const auto &[mono, coeff] = *terms.begin();
  if (coeff != 1 || mono.size() != 1 || mono.front().second != 1)
    return std::nullopt;
  return mono.front().first;
}

bool SymExpr::contains(unsigned id) const {
  for (const auto &term : terms)
    for (const auto &[symbol, exponent] : term.first)
      if (symbol == id)
        return true;
  return false;
}

SymExpr SymExpr::substitute(unsigned id, const SymExpr &replacement) const {
  if (!contains(id))
    return *this;
  SymExpr result;
  result.overflowed = overflowed;
  for (const auto &[mono, coeff] : terms) {
    SymExpr term = constant(coeff);
    for (const auto &[symbol, exponent] : mono)
      for (unsigned i = 0; i < exponent; ++i)
        term = term * (symbol == id ? replacement : SymExpr::symbol(symbol));
    result = result + term;
  }
  return result;
}

SymExpr SymExpr::operator+(const SymExpr &rhs) const {
  SymExpr sum = *this;
  sum.overflowed |= rhs.overflowed;
  for (const auto &[mono, coeff] : rhs.terms) {
    int64_t &slot = sum.terms[mono];
    sum.overflowed |= llvm::AddOverflow(slot, coeff, slot);
    if (slot == 0)
      sum.terms.erase(mono);
  }
  return sum;
}

SymExpr SymExpr::operator-(const SymExpr &rhs) const {
  return *this + rhs * constant(-1);
}

static SymExpr::Monomial multiplyMonomials(const SymExpr::Monomial &lhs,
                                           const SymExpr::Monomial &rhs) {
  std::map<unsigned, unsigned> exps;
  for (const auto &[sym, exp] : lhs)
    exps[sym] += exp;
  for (const auto &[sym, exp] : rhs)
    exps[sym] += exp;
  return SymExpr::Monomial(exps.begin(), exps.end());
}

SymExpr SymExpr::operator*(const SymExpr &rhs) const {
  SymExpr product;
  product.overflowed = overflowed || rhs.overflowed;
  for (const auto &[lmono, lcoeff] : terms) {
    for (const auto &[rmono, rcoeff] : rhs.terms) {
      Monomial mono = multiplyMonomials(lmono, rmono);
      int64_t &slot = product.terms[mono];
      int64_t term = 0;
      product.overflowed |= llvm::MulOverflow(lcoeff, rcoeff, term);
      product.overflowed |= llvm::AddOverflow(slot, term, slot);
      if (slot == 0)
        product.terms.erase(mono);
    }
  }
  return product;
}

std::optional<SymExpr> SymExpr::divideExactly(const SymExpr &rhs) const {
  if (rhs.terms.size() != 1 || overflowed || rhs.overflowed)
    return std::nullopt;
  const auto &[dmono, dcoeff] = *rhs.terms.begin();
  SymExpr quotient;
  for (const auto &[mono, coeff] : terms) {
    if ((dcoeff == -1 && coeff == std::numeric_limits<int64_t>::min()) ||
        coeff % dcoeff != 0)
      return std::nullopt;
    std::map<unsigned, unsigned> exps(mono.begin(), mono.end());
    for (const auto &[sym, exp] : dmono) {
      auto it = exps.find(sym);
      if (it == exps.end() || it->second < exp)
        return std::nullopt;
      it->second -= exp;
      if (it->second == 0)
        exps.erase(it);
    }
    quotient.terms[Monomial(exps.begin(), exps.end())] = coeff / dcoeff;
  }
  return quotient;
}

std::optional<int64_t> SymExpr::getConstant() const {
  if (overflowed)
    return std::nullopt;
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms.begin()->first.empty())
    return terms.begin()->second;
  return std::nullopt;
}

bool SymExpr::isNonNegative() const {
  if (overflowed)
    return false;
  return llvm::all_of(terms, [](const auto &term) { return term.second > 0; });
}

bool SymExpr::isPositive() const {
  return isNonNegative() && terms.count(Monomial()) != 0;
}

static unsigned degree(const SymExpr::Monomial &mono) {
  unsigned total = 0;
  for (const auto &[sym, exp] : mono)
    total += exp;
  return total;
}

std::string SymExpr::print(ArrayRef<std::string> names) const {
  if (terms.empty())
    return "0";
  SmallVector<std::pair<const Monomial *, int64_t>> ordered;
  for (const auto &[mono, coeff] : terms)
    ordered.push_back({&mono, coeff});
  llvm::stable_sort(ordered, [](const auto &lhs, const auto &rhs) {
    return degree(*lhs.first) > degree(*rhs.first);
  });
  std::string out;
  for (const auto &[index, term] : llvm::enumerate(ordered)) {
    auto [mono, coeff] = term;
    if (index != 0)
      out += coeff < 0 ? " - " : " + ";
    else if (coeff < 0)
      out += "-";
    int64_t magnitude = coeff < 0 ? -coeff : coeff;
    std::string factors;
    for (const auto &[sym, exp] : *mono) {
      if (!factors.empty())
        factors += " * ";
      factors += names[sym];
      if (exp > 1)
        factors += "^" + std::to_string(exp);
    }
    if (factors.empty())
      out += std::to_string(magnitude);
    else if (magnitude == 1)
      out += factors;
    else
      out += factors + " * " + std::to_string(magnitude);
  }
  return out;
}
