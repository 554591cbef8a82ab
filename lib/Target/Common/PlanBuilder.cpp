//===- PlanBuilder.cpp - One function to an execution plan ----------------===//
//
// One pass over the function in block order. Each op plays the role its
// target gives it: a constant (a weight, materialized when a step reads
// it), an alias (a static reshape: no step, the result names its operand's
// bytes), a library step the target emits, a view a library step reads in
// place (no step), or part of a generated kernel. Consecutive kernel ops are
// collected into a group that is outlined when the next non-kernel op needs
// its results, so a kernel reads its inputs once and writes only what later
// steps or the outputs use.
//
//===----------------------------------------------------------------------===//

#include "PlanBuilderImpl.h"
#include "lmopt/Format/PlanShapes.h"
#include "lmopt/Target/Common/PlanSymbols.h"
#include "lmopt/Target/Common/RuntimeTypes.h"
#include "lmopt/Target/TargetBackend.h"

#include "lmopt/Conversion/LmoptToLinalg/LmoptToLinalg.h"
#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/SymbolicShapes.h"
#include "lmopt/Support/FusionReport.h"
#include "lmopt/Support/ResourceBlob.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;
using mlir::lmopt::detail::PlanBuilder;

//===----------------------------------------------------------------------===//
// Helpers for targets
//===----------------------------------------------------------------------===//

ElementsAttr mlir::lmopt::getConstantValue(Operation *op) {
  if (!op || !op->hasTrait<OpTrait::ConstantLike>())
    return nullptr;
  Attribute value;
  if (!matchPattern(op, m_Constant(&value)))
    return nullptr;
  return llvm::dyn_cast<ElementsAttr>(value);
}

bool mlir::lmopt::isPlannable(Type type, bool symbolic) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  return tensor && (symbolic || tensor.hasStaticShape()) &&
         getRuntimeDType(tensor.getElementType()).has_value();
}

std::string mlir::lmopt::describeUnplannableType(Operation *op, bool symbolic,
                                                 bool operands) {
  auto describe = [&](TypeRange types, StringRef what) -> std::string {
    for (auto [index, type] : llvm::enumerate(types)) {
      if (isPlannable(type, symbolic))
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << what << " " << index << " has type " << type
         << (symbolic ? ", not a tensor of a runtime dtype"
                      : ", not a static tensor of a runtime dtype");
      return text;
    }
    return "";
  };
  std::string why = describe(op->getResultTypes(), "result");
  if (why.empty() && operands)
    why = describe(op->getOperandTypes(), "operand");
  return why;
}

PlanEmitter::~PlanEmitter() = default;

/// A new attribute `name` of `kind` at the end of `step`'s.
static rt::PlanAttr &appendAttr(rt::PlanStep &step, StringRef name,
                                rt::PlanAttr::Kind kind) {
  rt::PlanAttr &attr = step.attrs.emplace_back();
  attr.name = name.str();
  attr.kind = kind;
  return attr;
}

void PlanEmitter::addIntAttr(rt::PlanStep &step, StringRef name,
                             int64_t value) {
  appendAttr(step, name, rt::PlanAttr::Kind::Int).intValue = value;
}

void PlanEmitter::addFloatAttr(rt::PlanStep &step, StringRef name,
                               double value) {
  appendAttr(step, name, rt::PlanAttr::Kind::Float).floatValue = value;
}

void PlanEmitter::addStringAttr(rt::PlanStep &step, StringRef name,
                                StringRef value) {
  appendAttr(step, name, rt::PlanAttr::Kind::String).stringValue = value.str();
}

FailureOr<std::vector<uint32_t>> PlanEmitter::getTensors(ValueRange values) {
  std::vector<uint32_t> ids;
  for (Value value : values) {
    FailureOr<uint32_t> id = getTensor(value);
    if (failed(id))
      return failure();
    ids.push_back(*id);
  }
  return ids;
}

FailureOr<rt::PlanStep *> PlanEmitter::addLibraryStep(Operation *op,
                                                      ValueRange operandValues,
                                                      Value output,
                                                      rt::StepKind kind) {
  FailureOr<std::vector<uint32_t>> operands = getTensors(operandValues);
  if (failed(operands))
    return failure();
  std::string name = describeNode(op->getLoc());
  uint32_t outputId = addResult(output, name);
  rt::PlanStep &step = addStep(kind, name);
  step.operands = std::move(*operands);
  step.results = {outputId};
  return &step;
}

