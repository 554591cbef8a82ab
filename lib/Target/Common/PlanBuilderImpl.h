//===- PlanBuilderImpl.h - The plan builder, shared by its files -*- C++ -*-===//
//
// Private to lib/Target/Common: PlanBuilder.cpp walks the function and
// outlines kernel groups; PlanStates.cpp holds what concerns session state
// (reading and writing states, in-place updates, state views).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_TARGET_COMMON_PLANBUILDERIMPL_H
#define LMOPT_LIB_TARGET_COMMON_PLANBUILDERIMPL_H

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/SymbolicShapes.h"
#include "lmopt/Target/Common/PlanBuilder.h"
#include "lmopt/Target/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace mlir::lmopt::detail {

namespace rt = ::lmopt::runtime;

class PlanBuilder : public PlanEmitter {
public:
  PlanBuilder(func::FuncOp func, const TargetBackend &backend,
              const PlanBuildOptions &options, WeightsBuilder &weights)
      : func(func), backend(backend), options(options), weights(weights),
        builder(func.getContext()) {}

  FailureOr<TargetPlan> build();

  FailureOr<uint32_t> getTensor(Value value) override;
  FailureOr<uint32_t> addConstant(StringRef name, ElementsAttr value,
                                  Location loc) override;
  uint32_t addResult(Value value, std::string name) override;
  uint32_t addInPlaceStateResult(Value value, Value replaces,
                                 std::string name,
                                 bool *inPlace = nullptr) override;
  rt::PlanStep &addStep(rt::StepKind kind, std::string name) override;

private:
  uint32_t addTensor(std::string name, Value value, rt::TensorStorage storage,
                     uint64_t offset, uint32_t aliasOf);
  bool isInlineConstant(Value value) const;
  LogicalResult classifyOps();
  void addInputs();

  LogicalResult emitAlias(Operation *op);
  /// Outlines the open kernel group, as two kernels when
  /// splitColumnSums() cuts it.
  LogicalResult flushGroup();
  /// Outlines `ops` (in block order) as one kernel step.
  LogicalResult outlineGroup(SmallVector<Operation *> ops,
                             llvm::SmallPtrSet<Operation *, 16> opSet);
  /// When `value` (a result of the kernel group `opSet`) is returned as a
  /// state's new value and computed from that state's argument by a chain
  /// of elementwise ops in the group, the state and the argument.
  std::optional<std::pair<uint32_t, Value>> findElementwiseStateUpdate(
      Value value, const llvm::SmallPtrSetImpl<Operation *> &opSet);
  LogicalResult emitOutputs(func::ReturnOp ret);

  /// The concats that append new rows to the state their first operand
  /// reads and that the function returns as that state's new value.
  void findStateAppends(func::ReturnOp ret);
  LogicalResult emitStateAppend(ConcatOp op, uint32_t state);
  /// Writes `value` into a new view of `state` with its dims (an append at
  /// the view's start); the view's tensor.
  FailureOr<uint32_t> writeState(Value value, uint32_t state, Location loc);
  /// The operands of the kernel group reading `inputs` that it reads only
  /// the dims of (lmopt.shape), as the step's `dims_only` list; fails,
  /// reported, when the group reads a state view's elements.
  FailureOr<std::string>
  getDimsOnlyOperands(ArrayRef<Value> inputs, ArrayRef<uint32_t> ids,
                      const llvm::SmallPtrSetImpl<Operation *> &ops);
  /// Every state view a step touches is one it may: a dense block, or what
  /// the step reads at the state's capacity (Plan.h,
  /// readsStateAtCapacity).
  LogicalResult checkStateViews();

  LogicalResult setUpSymbols();
  /// Fills the symbolic dims of `tensor`, the planned form of `value`.
  void setSymbolicDims(Value value, rt::PlanTensor &tensor);

  func::FuncOp func;
  const TargetBackend &backend;
  const PlanBuildOptions &options;
  WeightsBuilder &weights;
  OpBuilder builder;
  TargetPlan result;
  llvm::DenseMap<Value, uint32_t> tensors;
  llvm::DenseMap<Operation *, OpRole> roles;
  /// The kernel ops collected since the last non-kernel step.
  SmallVector<Operation *> group;
  llvm::SmallPtrSet<Operation *, 16> groupSet;
  /// findStateAppends's concats and the state each appends to.
  llvm::DenseMap<Operation *, uint32_t> stateAppends;
  /// Symbolic plans: the dims of every value, and whether a dim failed to
  /// follow from the inputs' (reported where it happened).
  std::optional<SymbolicShapes> shapes;
  bool symbolic = false;
  bool unresolvedDims = false;
};

} // namespace mlir::lmopt::detail

#endif // LMOPT_LIB_TARGET_COMMON_PLANBUILDERIMPL_H
