//===- PlanShapes.cpp - Symbolic dims of a plan, evaluated per run --------===//
//
// Dim expressions (postfix programs over the plan's symbols) are evaluated
// with overflow checks; evaluatePlanShapes binds the symbols from a run's
// inputs and checks bounds, input dims and assumptions before any step runs
// (docs/bundle-format.md, "Symbolic dims").
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/PlanShapes.h"

#include <algorithm>
#include <limits>

using namespace lmopt::runtime;

static const char *dimOpSymbol(DimOp::Kind kind) {
  switch (kind) {
  case DimOp::Kind::Add:
    return " + ";
  case DimOp::Kind::Sub:
    return " - ";
  case DimOp::Kind::Mul:
    return " * ";
  case DimOp::Kind::FloorDiv:
    return " floordiv ";
  case DimOp::Kind::Min:
    return "min";
  case DimOp::Kind::Max:
    return "max";
  case DimOp::Kind::Const:
  case DimOp::Kind::Symbol:
    break;
  }
  return nullptr;
}

std::string lmopt::runtime::formatDimExpr(const Plan &plan,
                                          const DimExpr &expr) {
  // Each stack entry: text and whether it needs parentheses as an operand
  // of a product.
  std::vector<std::pair<std::string, bool>> stack;
  for (const DimOp &op : expr.ops) {
    if (op.kind == DimOp::Kind::Const) {
      stack.push_back({std::to_string(op.value), false});
      continue;
    }
    if (op.kind == DimOp::Kind::Symbol) {
      bool known = op.value >= 0 && uint64_t(op.value) < plan.symbols.size();
      stack.push_back({known ? plan.symbols[size_t(op.value)].name
                             : "?" + std::to_string(op.value),
                       false});
      continue;
    }
    const char *symbol = dimOpSymbol(op.kind);
    if (!symbol || stack.size() < 2)
      return "<malformed>";
    auto rhs = std::move(stack.back());
    stack.pop_back();
    auto lhs = std::move(stack.back());
    stack.pop_back();
    if (op.kind == DimOp::Kind::Min || op.kind == DimOp::Kind::Max) {
      stack.push_back(
          {std::string(symbol) + "(" + lhs.first + ", " + rhs.first + ")",
           false});
      continue;
    }
    bool product =
        op.kind == DimOp::Kind::Mul || op.kind == DimOp::Kind::FloorDiv;
    auto wrap = [&](const std::pair<std::string, bool> &side) {
      return product && side.second ? "(" + side.first + ")" : side.first;
    };
    stack.push_back({wrap(lhs) + symbol + wrap(rhs), !product});
  }
  return stack.size() == 1 ? stack.front().first : "<malformed>";
}

Status lmopt::runtime::evaluateDimExpr(const Plan &plan, const DimExpr &expr,
                                       const std::vector<int64_t> &symbols,
                                       int64_t &out) {
  auto fail = [&](const std::string &why) {
    return Status::error(StatusCode::InvalidArgument,
                         "dim expression '" + formatDimExpr(plan, expr) + "' " +
                             why);
  };
  std::vector<int64_t> stack;
  stack.reserve(expr.ops.size());
  for (const DimOp &op : expr.ops) {
    if (op.kind == DimOp::Kind::Const) {
      stack.push_back(op.value);
      continue;
    }
    if (op.kind == DimOp::Kind::Symbol) {
      if (op.value < 0 || uint64_t(op.value) >= symbols.size())
        return fail("refers to symbol " + std::to_string(op.value) + " of " +
                    std::to_string(symbols.size()));
      stack.push_back(symbols[size_t(op.value)]);
      continue;
    }
    if (stack.size() < 2)
      return fail("is malformed: an operation lacks its operands");
    int64_t rhs = stack.back();
    stack.pop_back();
    int64_t lhs = stack.back();
    int64_t value = 0;
    bool overflow = false;
    switch (op.kind) {
    case DimOp::Kind::Add:
      overflow = __builtin_add_overflow(lhs, rhs, &value);
      break;
    case DimOp::Kind::Sub:
      overflow = __builtin_sub_overflow(lhs, rhs, &value);
      break;
    case DimOp::Kind::Mul:
      overflow = __builtin_mul_overflow(lhs, rhs, &value);
      break;
    case DimOp::Kind::FloorDiv:
      if (rhs == 0)
        return fail("divides " + std::to_string(lhs) + " by zero");
      overflow = lhs == std::numeric_limits<int64_t>::min() && rhs == -1;
      if (!overflow) {
        value = lhs / rhs;
        if ((lhs % rhs != 0) && ((lhs < 0) != (rhs < 0)))
          --value;
      }
      break;
    case DimOp::Kind::Min:
      value = std::min(lhs, rhs);
      break;
    case DimOp::Kind::Max:
      value = std::max(lhs, rhs);
      break;
    default:
      return fail("has operation kind " + std::to_string(uint32_t(op.kind)));
    }
    if (overflow)
      return fail("overflows 64 bits with operands " + std::to_string(lhs) +
                  " and " + std::to_string(rhs));
    stack.back() = value;
  }
  if (stack.size() != 1)
    return fail("is malformed: it leaves " + std::to_string(stack.size()) +
                " values instead of one");
  out = stack.front();
  return Status::ok();
}