//===----------------------------------------------------------------------===//
// PlanBuilder
//===----------------------------------------------------------------------===//


static std::string valueName(Value value) {
  std::string name = describeNode(value.getLoc());
  if (auto result = llvm::dyn_cast<OpResult>(value))
    if (result.getOwner()->getNumResults() > 1)
      name += ":" + std::to_string(result.getResultNumber());
  return name;
}

uint32_t PlanBuilder::addTensor(std::string name, Value value,
                                rt::TensorStorage storage, uint64_t offset,
                                uint32_t aliasOf) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  rt::PlanTensor tensor;
  tensor.name = std::move(name);
  tensor.dtype = *getRuntimeDType(type.getElementType());
  tensor.dims.assign(type.getShape().begin(), type.getShape().end());
  tensor.storage = storage;
  tensor.offset = offset;
  if (!type.hasStaticShape())
    setSymbolicDims(value, tensor);
  uint32_t id = result.plan.addTensor(std::move(tensor));
  result.aliasRoot.push_back(aliasOf == ~0u ? id : aliasOf);
  return id;
}

LogicalResult PlanBuilder::setUpSymbols() {
  SymbolicShapeBounds bounds;
  if (failed(addPlanSymbols(func, options.maxShapes, result.plan, bounds,
                            options.states)))
    return failure();
  symbolic = !result.plan.symbols.empty();
  if (symbolic)
    shapes.emplace(func, bounds);
  return success();
}

void PlanBuilder::setSymbolicDims(Value value, rt::PlanTensor &tensor) {
  // The first unresolved dim is reported: the dims computed from it follow.
  if (!setPlanTensorDims(result.plan, shapes ? &*shapes : nullptr, value,
                         tensor, /*report=*/!unresolvedDims))
    unresolvedDims = true;
}

FailureOr<uint32_t> PlanBuilder::getTensor(Value value) {
  auto known = tensors.find(value);
  if (known != tensors.end())
    return known->second;
  Operation *def = value.getDefiningOp();
  ElementsAttr attr = getConstantValue(def);
  assert(attr && "values are planned before their uses");
  if (!isPlannable(value.getType()))
    return def->emitError("constant of type ")
           << value.getType()
           << " cannot be stored in a bundle: not a static tensor of a "
              "runtime dtype";
  std::string name = describeNode(def->getLoc());
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attr))
    name = resource.getRawHandle().getKey().str();
  FailureOr<uint64_t> offset = weights.add(attr, def->getLoc());
  if (failed(offset))
    return failure();
  uint32_t id = addTensor(name, value, rt::TensorStorage::Weight, *offset, ~0u);
  tensors[value] = id;
  return id;
}

FailureOr<uint32_t> PlanBuilder::addConstant(StringRef name, ElementsAttr value,
                                             Location loc) {
  FailureOr<uint64_t> offset = weights.add(value, loc);
  if (failed(offset))
    return failure();
  rt::PlanTensor tensor;
  tensor.name = name.str();
  auto type = llvm::cast<ShapedType>(value.getType());
  tensor.dtype = *getRuntimeDType(type.getElementType());
  tensor.dims.assign(type.getShape().begin(), type.getShape().end());
  tensor.storage = rt::TensorStorage::Weight;
  tensor.offset = *offset;
  uint32_t id = result.plan.addTensor(std::move(tensor));
  result.aliasRoot.push_back(id); // its own bytes
  return id;
}

uint32_t PlanBuilder::addResult(Value value, std::string name) {
  uint32_t id =
      addTensor(std::move(name), value, rt::TensorStorage::Arena, 0, ~0u);
  tensors[value] = id;
  return id;
}

rt::PlanStep &PlanBuilder::addStep(rt::StepKind kind, std::string name) {
  return result.plan.addStep(kind, std::move(name));
}

bool PlanBuilder::isInlineConstant(Value value) const {
  ElementsAttr attr = getConstantValue(value.getDefiningOp());
  if (!attr)
    return false;
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
      dense && dense.isSplat())
    return true;
  return attr.getNumElements() <= options.maxInlineConstantElements;
}

