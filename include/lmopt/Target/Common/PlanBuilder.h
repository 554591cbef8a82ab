//===- PlanBuilder.h - One function to an execution plan --------*- C++ -*-===//
//
// Partitions a function into plan steps for a target: the target classifies
// each op (TargetBackend::classify) and emits the library steps it runs
// through a PlanEmitter; the builder stores the constants in a weights
// buffer, groups maximal runs of the other ops into generated kernels
// outlined into their own module, adds the outputs, lets the target rewrite
// the plan, and plans the activation arena (docs/architecture.md, "Plan
// building"; docs/cpu-backend.md for the CPU's steps).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_PLANBUILDER_H
#define LMOPT_TARGET_COMMON_PLANBUILDER_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Target/Common/MemoryPlan.h"
#include "lmopt/Target/Common/WeightsBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt {

class TargetBackend;
struct TargetOptions;

/// How the plan builder treats an op (TargetBackend::classify).
enum class OpRole {
  /// Data only: stored as a weight when a step reads it, or read by its
  /// users' own lowering (a quantized linear repacks its weight).
  Constant,
  /// A result that shares its operand's bytes (a static reshape): no step.
  Alias,
  /// A result that library steps read in place in its source's buffer
  /// (TargetBackend::getViewSource): no step.
  View,
  /// A library step the target emits (TargetBackend::emitStep).
  LibraryStep,
  /// Part of a generated kernel.
  Kernel,
};

/// `op`'s value when it is a constant (ConstantLike with an elements
/// value); null otherwise.
ElementsAttr getConstantValue(Operation *op);

/// A ranked tensor type with static dims (or, in a symbolic plan, any
/// dims) and a runtime dtype.
bool isPlannable(Type type, bool symbolic = false);

/// The first of `op`'s result types (then, with `operands`, operand types)
/// that is not plannable, as the reason a target gives for not running it
/// ("result 0 has type ..., not a static tensor of a runtime dtype"); ""
/// when every one is.
std::string describeUnplannableType(Operation *op, bool symbolic,
                                    bool operands);

/// What the plan builder offers a target emitting the step of an op it
/// classified LibraryStep: tensors for values, weights for the step's own
/// constants, results and steps.
class PlanEmitter {
public:
  virtual ~PlanEmitter();

  /// The plan tensor holding `value`; a constant becomes a weight tensor
  /// the first time a step reads it.
  virtual FailureOr<uint32_t> getTensor(Value value) = 0;
  /// A weight tensor named `name` for a constant of the step's own (a
  /// repacked weight, its scales), stored once in the weights buffer.
  virtual FailureOr<uint32_t> addConstant(StringRef name, ElementsAttr value,
                                          Location loc) = 0;
  /// A new arena tensor named `name` that later steps read for `value`.
  virtual uint32_t addResult(Value value, std::string name) = 0;
  /// For a step that updates a state in place: when the function returns
  /// `value` as the new value of the state that `replaces` (a state
  /// argument) reads, and nothing but `value`'s op reads `replaces`, the
  /// state's tensor itself (no copy after the step; `*inPlace` set);
  /// otherwise addResult.
  virtual uint32_t addInPlaceStateResult(Value value, Value replaces,
                                         std::string name,
                                         bool *inPlace = nullptr) = 0;
  /// Appends a step with no operands, results or attributes yet.
  virtual ::lmopt::runtime::PlanStep &addStep(::lmopt::runtime::StepKind kind,
                                              std::string name) = 0;

  /// getTensor of each value, in order.
  FailureOr<std::vector<uint32_t>> getTensors(ValueRange values);
  /// A step of `kind` named after `op`'s node, reading `operands` (the op's,
  /// or the buffers its operands are views of) and writing `output` to a
  /// new arena tensor.
  FailureOr<::lmopt::runtime::PlanStep *>
  addLibraryStep(Operation *op, ValueRange operands, Value output,
                 ::lmopt::runtime::StepKind kind);

  static void addIntAttr(::lmopt::runtime::PlanStep &step, StringRef name,
                         int64_t value);
  static void addFloatAttr(::lmopt::runtime::PlanStep &step, StringRef name,
                           double value);
  static void addStringAttr(::lmopt::runtime::PlanStep &step, StringRef name,
                            StringRef value);
};

/// The attribute of a function argument that reads a state, and of a
/// result that gives a state its new value: the state's name
/// (::lmopt::runtime::PlanState). Such an argument is not an input of the
/// entry but a view of the state; such a result is not an output. A result
/// `lmopt.concat(<state argument>, new)` along one axis is an append to the
/// state in place.
inline constexpr const char *kStateAttrName = "lmopt.state";
inline constexpr const char *kStateWriteAttrName = "lmopt.state_write";

