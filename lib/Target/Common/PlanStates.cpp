//===- PlanStates.cpp - Session state in a plan ---------------------------===//
//
// The states an entry reads (arguments marked lmopt.state) and writes
// (results marked lmopt.state_write): appends along an axis, writes of a
// new value, and updates in place, by a library step (adamw) or by a
// kernel that computes the state elementwise from its old value.
//
//===----------------------------------------------------------------------===//

#include "PlanBuilderImpl.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Target/Common/RuntimeTypes.h"

using namespace mlir;
using namespace mlir::lmopt;
using mlir::lmopt::detail::PlanBuilder;
namespace rt = ::lmopt::runtime;

static std::optional<uint32_t>
findState(StringAttr name, const std::vector<rt::PlanState> &states) {
  if (!name)
    return std::nullopt;
  for (size_t i = 0; i < states.size(); ++i)
    if (states[i].name == name.getValue())
      return uint32_t(i);
  return std::nullopt;
}

std::optional<uint32_t>
mlir::lmopt::getArgumentState(func::FuncOp func, unsigned index,
                              const std::vector<rt::PlanState> &states) {
  return findState(func.getArgAttrOfType<StringAttr>(index, kStateAttrName),
                   states);
}

std::optional<uint32_t>
mlir::lmopt::getResultState(func::FuncOp func, unsigned index,
                            const std::vector<rt::PlanState> &states) {
  return findState(
      func.getResultAttrOfType<StringAttr>(index, kStateWriteAttrName), states);
}

uint32_t PlanBuilder::addInPlaceStateResult(Value value, Value replaces,
                                            std::string name, bool *inPlace) {
  if (inPlace)
    *inPlace = false;
  auto arg = llvm::dyn_cast<BlockArgument>(replaces);
  Operation *writer = value.getDefiningOp();
  std::optional<uint32_t> readState =
      arg && arg.getOwner() == &func.getBody().front()
          ? getArgumentState(func, arg.getArgNumber(), options.states)
          : std::nullopt;
  if (!readState || !writer || !value.hasOneUse() ||
      !llvm::all_of(replaces.getUsers(),
                    [&](Operation *user) { return user == writer; }))
    return addResult(value, std::move(name));
  OpOperand &use = *value.getUses().begin();
  if (!isa<func::ReturnOp>(use.getOwner()) ||
      getResultState(func, use.getOperandNumber(), options.states) !=
          readState)
    return addResult(value, std::move(name));
  uint32_t id = addTensor(options.states[*readState].name, value,
                          rt::TensorStorage::State, *readState, ~0u);
  tensors[value] = id;
  if (inPlace)
    *inPlace = true;
  return id;
}

std::optional<std::pair<uint32_t, Value>>
PlanBuilder::findElementwiseStateUpdate(
    Value value, const llvm::SmallPtrSetImpl<Operation *> &opSet) {
  if (!value.hasOneUse())
    return std::nullopt;
  OpOperand &use = *value.getUses().begin();
  if (!isa<func::ReturnOp>(use.getOwner()))
    return std::nullopt;
  std::optional<uint32_t> state =
      getResultState(func, use.getOperandNumber(), options.states);
  if (!state)
    return std::nullopt;
  for (BlockArgument arg : func.getArguments()) {
    if (getArgumentState(func, arg.getArgNumber(), options.states) != state)
      continue;
    // A chain of elementwise ops of the state's own type, each the only
    // reader of the one before, from the state's value to `value`: element
    // i of the result reads element i of the state alone, so writing it in
    // place is safe.
    Value current = arg;
    while (current != value) {
      if (!current.hasOneUse() || current.getType() != arg.getType())
        return std::nullopt;
      Operation *user = *current.getUsers().begin();
      if (!opSet.contains(user) ||
          !isa<AddOp, SubOp, MulOp, WhereOp>(user) ||
          user->getNumResults() != 1 ||
          user->getResult(0).getType() != arg.getType())
        return std::nullopt;
      current = user->getResult(0);
    }
    return std::make_pair(*state, Value(arg));
  }
  return std::nullopt;
}

void PlanBuilder::findStateAppends(func::ReturnOp ret) {
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    std::optional<uint32_t> state =
        getResultState(func, unsigned(index), options.states);
    auto concat = value.getDefiningOp<ConcatOp>();
    if (!state || !concat || concat.getInputs().size() != 2)
      continue;
    auto arg = llvm::dyn_cast<BlockArgument>(concat.getInputs()[0]);
    if (arg && arg.getOwner() == &func.getBody().front() &&
        getArgumentState(func, arg.getArgNumber(), options.states) == state)
      stateAppends[concat] = *state;
  }
}