LogicalResult PlanBuilder::emitAlias(Operation *op) {
  Value input = op->getOperand(0);
  Value output = op->getResult(0);
  // A result of the open kernel group must be written before it is aliased.
  if (Operation *def = input.getDefiningOp(); def && groupSet.contains(def))
    if (failed(flushGroup()))
      return failure();
  std::string name = describeNode(op->getLoc());
  // Sub-byte integers (i4 weights) have no runtime dtype of their own: the
  // constant is stored one value per byte under its quantized type.
  if (ElementsAttr attr = getConstantValue(input.getDefiningOp());
      attr && isa<quant::StorageCastOp>(op) && !isPlannable(input.getType())) {
    FailureOr<uint64_t> offset = weights.add(attr, op->getLoc());
    if (failed(offset))
      return failure();
    tensors[output] =
        addTensor(name, output, rt::TensorStorage::Weight, *offset, ~0u);
    return success();
  }
  FailureOr<uint32_t> source = getTensor(input);
  if (failed(source))
    return failure();
  const rt::PlanTensor &from = result.plan.tensors[*source];
  switch (from.storage) {
  case rt::TensorStorage::Weight:
    tensors[output] =
        addTensor(name, output, rt::TensorStorage::Weight, from.offset, ~0u);
    return success();
  case rt::TensorStorage::Arena:
    tensors[output] = addTensor(name, output, rt::TensorStorage::Arena, 0,
                                result.aliasRoot[*source]);
    return success();
  case rt::TensorStorage::Input: {
    // The plan has one tensor per model input, so the reshaped input is a
    // copy in the arena.
    uint32_t copy = addTensor(name, output, rt::TensorStorage::Arena, 0, ~0u);
    rt::PlanStep &step = result.plan.addStep(rt::StepKind::Copy, name);
    step.operands = {*source};
    step.results = {copy};
    tensors[output] = copy;
    return success();
  }
  }
  llvm_unreachable("unknown tensor storage");
}

/// The reduction `op` makes, if it is one: a row reduction reduces the last
/// dim (a mean per row, or a normalization or softmax, which compute one);
/// a column reduction keeps the last dim and reduces some outer one (a sum
/// over tokens: a bias or layer-norm parameter gradient).
namespace {
enum class ReductionKind { None, Row, Column };
} // namespace

static ReductionKind getReductionKind(Operation *op) {
  if (isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, SkipLayerNormOp, RmsNormOp>(op))
    return ReductionKind::Row;
  if (!isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op))
    return ReductionKind::None;
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  if (!type || !axes || type.getRank() == 0)
    return ReductionKind::None;
  int64_t rank = type.getRank();
  if (axes.empty())
    return ReductionKind::Row; // every dim, the last included
  for (int64_t axis : axes.asArrayRef())
    if (axis == rank - 1 || axis == -1)
      return ReductionKind::Row;
  return ReductionKind::Column;
}

/// The ops of a kernel group to outline as a second kernel, after the rest:
/// its column reductions, when one of them reads (through the group) a row
/// reduction, with the ops only they read and every op that reads them.
/// Empty when the group stays whole.
///
/// Such a group is a layer norm's backward with its parameter gradients:
/// the input gradient is a loop over rows, the weight gradient a sum over
/// rows of `dy * x_hat`, and both read `x_hat` and the row statistics. In
/// one kernel the shared values are computed whole before either loop (a
/// loop over columns cannot compute statistics over rows), and work
/// outside the loops keeps the kernel on one thread. Cut, the first kernel
/// is one row loop that also writes the values the sums read, and the
/// second one loop per sum over blocks of columns; both split between
/// threads.
static SmallVector<Operation *> splitColumnSums(ArrayRef<Operation *> ops) {
  // Which ops read a row reduction of the group, through the group.
  llvm::SmallPtrSet<Operation *, 16> afterRow;
  bool columnAfterRow = false;
  for (Operation *op : ops) {
    ReductionKind kind = getReductionKind(op);
    bool readsRow = llvm::any_of(op->getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && afterRow.contains(def);
    });
    // A row reduction's own result counts: what reads it is after it.
    if (readsRow || kind == ReductionKind::Row)
      afterRow.insert(op);
    columnAfterRow |= readsRow && kind == ReductionKind::Column;
  }
  if (!columnAfterRow)
    return {};
  llvm::SmallPtrSet<Operation *, 16> second;
  for (Operation *op : ops)
    if (getReductionKind(op) == ReductionKind::Column)
      second.insert(op);
  for (bool changed = true; changed;) {
    changed = false;
    // Block order: an op's operands come before it, its users after.
    for (Operation *op : ops) {
      if (second.contains(op))
        continue;
      bool readsSecond = llvm::any_of(op->getOperands(), [&](Value operand) {
        Operation *def = operand.getDefiningOp();
        return def && second.contains(def);
      });
      // Only read by the second kernel, and no row reduction (which would
      // bring the problem along).
      bool onlyForSecond =
          getReductionKind(op) != ReductionKind::Row && !op->use_empty() &&
          llvm::all_of(op->getUsers(),
                       [&](Operation *user) { return second.contains(user); });
      if (readsSecond || onlyForSecond) {
        second.insert(op);
        changed = true;
      }
    }
  }
  if (second.size() == ops.size())
    return {};
  SmallVector<Operation *> result;
  for (Operation *op : ops)
    if (second.contains(op))
      result.push_back(op);
  return result;
}

