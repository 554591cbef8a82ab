//===- PlanShapes.h - Symbolic dims of a plan per run ----------*- C++ -*-===//
//
// A plan with symbolic dims names each dim as an expression over its
// symbols, the dynamic dims of its inputs and of the states it reads. These
// functions evaluate the expressions, print them, and give every tensor its
// dims for one run.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_PLANSHAPES_H
#define LMOPT_FORMAT_PLANSHAPES_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// Evaluates `expr` with `symbols[i]` the value of symbol i. Fails (with a
/// message naming the expression) on int64 overflow, division by zero or a
/// malformed program.
Status evaluateDimExpr(const Plan &plan, const DimExpr &expr,
                       const std::vector<int64_t> &symbols, int64_t &out);

/// `expr` in infix form over the symbols' names ("input_ids.1 * 12 + 3").
std::string formatDimExpr(const Plan &plan, const DimExpr &expr);

/// The dims of every plan tensor for one run.
struct PlanShapes {
  std::vector<int64_t> symbols;
  /// Per tensor; equal to PlanTensor::dims for static tensors.
  std::vector<std::vector<int64_t>> dims;
};

/// Binds the symbols of `plan` from the model inputs' dims (`inputDims[i]`
/// for plan input i, ranks already checked) and the dims of the states'
/// current values (`stateDims[s]` for state s of `states`; empty for a
/// state without a value), and evaluates every tensor's dims. Fails with
/// InvalidArgument naming the input or state, dim, value and bound when a
/// dim exceeds its bound or an input dim disagrees with the plan (a static
/// dim, or a dim given by an expression), or naming the assumption the
/// inputs break; with InvalidFormat when a tensor would outgrow the bytes
/// the plan gave it.
Status evaluatePlanShapes(const Plan &plan,
                          const std::vector<std::vector<int64_t>> &inputDims,
                          const std::vector<PlanState> &states,
                          const std::vector<std::vector<int64_t>> &stateDims,
                          PlanShapes &out);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_PLANSHAPES_H