LogicalResult PlanBuilder::emitStateAppend(ConcatOp op, uint32_t state) {
  if (failed(flushGroup()))
    return failure();
  FailureOr<uint32_t> value = getTensor(op.getInputs()[1]);
  if (failed(value))
    return failure();
  uint32_t view = addTensor(options.states[state].name, op.getOutput(),
                            rt::TensorStorage::State, state, ~0u);
  tensors[op.getOutput()] = view;
  rt::PlanStep &step =
      result.plan.addStep(rt::StepKind::Append, describeNode(op.getLoc()));
  step.operands = {*value};
  step.results = {view};
  int64_t axis = op.getAxis();
  if (axis < 0)
    axis += llvm::cast<RankedTensorType>(op.getType()).getRank();
  addIntAttr(step, "axis", axis);
  return success();
}

FailureOr<uint32_t> PlanBuilder::writeState(Value value, uint32_t state,
                                            Location loc) {
  FailureOr<uint32_t> source = getTensor(value);
  if (failed(source))
    return failure();
  const rt::PlanState &target = options.states[state];
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (getRuntimeDType(type.getElementType()) != target.dtype ||
      type.getRank() != int64_t(target.dims.size()))
    return emitError(loc) << "the value returned for state '" << target.name
                          << "' has type " << type << ", not "
                          << rt::dtypeName(target.dtype) << " of rank "
                          << target.dims.size();
  uint32_t view =
      addTensor(target.name, value, rt::TensorStorage::State, state, ~0u);
  // An append at the view's start writes it whole, in any layout.
  rt::PlanStep &step = result.plan.addStep(rt::StepKind::Append, target.name);
  step.operands = {*source};
  step.results = {view};
  addIntAttr(step, "axis", 0);
  return view;
}

LogicalResult PlanBuilder::emitOutputs(func::ReturnOp ret) {
  llvm::SmallDenseSet<uint32_t> used;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    if (std::optional<uint32_t> state =
            getResultState(func, unsigned(index), options.states)) {
      FailureOr<uint32_t> id = getTensor(value);
      if (failed(id))
        return failure();
      const rt::PlanTensor &t = result.plan.tensors[*id];
      if (t.storage != rt::TensorStorage::State || t.offset != *state)
        id = writeState(value, *state, ret.getLoc());
      if (failed(id))
        return failure();
      result.plan.stateWrites.push_back({*state, *id});
      continue;
    }
    std::string name = getGraphOutputName(func, index);
    FailureOr<uint32_t> id = getTensor(value);
    if (failed(id))
      return failure();
    uint32_t tensor = *id;
    // Each output owns an arena tensor the caller can read after the run.
    if (result.plan.tensors[tensor].storage != rt::TensorStorage::Arena ||
        used.contains(tensor)) {
      uint32_t copy = addTensor(name, value, rt::TensorStorage::Arena, 0, ~0u);
      rt::PlanStep &step = result.plan.addStep(rt::StepKind::Copy, name);
      step.operands = {tensor};
      step.results = {copy};
      tensor = copy;
    }
    used.insert(tensor);
    result.plan.outputs.push_back({name, tensor});
  }
  return success();
}

LogicalResult PlanBuilder::checkStateViews() {
  const rt::Plan &plan = result.plan;
  for (const rt::PlanStep &step : plan.steps)
    for (const auto *ids : {&step.operands, &step.results})
      for (size_t i = 0; i < ids->size(); ++i) {
        const rt::PlanTensor &t = plan.tensors[(*ids)[i]];
        if (t.storage != rt::TensorStorage::State ||
            rt::readsStateAtCapacity(step, ids == &step.results, i))
          continue;
        // Dense whatever the run's dims: only the first dim may vary.
        const rt::PlanState &state = options.states[size_t(t.offset)];
        bool dense = true;
        for (size_t d = 1; d < t.dims.size(); ++d)
          dense &= t.dims[d] == state.dims[d] &&
                   (!t.isSymbolic() || t.dimExprs[d] < 0);
        if (!dense)
          return func.emitError()
                 << rt::stepKindName(step.kind) << " step '" << step.name
                 << "' reads state '" << state.name
                 << "' as a dense tensor, but its view "
                 << rt::formatDims(t.dims) << " of the state's "
                 << rt::formatDims(state.dims)
                 << " is not one dense block; only attention reads a state "
                    "at its capacity";
      }
  return success();
}