LogicalResult PlanBuilder::flushGroup() {
  if (group.empty())
    return success();
  SmallVector<Operation *> ops = std::move(group);
  llvm::SmallPtrSet<Operation *, 16> opSet = std::move(groupSet);
  group.clear();
  groupSet.clear();
  SmallVector<Operation *> second = splitColumnSums(ops);
  if (second.empty())
    return outlineGroup(std::move(ops), std::move(opSet));
  llvm::SmallPtrSet<Operation *, 16> secondSet(second.begin(), second.end());
  SmallVector<Operation *> first;
  llvm::SmallPtrSet<Operation *, 16> firstSet;
  for (Operation *op : ops)
    if (!secondSet.contains(op)) {
      first.push_back(op);
      firstSet.insert(op);
    }
  if (failed(outlineGroup(std::move(first), std::move(firstSet))))
    return failure();
  return outlineGroup(std::move(second), std::move(secondSet));
}

LogicalResult
PlanBuilder::outlineGroup(SmallVector<Operation *> ops,
                          llvm::SmallPtrSet<Operation *, 16> opSet) {

  // Operands: values from outside the group, in order of first use; small
  // constants are cloned instead. Results: values read after the group.
  llvm::SetVector<Value> inputs, inlined, outputs;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && opSet.contains(def))
        continue;
      if (isInlineConstant(operand))
        inlined.insert(operand);
      else
        inputs.insert(operand);
    }
  // Library steps read a view in its source's buffer, which the group
  // writes should it compute it; the view itself is written only for a
  // later group that reads it (its dims, say).
  for (Operation *op : ops)
    for (Value value : op->getResults()) {
      Value viewSource = backend.getViewSource(value);
      if (Operation *def = viewSource ? viewSource.getDefiningOp() : nullptr;
          def && opSet.contains(def))
        outputs.insert(viewSource);
      for (Operation *user : value.getUsers())
        if (!opSet.contains(user) &&
            !(viewSource && roles.lookup(user) == OpRole::LibraryStep))
          outputs.insert(value);
    }
  if (outputs.empty())
    return success(); // nothing the model needs

  std::string entry =
      options.kernelPrefix + "k" + std::to_string(result.numKernels++);
  Location loc = ops.front()->getLoc();
  if (!result.kernels)
    result.kernels = ModuleOp::create(UnknownLoc::get(func.getContext()));
  // Kernels take and return plain integers where the model has quantized or
  // signed/unsigned tensors; casts inside restore the model's types and
  // the lowering folds them away.
  auto storageType = [](Value value) -> Type {
    auto type = llvm::cast<RankedTensorType>(value.getType());
    return type.clone(getStorageElementType(type.getElementType()));
  };
  SmallVector<Type> inputTypes, outputTypes;
  for (Value value : inputs)
    inputTypes.push_back(storageType(value));
  for (Value value : outputs)
    outputTypes.push_back(storageType(value));
  builder.setInsertionPointToEnd(result.kernels->getBody());
  auto fn = func::FuncOp::create(
      builder, loc, entry, builder.getFunctionType(inputTypes, outputTypes));
  Block *body = fn.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [value, arg] : llvm::zip(inputs, body->getArguments())) {
    Value mapped = arg;
    if (arg.getType() != value.getType())
      mapped = UnrealizedConversionCastOp::create(builder, value.getLoc(),
                                                  value.getType(), arg)
                   .getResult(0);
    mapping.map(value, mapped);
  }
  for (Value value : inlined) {
    Operation *def = value.getDefiningOp();
    FailureOr<DenseElementsAttr> dense =
        getDenseAttr(getConstantValue(def), def->getLoc());
    if (failed(dense))
      return failure();
    // arith.constant holds signless integers only: ui8 zero points are
    // reinterpreted, then cast back for the ops that read them.
    auto denseType = llvm::cast<RankedTensorType>(dense->getType());
    Type storage = getStorageElementType(denseType.getElementType());
    Value constant = arith::ConstantOp::create(
        builder, def->getLoc(),
        storage == denseType.getElementType() ? *dense
                                              : dense->bitcast(storage));
    if (constant.getType() != value.getType())
      constant = UnrealizedConversionCastOp::create(builder, def->getLoc(),
                                                    value.getType(), constant)
                     .getResult(0);
    mapping.map(value, constant);
  }
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  SmallVector<Value> returned;
  for (auto [value, type] : llvm::zip(outputs, outputTypes)) {
    Value mapped = mapping.lookup(value);
    if (mapped.getType() != type)
      mapped = UnrealizedConversionCastOp::create(builder, value.getLoc(), type,
                                                  mapped)
                   .getResult(0);
    returned.push_back(mapped);
  }
  func::ReturnOp::create(builder, loc, returned);

  FailureOr<std::vector<uint32_t>> operandIds =
      getTensors(inputs.getArrayRef());
  if (failed(operandIds))
    return failure();
  FailureOr<std::string> dimsOnly =
      getDimsOnlyOperands(inputs.getArrayRef(), *operandIds, opSet);
  if (failed(dimsOnly))
    return failure();
  rt::PlanStep &step =
      result.plan.addStep(rt::StepKind::Kernel, describeNode(loc));
  step.operands = std::move(*operandIds);
  std::string inPlace;
  SmallVector<int64_t> inPlaceArgs;
  for (auto [index, value] : llvm::enumerate(outputs)) {
    // A state updated elementwise (a gradient accumulated into its state)
    // is written where it lies: no arena buffer, no copy after.
    if (std::optional<std::pair<uint32_t, Value>> update =
            findElementwiseStateUpdate(value, opSet)) {
      auto input = llvm::find(inputs, update->second);
      size_t operand = size_t(input - inputs.begin());
      uint32_t id = addTensor(options.states[update->first].name, value,
                              rt::TensorStorage::State, update->first, ~0u);
      tensors[value] = id;
      step.results.push_back(id);
      inPlace += (inPlace.empty() ? "" : ",") + std::to_string(index) + ":" +
                 std::to_string(operand);
      inPlaceArgs.push_back(int64_t(operand));
      inPlaceArgs.push_back(int64_t(inputs.size() + index));
      continue;
    }
    uint32_t id =
        addTensor(valueName(value), value, rt::TensorStorage::Arena, 0, ~0u);
    tensors[value] = id;
    step.results.push_back(id);
  }
  if (!inPlace.empty()) {
    addStringAttr(step, "in_place", inPlace);
    fn->setAttr(kInPlaceArgsAttrName,
                builder.getDenseI64ArrayAttr(inPlaceArgs));
  }
  addStringAttr(step, "entry", entry);
  if (!dimsOnly->empty())
    addStringAttr(step, "dims_only", *dimsOnly);
  return success();
}

