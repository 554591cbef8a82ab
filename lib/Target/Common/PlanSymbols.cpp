//===- PlanSymbols.cpp - Symbolic dims for a plan -------------------------===//
//
// Symbols from --max-shape, expressions from SymbolicShapes, static types
// where the analysis proves them, and the assumptions it made
// (docs/cpu-backend.md, "Bounded dynamic shapes").
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/Common/PlanSymbols.h"
#include "lmopt/Format/PlanShapes.h"
#include "lmopt/Target/Common/PlanBuilder.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include <set>

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

std::optional<uint32_t> mlir::lmopt::addPlanExpr(rt::Plan &plan,
                                                 const SymbolicShapes &shapes,
                                                 const SymExpr &expr) {
  if (expr.hasOverflowed())
    return std::nullopt;
  using Op = rt::DimOp::Kind;
  rt::DimExpr planExpr;
  bool first = true;
  for (const auto &[monomial, coefficient] : expr.getTerms()) {
    bool started = false;
    if (coefficient != 1 || monomial.empty()) {
      planExpr.ops.push_back({Op::Const, coefficient});
      started = true;
    }
    for (auto [symbol, exponent] : monomial) {
      if (symbol >= shapes.getNumInputSymbols())
        return std::nullopt;
      for (unsigned i = 0; i < exponent; ++i) {
        planExpr.ops.push_back({Op::Symbol, int64_t(symbol)});
        if (started)
          planExpr.ops.push_back({Op::Mul, 0});
        started = true;
      }
    }
    if (!first)
      planExpr.ops.push_back({Op::Add, 0});
    first = false;
  }
  if (planExpr.ops.empty())
    planExpr.ops.push_back({Op::Const, 0});
  return plan.addExpr(std::move(planExpr));
}

bool mlir::lmopt::setPlanTensorDims(rt::Plan &plan,
                                    const SymbolicShapes *shapes, Value value,
                                    rt::PlanTensor &tensor, bool report) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  std::optional<ArrayRef<SymExpr>> dims =
      shapes ? shapes->getDims(value) : std::nullopt;
  std::vector<int64_t> bounds;
  for (const rt::PlanSymbol &symbol : plan.symbols)
    bounds.push_back(symbol.bound);
  tensor.dimExprs.assign(tensor.dims.size(), -1);
  bool resolved = true;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    // A dim the type leaves dynamic stays an expression (a constant one
    // too), so that kernels get its size as their types say.
    std::optional<uint32_t> expr = dims && size_t(d) < dims->size()
                                       ? addPlanExpr(plan, *shapes, (*dims)[d])
                                       : std::nullopt;
    int64_t atBounds = 0;
    if (expr && !rt::evaluateDimExpr(plan, plan.exprs[*expr], bounds, atBounds))
      expr.reset();
    if (!expr || atBounds < 0) {
      if (report) {
        std::string text = dims && size_t(d) < dims->size()
                               ? (*dims)[d].print(shapes->getNames())
                               : "?";
        emitError(value.getLoc())
            << "dim " << d << " of '" << tensor.name << "' (" << text
            << ") does not follow from the input dims and their bounds; "
               "pin it with --input-shape or narrow --max-shape";
      }
      report = false;
      resolved = false;
      tensor.dims[d] = 0;
      continue;
    }
    tensor.dimExprs[d] = int32_t(*expr);
    tensor.dims[d] = atBounds;
  }
  return resolved;
}

LogicalResult mlir::lmopt::addPlanSymbols(
    func::FuncOp main,
    const std::map<std::string, std::vector<int64_t>> &maxShapes,
    rt::Plan &plan, SymbolicShapeBounds &bounds,
    const std::vector<rt::PlanState> &states) {
  auto nameOf = [&](BlockArgument arg) {
    return getGraphInputName(main, arg.getArgNumber());
  };
  std::set<std::string> known;
  bool ok = true;
  uint32_t inputNumber = 0;
  for (BlockArgument arg : main.getArguments()) {
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    std::optional<uint32_t> state =
        getArgumentState(main, arg.getArgNumber(), states);
    rt::PlanSymbol::Source source =
        state ? rt::PlanSymbol::Source::State : rt::PlanSymbol::Source::Input;
    uint32_t index = state ? *state : inputNumber++;
    if (!type)
      continue;
    std::string name = nameOf(arg);
    known.insert(name);
    auto given = maxShapes.find(name);
    if (given != maxShapes.end() &&
        given->second.size() != size_t(type.getRank())) {
      emitError(arg.getLoc()) << "--max-shape for input '" << name << "' has "
                              << given->second.size()
                              << " dims; the input has rank " << type.getRank();
      ok = false;
      continue;
    }
    for (int64_t d = 0; d < type.getRank(); ++d) {
      bool hasBound = given != maxShapes.end();
      if (!type.isDynamicDim(d)) {
        if (hasBound && given->second[d] != type.getDimSize(d)) {
          emitError(arg.getLoc())
              << "--max-shape for input '" << name << "' gives dim " << d
              << " as " << given->second[d] << ", but the model fixes it at "
              << type.getDimSize(d);
          ok = false;
        }
        continue;
      }
      std::string symbolName = name + "." + std::to_string(d);
      if (!hasBound) {
        emitError(arg.getLoc())
            << "input '" << name << "' dim " << d
            << " is dynamic and has no bound; give one with --max-shape "
            << name << ":<dims> (or pin it with --input-shape)";
        ok = false;
        continue;
      }
      if (given->second[d] < 1) {
        emitError(arg.getLoc())
            << "--max-shape for input '" << name << "' gives dim " << d
            << " the bound " << given->second[d] << "; bounds are >= 1";
        ok = false;
        continue;
      }
      plan.symbols.push_back(
          {symbolName, index, uint32_t(d), given->second[d], source});
      bounds.bounds.push_back(given->second[d]);
    }
  }
  for (const auto &[name, dims] : maxShapes)
    if (!known.count(name)) {
      std::string inputs;
      for (const std::string &input : known)
        inputs += (inputs.empty() ? "'" : ", '") + input + "'";
      emitError(main.getLoc())
          << "--max-shape names '" << name
          << "', which is not a model input (inputs: " << inputs << ")";
      ok = false;
    }
  return success(ok);
}

