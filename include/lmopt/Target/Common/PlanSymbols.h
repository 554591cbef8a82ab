//===- PlanSymbols.h - Symbolic dims for a plan -----------------*- C++ -*-===//
//
// The parts of plan building that bounded dynamic shapes add: plan symbols
// for the dynamic input dims and their --max-shape bounds, plan expressions
// from the SymbolicShapes analysis, types made static where it proves a dim
// constant, and the equalities it assumed as plan assumptions
// (docs/cpu-backend.md, "Bounded dynamic shapes").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_PLANSYMBOLS_H
#define LMOPT_TARGET_COMMON_PLANSYMBOLS_H

#include "lmopt/Dialect/Lmopt/Transforms/SymbolicShapes.h"
#include "lmopt/Format/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt {

/// Adds a plan symbol for every dynamic dim of `main`'s arguments, bounded
/// by `maxShapes` (by input name, one entry per dim; a static dim's entry
/// must equal it), and fills `bounds` for the analysis. An argument that
/// reads a state (`lmopt.state`, PlanBuilder.h) gets state symbols: the
/// state's number in `states` and its dim; every other argument input
/// symbols numbered by the inputs alone. Every missing or bad bound, and
/// every name that is not an input, is reported before failing.
LogicalResult
addPlanSymbols(func::FuncOp main,
               const std::map<std::string, std::vector<int64_t>> &maxShapes,
               ::lmopt::runtime::Plan &plan, SymbolicShapeBounds &bounds,
               const std::vector<::lmopt::runtime::PlanState> &states = {});

/// The index in `plan.exprs` of `expr` as a postfix program, or nullopt when
/// it has a symbol that is not an input dim (or overflowed).
std::optional<uint32_t> addPlanExpr(::lmopt::runtime::Plan &plan,
                                    const SymbolicShapes &shapes,
                                    const SymExpr &expr);

/// Gives `tensor` (the planned form of `value`) an expression for each dim
/// that `value`'s type leaves dynamic, and its value at the bounds in
/// `dims`. False when a dim does not follow from the input dims; with
/// `report`, that is an error at the value's location.
bool setPlanTensorDims(::lmopt::runtime::Plan &plan,
                       const SymbolicShapes *shapes, Value value,
                       ::lmopt::runtime::PlanTensor &tensor, bool report);

/// Makes static each dim of `main`'s op results that the types leave
/// dynamic but `shapes` proves constant, so that generated kernels
/// broadcast it with a static map (a run-time 1 facing another dynamic dim
/// cannot broadcast in a generated kernel).
void refineStaticDims(func::FuncOp main, const SymbolicShapes &shapes);

/// The equalities `shapes` assumed, over dims the plan can express, as plan
/// assumptions (once each).
void addPlanAssumptions(::lmopt::runtime::Plan &plan,
                        const SymbolicShapes &shapes);

/// Removes the state symbols of states `plan` does not read (a view that
/// holds no element, as prefill's empty cache): such a symbol has no value
/// to take at run time, so each is replaced, in every expression, by the
/// expression an assumption equates it to (the batch of the new tokens).
/// Fails, reported at `func`, when no assumption does.
LogicalResult substituteUnreadStateSymbols(::lmopt::runtime::Plan &plan,
                                           func::FuncOp func);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_PLANSYMBOLS_H