/// The attribute of an outlined kernel whose step writes results in place
/// of operands (the step's `in_place`): the arguments, operands and results
/// as out-params counted after the operands, that share a buffer at run
/// time. lmopt-annotate-kernel-args leaves them without `llvm.noalias`.
inline constexpr const char *kInPlaceArgsAttrName = "lmopt.in_place_args";

/// The number in `states` of the state argument `index` of `func` reads, or
/// nullopt when it reads none (or names no state of `states`).
std::optional<uint32_t>
getArgumentState(func::FuncOp func, unsigned index,
                 const std::vector<::lmopt::runtime::PlanState> &states);
/// The same for the state result `index` of `func` writes.
std::optional<uint32_t>
getResultState(func::FuncOp func, unsigned index,
               const std::vector<::lmopt::runtime::PlanState> &states);

struct PlanBuildOptions {
  /// Constants of at most this many elements (and splats) are cloned into
  /// the kernels that use them instead of being passed as weights.
  int64_t maxInlineConstantElements = 64;
  /// The program's states, which arguments and results name with
  /// kStateAttrName / kStateWriteAttrName.
  std::vector<::lmopt::runtime::PlanState> states;
  /// Prepended to the kernels' names ("k0"), so that the kernels of several
  /// entries can live in one module.
  std::string kernelPrefix;
  MemoryPlanOptions memory;
  /// Bounds of the dynamic input dims, by input name, one per dim (a
  /// static dim's entry must equal it). Every dynamic dim needs one; the
  /// plan then has symbolic dims (docs/cpu-backend.md, "Bounded dynamic
  /// shapes").
  std::map<std::string, std::vector<int64_t>> maxShapes;
};

/// What a target's plan rewrite did (TargetBackend::rewritePlan).
struct PlanRewriteCount {
  /// The key in lmopt-compile's JSON report ("fused_row_quantizations").
  std::string key;
  /// What lmopt-compile prints before the count when it is not zero.
  std::string description;
  int64_t count = 0;
};

/// One function's plan for a target: what a bundle with one entry point
/// holds.
struct TargetPlan {
  ::lmopt::runtime::Plan plan;
  /// The `weights` section: every constant a step reads, once, each at a
  /// multiple of 64 bytes. Empty when the plan was built into a shared
  /// WeightsBuilder, which then holds them.
  std::vector<uint8_t> weights;
  /// One public `func.func` per Kernel step, named by the step's `entry`
  /// attribute, in the input contract of TargetBackend::serializeKernels
  /// (ranked tensors in and out, lmopt and arith ops inside). Null when the
  /// plan has no Kernel step.
  OwningOpRef<ModuleOp> kernels;
  unsigned numKernels = 0;
  /// Per tensor, the tensor whose bytes it shares (itself if none).
  std::vector<uint32_t> aliasRoot;
  /// The target's plan rewrites, in the order it reports them.
  std::vector<PlanRewriteCount> rewrites;
  MemoryPlanStats memory;
};

/// What a bundle holds: its entry points' plans, sharing one weights buffer
/// and the states, and every entry's kernels in one module.
struct BundlePlan {
  std::vector<::lmopt::runtime::PlanState> states;
  /// In bundle order, each with its `plan.name`; their `weights` and
  /// `kernels` are moved to the fields below.
  std::vector<TargetPlan> entries;
  std::vector<uint8_t> weights;
  /// Every entry's kernels (distinct names); null when there are none.
  OwningOpRef<ModuleOp> kernels;
  unsigned numKernels = 0;
  /// For a training bundle, what the meta's "training" holds
  /// (TrainingEntries.h); empty otherwise.
  llvm::json::Object training;

  /// The program the plan section holds: one device (`device`, its kernels
  /// in the section `kernels` when there are any), the states and entries.
  /// A device other than "cpu" is device 1 after the host (the entries were
  /// placed on it, DevicePlacement.h), and holds the states.
  ::lmopt::runtime::Program getProgram(StringRef device) const;
};

/// Plans `func` (a single block ending in func.return) for `backend`, its
/// constants stored in `weights`, which may be shared with other functions
/// planned for the same bundle. Dynamic argument dims become plan symbols
/// bounded by `options.maxShapes`; every other dim must follow from them
/// (SymbolicShapes), with the equalities it assumed recorded as plan
/// assumptions. Ops the target cannot run are all reported as diagnostics
/// at their locations before failing.
FailureOr<TargetPlan> buildTargetPlan(func::FuncOp func,
                                      const TargetBackend &backend,
                                      const TargetOptions &targetOptions,
                                      const PlanBuildOptions &options,
                                      WeightsBuilder &weights);

/// As above, with a weights buffer of its own (TargetPlan::weights).
FailureOr<TargetPlan> buildTargetPlan(func::FuncOp func,
                                      const TargetBackend &backend,
                                      const TargetOptions &targetOptions,
                                      const PlanBuildOptions &options = {});

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_PLANBUILDER_H