void mlir::lmopt::refineStaticDims(func::FuncOp main,
                                   const SymbolicShapes &shapes) {
  for (Operation &op : main.getBody().front().without_terminator())
    for (Value value : op.getResults()) {
      auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
      std::optional<ArrayRef<SymExpr>> dims = shapes.getDims(value);
      if (!type || type.hasStaticShape() || !dims ||
          dims->size() != size_t(type.getRank()))
        continue;
      SmallVector<int64_t> shape(type.getShape());
      for (auto [size, dim] : llvm::zip_equal(shape, *dims))
        if (std::optional<int64_t> constant = dim.getConstant();
            ShapedType::isDynamic(size) && constant && *constant >= 0)
          size = *constant;
      value.setType(type.clone(shape));
    }
}

void mlir::lmopt::addPlanAssumptions(rt::Plan &plan,
                                     const SymbolicShapes &shapes) {
  for (const SymbolicAssumption &assumption : shapes.getAssumptions()) {
    std::optional<uint32_t> lhs = addPlanExpr(plan, shapes, assumption.lhs);
    std::optional<uint32_t> rhs = addPlanExpr(plan, shapes, assumption.rhs);
    // About dims no tensor of the plan has (they would have failed there).
    if (!lhs || !rhs || *lhs == *rhs ||
        llvm::any_of(plan.assumptions, [&](const rt::PlanAssumption &known) {
          return known.lhs == *lhs && known.rhs == *rhs;
        }))
      continue;
    plan.assumptions.push_back({rt::PlanAssumption::Kind::Equal, *lhs, *rhs});
  }
}

/// `ops` with symbol `index` replaced by `replacement` and later symbols
/// renumbered down by one.
static std::vector<rt::DimOp>
substitute(const std::vector<rt::DimOp> &ops, int64_t index,
           const std::vector<rt::DimOp> &replacement) {
  std::vector<rt::DimOp> out;
  for (const rt::DimOp &op : ops) {
    if (op.kind != rt::DimOp::Kind::Symbol || op.value < index) {
      out.push_back(op);
      continue;
    }
    if (op.value > index) {
      out.push_back({rt::DimOp::Kind::Symbol, op.value - 1});
      continue;
    }
    out.insert(out.end(), replacement.begin(), replacement.end());
  }
  return out;
}

static bool mentions(const std::vector<rt::DimOp> &ops, int64_t index) {
  return llvm::any_of(ops, [&](const rt::DimOp &op) {
    return op.kind == rt::DimOp::Kind::Symbol && op.value == index;
  });
}

LogicalResult mlir::lmopt::substituteUnreadStateSymbols(rt::Plan &plan,
                                                        func::FuncOp func) {
  auto isRead = [&](uint32_t state) {
    return llvm::any_of(plan.stateReads, [&](const rt::PlanStateUse &use) {
      return use.state == state;
    });
  };
  for (int64_t k = int64_t(plan.symbols.size()) - 1; k >= 0; --k) {
    const rt::PlanSymbol &symbol = plan.symbols[size_t(k)];
    if (symbol.source != rt::PlanSymbol::Source::State || isRead(symbol.index))
      continue;
    std::vector<rt::DimOp> alone = {{rt::DimOp::Kind::Symbol, k}};
    const std::vector<rt::DimOp> *replacement = nullptr;
    for (const rt::PlanAssumption &a : plan.assumptions) {
      if (a.kind != rt::PlanAssumption::Kind::Equal)
        continue;
      const std::vector<rt::DimOp> &lhs = plan.exprs[a.lhs].ops,
                                   &rhs = plan.exprs[a.rhs].ops;
      if (lhs == alone && !mentions(rhs, k))
        replacement = &rhs;
      else if (rhs == alone && !mentions(lhs, k))
        replacement = &lhs;
      if (replacement)
        break;
    }
    if (!replacement)
      return func.emitError("'")
             << symbol.name << "' is a dim of state view with no element, "
             << "which no other dim of @" << func.getSymName()
             << " determines; the entry has no value to give it";
    std::vector<rt::DimOp> by = substitute(*replacement, k, {});
    for (rt::DimExpr &expr : plan.exprs)
      expr.ops = substitute(expr.ops, k, by);
    plan.symbols.erase(plan.symbols.begin() + k);
    llvm::erase_if(plan.assumptions, [&](const rt::PlanAssumption &a) {
      return plan.exprs[a.lhs].ops == plan.exprs[a.rhs].ops;
    });
  }
  return success();
}