FailureOr<std::string> PlanBuilder::getDimsOnlyOperands(
    ArrayRef<Value> inputs, ArrayRef<uint32_t> ids,
    const llvm::SmallPtrSetImpl<Operation *> &ops) {
  std::string list;
  for (auto [index, value] : llvm::enumerate(inputs)) {
    const rt::PlanTensor &t = result.plan.tensors[ids[index]];
    if (t.storage != rt::TensorStorage::State)
      continue;
    // A view of the whole state (a parameter, an optimizer moment) is an
    // ordinary dense operand.
    const rt::PlanState &state = options.states[size_t(t.offset)];
    if (t.dims == state.dims &&
        llvm::all_of(t.dimExprs, [](int64_t expr) { return expr < 0; }))
      continue;
    for (Operation *user : value.getUsers())
      if (ops.contains(user) && !isa<ShapeOp>(user))
        return user->emitError()
               << "'" << user->getName() << "' (node '"
               << describeNode(user->getLoc()) << "') reads the elements of "
               << "state '" << t.name
               << "' in a generated kernel, which cannot read a state at its "
                  "capacity";
    list += (list.empty() ? "" : ",") + std::to_string(index);
  }
  return list;
}

LogicalResult PlanBuilder::classifyOps() {
  // Every op the target cannot run is reported before anything is built.
  bool unsupported = false;
  for (Operation &op : func.getBody().front().without_terminator()) {
    FailureOr<OpRole> role = getConstantValue(&op)
                                 ? FailureOr<OpRole>(OpRole::Constant)
                                 : backend.classify(&op, symbolic);
    if (failed(role)) {
      unsupported = true;
      continue;
    }
    roles[&op] = *role;
  }
  return failure(unsupported);
}