/// "input_ids.0 = 2, input_ids.1 = 7" for messages.
static std::string describeSymbols(const Plan &plan,
                                   const std::vector<int64_t> &values) {
  std::string text;
  for (size_t i = 0; i < plan.symbols.size() && i < values.size(); ++i)
    text += (i ? ", " : "") + plan.symbols[i].name + " = " +
            std::to_string(values[i]);
  return text;
}

Status lmopt::runtime::evaluatePlanShapes(
    const Plan &plan, const std::vector<std::vector<int64_t>> &inputDims,
    const std::vector<PlanState> &states,
    const std::vector<std::vector<int64_t>> &stateDims, PlanShapes &out) {
  auto invalid = [](const std::string &message) {
    return Status::error(StatusCode::InvalidArgument, message);
  };
  out.symbols.assign(plan.symbols.size(), 0);
  for (size_t i = 0; i < plan.symbols.size(); ++i) {
    const PlanSymbol &symbol = plan.symbols[i];
    bool fromState = symbol.source == PlanSymbol::Source::State;
    const std::vector<int64_t> &dims =
        fromState ? stateDims[symbol.index] : inputDims[symbol.index];
    if (symbol.dim >= dims.size())
      return invalid("state '" + states[symbol.index].name +
                     "' has no value to take " + symbol.name + " from");
    int64_t value = dims[symbol.dim];
    std::string source = fromState
                             ? "state '" + states[symbol.index].name + "'"
                             : "input '" + plan.inputs[symbol.index].name + "'";
    if (value > symbol.bound)
      return invalid(source + " dim " + std::to_string(symbol.dim) + " is " +
                     std::to_string(value) + ", beyond its bound " +
                     std::to_string(symbol.bound) + " (" + symbol.name +
                     " <= " + std::to_string(symbol.bound) +
                     "; recompile with a larger --max-shape)");
    out.symbols[i] = value;
  }
  std::vector<int64_t> values(plan.exprs.size(), 0);
  for (size_t i = 0; i < plan.exprs.size(); ++i)
    if (Status st =
            evaluateDimExpr(plan, plan.exprs[i], out.symbols, values[i]);
        !st)
      return invalid("with " + describeSymbols(plan, out.symbols) + ", " +
                     st.message());

  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const PlanTensor &t = plan.tensors[plan.inputs[i].tensor];
    for (size_t d = 0; d < t.dims.size(); ++d) {
      int64_t given = inputDims[i][d];
      bool symbolic = t.isSymbolic() && t.dimExprs[d] >= 0;
      int64_t want = symbolic ? values[size_t(t.dimExprs[d])] : t.dims[d];
      if (given == want)
        continue;
      std::string needed =
          symbolic ? formatDimExpr(plan, plan.exprs[size_t(t.dimExprs[d])]) +
                         " = " + std::to_string(want)
                   : std::to_string(want);
      return invalid("input '" + plan.inputs[i].name + "' dim " +
                     std::to_string(d) + " is " + std::to_string(given) +
                     "; the model needs " + needed);
    }
  }
  for (const PlanAssumption &a : plan.assumptions) {
    int64_t lhs = values[a.lhs], rhs = values[a.rhs];
    bool equal = a.kind == PlanAssumption::Kind::Equal;
    if (equal ? lhs == rhs : lhs <= rhs)
      continue;
    return invalid(
        "the inputs break an assumption the model was compiled "
        "with: " +
        formatDimExpr(plan, plan.exprs[a.lhs]) + (equal ? " == " : " <= ") +
        formatDimExpr(plan, plan.exprs[a.rhs]) + ", but " +
        std::to_string(lhs) + (equal ? " != " : " > ") + std::to_string(rhs) +
        " (" + describeSymbols(plan, out.symbols) + ")");
  }

  out.dims.resize(plan.tensors.size());
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlanTensor &t = plan.tensors[i];
    std::vector<int64_t> &dims = out.dims[i];
    dims = t.dims;
    if (!t.isSymbolic())
      continue;
    uint64_t elements = 1;
    bool fits = true;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (t.dimExprs[d] >= 0)
        dims[d] = values[size_t(t.dimExprs[d])];
      if (dims[d] < 0)
        return Status::error(StatusCode::InvalidFormat,
                             "tensor '" + t.name + "' dim " +
                                 std::to_string(d) + " is " +
                                 std::to_string(dims[d]) + " with " +
                                 describeSymbols(plan, out.symbols));
      if (dims[d] != 0 && elements > std::numeric_limits<uint64_t>::max() / 16 /
                                         uint64_t(dims[d]))
        fits = false;
      else
        elements *= uint64_t(dims[d]);
    }
    if (!fits || elements > t.elementCount())
      return Status::error(
          StatusCode::InvalidFormat,
          "tensor '" + t.name + "' would have dims " + formatDims(dims) +
              " with " + describeSymbols(plan, out.symbols) +
              ", more elements than the " + formatDims(t.dims) +
              " the plan reserved for it");
  }
  return Status::ok();
}
