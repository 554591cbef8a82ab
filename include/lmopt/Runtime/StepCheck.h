//===- StepCheck.h - Checking a plan step for any device --------*- C++ -*-===//
//
// What every device's step builders share: reading a step's operands,
// results and attributes, wording messages ("bundle '<source>': <kind> step
// '<name>': <what is wrong>"), and the checks that hold for every kind on
// every device (state views, aliasing). A device's own checker derives from
// it and adds its context (the CPU's StepChecker, the GPU's CudaCheck).
// The checks of one step kind that every device shares are here too (gather,
// append) or beside it (AttentionCheck.h, MatMulCheck.h); a device adds
// only its own rules (the dtypes it runs, its kernels' limits).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_STEPCHECK_H
#define LMOPT_RUNTIME_STEPCHECK_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace lmopt::runtime {

/// "'name' (f32 [2, 3])".
std::string describe(const PlanTensor &t);

/// A step under construction: names it in messages and reads its tensors.
class StepCheck {
public:
  StepCheck(const Program &program, const Plan &plan, const std::string &source,
            const PlanStep &step)
      : program(program), plan(plan), source(source), step(step) {}

  Status error(const std::string &what,
               StatusCode code = StatusCode::InvalidFormat) const;
  /// Re-labels a status from a library step or an attribute lookup, which
  /// already names the step, with the bundle.
  Status withSource(const Status &st) const;

  const PlanTensor &operand(size_t i) const {
    return plan.tensors[step.operands[i]];
  }
  const PlanTensor &result(size_t i) const {
    return plan.tensors[step.results[i]];
  }

  /// `operands` lists the operands' roles ("input, weight, bias").
  Status expectCounts(size_t operandCount, const std::string &operands,
                      size_t resultCount) const;
  Status expectDType(const std::string &role, const PlanTensor &t,
                     DType dtype) const;
  Status expectDims(const std::string &role, const PlanTensor &t,
                    const std::vector<int64_t> &dims,
                    const std::string &why) const;
  Status expectRank(const std::string &role, const PlanTensor &t,
                    size_t rank) const;
  /// Refuses attributes outside `known`.
  Status expectAttrs(std::initializer_list<const char *> known) const;
  /// A 0/1 integer attribute; absent means 0.
  Status getFlag(const char *name, bool &out) const;
  /// getFlag for each (name, out), in order.
  Status
  getFlags(std::initializer_list<std::pair<const char *, bool *>> flags) const;
  Status getInt(const char *name, int64_t &out) const;

  /// A kernel step's attributes: `entry`, the kernel it calls, and the
  /// optional `dims_only`, a comma-separated list of its operand numbers
  /// (readsStateAtCapacity reads it). Also gives its tensors, operands then
  /// results, and the dims of theirs that are symbolic, in that order: the
  /// kernel's size arguments at this run's dims.
  Status checkKernelStep(std::string &entry, std::vector<uint32_t> &ids,
                         std::vector<int64_t> &sizes) const;

  /// Steps read and write state views as dense tensors, except where
  /// readsStateAtCapacity says they touch them at the state's capacity.
  Status checkStateViews() const;
  /// Results share no bytes with operands or each other; a linear step's
  /// residual (plain or quantized) may be exactly its output.
  Status checkAliasing() const;
  /// The step's 'in_place' pairs (result, operand): results written where
  /// the operand, the same state view, lies; refuses a malformed list or a
  /// pair that is not one state view. Empty without the attribute.
  Status getInPlacePairs(std::vector<std::pair<size_t, size_t>> &pairs) const;

  const Program &program;
  const Plan &plan;
  const std::string &source;
  const PlanStep &step;
};

/// A device's rule for the dtype of a step's first operand (`role`: "input",
/// "lhs"), which the step's other tensors must then share: the CPU runs f32,
/// a GPU f32, f16 or bf16.
using DTypeRule = Status (*)(const StepCheck &c, const std::string &role,
                             const PlanTensor &t);

/// A gather step (ONNX Gather; with `row_scales`, an int8 table whose rows
/// are dequantized by one f32 scale each).
struct GatherShape {
  int64_t axis = 0;
  bool rowScales = false;
};
/// Attributes, operand and result counts, dtypes and dims of a gather step.
Status checkGatherStep(const StepCheck &c, GatherShape &out);
/// Attributes, operand and result counts, dtypes, ranks and dims of a
/// gather_elements step; its `axis` on success.
Status checkGatherElementsStep(const StepCheck &c, int64_t &axis);
/// Attributes, operand and result counts, dtypes, ranks and dims of a
/// scatter_nd step; its `reduction` (0 to 4) on success.
Status checkScatterNDStep(const StepCheck &c, int64_t &reduction);
/// Operand and result counts, dtypes and dims of a gather_grad step; `rows`
/// (N) and `rowSize` (the product of D...) on success.
Status checkGatherGradStep(const StepCheck &c, int64_t &rows,
                           int64_t &rowSize);
/// Counts, dtypes, dims and attributes of an adamw step; the parameter's
/// element count and the hyper-parameters on success.
Status checkAdamWStep(const StepCheck &c, int64_t &count, double &beta1,
                      double &beta2, double &epsilon, double &weightDecay);
/// The product of `dims[begin, end)` (non-negative), false past int64, as
/// a gather's sizes need it.
bool dimsProduct(const std::vector<int64_t> &dims, size_t begin, size_t end,
                 int64_t &out);

/// An append step: `axis`, and a value that fits the last rows of the state
/// view it writes along it.
Status checkAppendStep(const StepCheck &c, int64_t &axis);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_STEPCHECK_H