void PlanBuilder::addInputs() {
  uint32_t number = 0;
  for (BlockArgument arg : func.getArguments()) {
    if (std::optional<uint32_t> state =
            getArgumentState(func, arg.getArgNumber(), options.states)) {
      uint32_t id = addTensor(options.states[*state].name, arg,
                              rt::TensorStorage::State, *state, ~0u);
      tensors[arg] = id;
      // A view that has a static zero dim holds nothing to read.
      if (!llvm::is_contained(
              llvm::cast<RankedTensorType>(arg.getType()).getShape(), 0))
        result.plan.stateReads.push_back({*state, id});
      continue;
    }
    std::string name = getGraphInputName(func, arg.getArgNumber());
    uint32_t id = addTensor(name, arg, rt::TensorStorage::Input, number++, ~0u);
    tensors[arg] = id;
    result.plan.inputs.push_back({name, id});
  }
}

FailureOr<TargetPlan> PlanBuilder::build() {
  Block &block = func.getBody().front();
  if (failed(setUpSymbols()))
    return failure();
  if (symbolic)
    refineStaticDims(func, *shapes);
  if (failed(classifyOps()))
    return failure();
  for (BlockArgument arg : func.getArguments())
    if (!isPlannable(arg.getType(), symbolic))
      return emitError(arg.getLoc())
             << "input " << arg.getArgNumber() << " has type " << arg.getType()
             << ", not a static tensor of a runtime dtype";
  addInputs();
  auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
  if (!ret)
    return func.emitError("@")
           << func.getSymName() << " does not end with func.return";
  findStateAppends(ret);

  for (Operation &op : block.without_terminator()) {
    LogicalResult emitted = success();
    if (auto append = stateAppends.find(&op); append != stateAppends.end()) {
      if (failed(emitStateAppend(cast<ConcatOp>(op), append->second)))
        return failure();
      continue;
    }
    switch (roles[&op]) {
    case OpRole::Constant:
      continue; // a weight once a step reads it
    case OpRole::View:
      continue; // read in its source's buffer by a library step
    case OpRole::Kernel:
      group.push_back(&op);
      groupSet.insert(&op);
      continue;
    case OpRole::Alias:
      emitted = emitAlias(&op);
      break;
    case OpRole::LibraryStep:
      emitted = success(succeeded(flushGroup()) &&
                        succeeded(backend.emitStep(&op, *this)));
      break;
    }
    if (failed(emitted))
      return failure();
  }
  if (failed(flushGroup()))
    return failure();
  if (failed(emitOutputs(ret)) || failed(checkStateViews()))
    return failure();
  if (unresolvedDims)
    return failure();
  if (symbolic) {
    addPlanAssumptions(result.plan, *shapes);
    if (failed(substituteUnreadStateSymbols(result.plan, func)))
      return failure();
  }
  return std::move(result);
}

FailureOr<TargetPlan>
mlir::lmopt::buildTargetPlan(func::FuncOp func, const TargetBackend &backend,
                             const TargetOptions &targetOptions,
                             const PlanBuildOptions &options,
                             WeightsBuilder &weights) {
  if (func.isExternal() || func.getBody().getBlocks().size() != 1)
    return func.emitError("@")
           << func.getSymName() << " must have a single block";
  FailureOr<TargetPlan> plan =
      PlanBuilder(func, backend, options, weights).build();
  if (failed(plan))
    return failure();
  backend.rewritePlan(*plan, targetOptions);
  plan->memory = planMemory(plan->plan, plan->aliasRoot, options.memory);
  return plan;
}

FailureOr<TargetPlan>
mlir::lmopt::buildTargetPlan(func::FuncOp func, const TargetBackend &backend,
                             const TargetOptions &targetOptions,
                             const PlanBuildOptions &options) {
  WeightsBuilder weights;
  FailureOr<TargetPlan> plan =
      buildTargetPlan(func, backend, targetOptions, options, weights);
  if (succeeded(plan))
    plan->weights = weights.takeBytes();
  return plan;
}
