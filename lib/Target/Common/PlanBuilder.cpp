//===- PlanBuilder.cpp - Optimized IR to a CPU execution plan -------------===//
//
// One pass over `@main` in block order. Each op plays one role: a constant
// (a weight, materialized when a step reads it), an alias (a static reshape:
// no step, the result names its operand's bytes), a library step (linear,
// attention, gather), a view an attention step reads in place (the Q/K/V
// split of a fused projection: no step), or part of a generated kernel.
// Consecutive kernel ops are collected into a group that is outlined when the
// next non-kernel op needs its results, so a kernel reads its inputs once and
// writes only what later steps or the outputs use.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CPU/PlanBuilder.h"
#include "AttentionPlan.h"
#include "GatherPlan.h" // and QuantPlan.h
#include "lmopt/Format/PlanShapes.h"
#include "lmopt/Target/CPU/PlanSymbols.h"

#include "lmopt/Conversion/LmoptToLinalg/LmoptToLinalg.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/SymbolicShapes.h"
#include "lmopt/Support/FusionReport.h"
#include "lmopt/Support/ResourceBlob.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cpu;
namespace rt = ::lmopt::runtime;

static constexpr uint64_t kWeightAlignment = 64;

//===----------------------------------------------------------------------===//
// Types and constant bytes (getRuntimeDType: RuntimeTypes.cpp)
//===----------------------------------------------------------------------===//

/// A ranked tensor type with static dims (or, in a symbolic plan, any
/// dims) and a plan dtype.
static bool isPlannable(Type type, bool symbolic = false) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  return tensor && (symbolic || tensor.hasStaticShape()) &&
         getRuntimeDType(tensor.getElementType()).has_value();
}

//===----------------------------------------------------------------------===//
// Op roles
//===----------------------------------------------------------------------===//

namespace {
enum class Role {
  Constant,
  Alias,
  AttentionView,
  Linear,
  QuantLinear,
  Attention,
  Gather,
  MatMul,
  Kernel
};
} // namespace

static ElementsAttr getConstantValue(Operation *op) {
  if (!op || !op->hasTrait<OpTrait::ConstantLike>())
    return nullptr;
  Attribute value;
  if (!matchPattern(op, m_Constant(&value)))
    return nullptr;
  return llvm::dyn_cast<ElementsAttr>(value);
}

/// The op's role, or a diagnostic naming why it has no CPU lowering.
static FailureOr<Role> classify(Operation *op, bool symbolic) {
  std::string node = describeNode(op->getLoc());
  auto unsupported = [&](const Twine &why) {
    InFlightDiagnostic diag = op->emitError()
                              << "no CPU lowering for '" << op->getName()
                              << "' (node '" << node << "')";
    if (!why.isTriviallyEmpty())
      diag << ": " << why;
    return failure();
  };
  // A constant is only data: its users are reported if they cannot read it.
  if (getConstantValue(op))
    return Role::Constant;
  auto checkTypes = [&](TypeRange types, StringRef what) {
    for (auto [index, type] : llvm::enumerate(types)) {
      if (isPlannable(type, symbolic))
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << what << " " << index << " has type " << type
         << (symbolic ? ", not a tensor of a runtime dtype"
                      : ", not a static tensor of a runtime dtype");
      return unsupported(text);
    }
    return success();
  };
  // A storage cast of a constant may read sub-byte integers (i4 weights),
  // which are stored under the cast's quantized type.
  bool castsConstant = isa<quant::StorageCastOp>(op) &&
                       getConstantValue(op->getOperand(0).getDefiningOp());
  if (failed(checkTypes(op->getResultTypes(), "result")) ||
      (!castsConstant && failed(checkTypes(op->getOperandTypes(), "operand"))))
    return failure();
  // A quantized linear's weight is stored in the step's own layout
  // (QuantPlan.cpp), so the cast feeding it stores nothing.
  if (castsConstant && onlyFeedsQuantizedLinears(op))
    return Role::Constant;
  // A storage cast only renames the integers' type: same bytes.
  if (isa<ReshapeOp, SqueezeOp, UnsqueezeOp, quant::StorageCastOp>(op))
    return Role::Alias;
  if (isAttentionViewOp(op))
    return Role::AttentionView;
  auto isF32 = [](Value value) {
    return llvm::cast<ShapedType>(value.getType()).getElementType().isF32();
  };
  if (auto linear = dyn_cast<LinearOp>(op)) {
    if (isQuantizedLinear(linear))
      return Role::QuantLinear;
    if (!isF32(linear.getInput()) || !isF32(linear.getWeight()))
      return unsupported("only f32 linears run on the CPU so far");
    return Role::Linear;
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    if (!isF32(attention.getQuery()) || !isF32(attention.getKey()) ||
        !isF32(attention.getValue()))
      return unsupported("only f32 attention runs on the CPU so far");
    return Role::Attention;
  }
  if (isa<GatherOp>(op))
    return Role::Gather;
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    if (!isF32(matmul.getLhs()) || !isF32(matmul.getRhs()))
      return unsupported("only f32 matmuls run on the CPU so far");
    return Role::MatMul;
  }
  // Gemm (fused into linears unless its alpha/beta/transposes say
  // otherwise) needs a library step that does not exist yet; everything
  // else in lmopt and arith (the quantization ops and integer products
  // included) is left to the kernel generator, which diagnoses what it
  // cannot lower.
  if (isa<GemmOp, DropoutOp>(op))
    return unsupported("");
  if (op->getNumRegions() != 0 || op->getNumResults() == 0 ||
      !isa<LmoptDialect, arith::ArithDialect>(op->getDialect()))
    return unsupported("");
  return Role::Kernel;
}

//===----------------------------------------------------------------------===//
// PlanBuilder
//===----------------------------------------------------------------------===//

namespace {
class PlanBuilder {
public:
  PlanBuilder(func::FuncOp main, const PlanBuildOptions &options)
      : main(main), options(options), builder(main.getContext()) {}

  FailureOr<CpuPlan> build();

private:
  uint32_t addTensor(std::string name, Value value, rt::TensorStorage storage,
                     uint64_t offset, uint32_t aliasOf);
  FailureOr<uint32_t> getTensor(Value value);
  FailureOr<uint64_t> addWeight(ElementsAttr attr, Location loc);
  FailureOr<uint32_t> addConstantTensor(const QuantConstant &c, Location loc);
  bool isInlineConstant(Value value) const;

  LogicalResult emitAlias(Operation *op);
  FailureOr<rt::PlanStep *> addLibraryStep(Operation *op, ValueRange operands,
                                           Value output, rt::StepKind kind);
  LogicalResult emitLinear(LinearOp op);
  LogicalResult emitQuantLinear(LinearOp op);
  LogicalResult emitAttention(AttentionOp op);
  LogicalResult emitGather(GatherOp op);
  LogicalResult flushGroup();
  LogicalResult emitOutputs(func::ReturnOp ret);

  static void addInt(rt::PlanStep &step, StringRef name, int64_t value);

  LogicalResult setUpSymbols();
  /// Fills the symbolic dims of `tensor`, the planned form of `value`.
  void setSymbolicDims(Value value, rt::PlanTensor &tensor);

  func::FuncOp main;
  const PlanBuildOptions &options;
  OpBuilder builder;
  CpuPlan result;
  llvm::DenseMap<Value, uint32_t> tensors;
  /// Weights by attribute, then by content, so no constant is stored twice.
  llvm::DenseMap<Attribute, uint64_t> weightByAttr;
  std::unordered_multimap<uint64_t, std::pair<uint64_t, uint64_t>>
      weightByHash; // hash -> (offset, size)
  /// The kernel ops collected since the last non-kernel step.
  SmallVector<Operation *> group;
  llvm::SmallPtrSet<Operation *, 16> groupSet;
  /// Symbolic plans: the dims of every value, and whether a dim failed to
  /// follow from the inputs' (reported where it happened).
  std::optional<SymbolicShapes> shapes;
  bool symbolic = false;
  bool unresolvedDims = false;
};
} // namespace

void PlanBuilder::addInt(rt::PlanStep &step, StringRef name, int64_t value) {
  rt::PlanAttr attr;
  attr.name = name.str();
  attr.kind = rt::PlanAttr::Kind::Int;
  attr.intValue = value;
  step.attrs.push_back(std::move(attr));
}

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
  if (failed(addPlanSymbols(main, options.maxShapes, result.plan, bounds)))
    return failure();
  symbolic = !result.plan.symbols.empty();
  if (symbolic)
    shapes.emplace(main, bounds);
  return success();
}

void PlanBuilder::setSymbolicDims(Value value, rt::PlanTensor &tensor) {
  // The first unresolved dim is reported: the dims computed from it follow.
  if (!setPlanTensorDims(result.plan, shapes ? &*shapes : nullptr, value,
                         tensor, /*report=*/!unresolvedDims))
    unresolvedDims = true;
}

FailureOr<uint64_t> PlanBuilder::addWeight(ElementsAttr attr, Location loc) {
  auto known = weightByAttr.find(attr);
  if (known != weightByAttr.end())
    return known->second;
  std::vector<uint8_t> storage;
  FailureOr<ArrayRef<uint8_t>> bytes = getConstantBytes(attr, loc, storage);
  if (failed(bytes))
    return failure();
  std::vector<uint8_t> &weights = result.weights;
  uint64_t hash = llvm::xxh3_64bits(*bytes);
  auto [begin, end] = weightByHash.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    auto [offset, size] = it->second;
    if (size == bytes->size() &&
        std::memcmp(weights.data() + offset, bytes->data(), size) == 0) {
      weightByAttr[attr] = offset;
      return offset;
    }
  }
  uint64_t offset = (weights.size() + kWeightAlignment - 1) / kWeightAlignment *
                    kWeightAlignment;
  weights.resize(offset);
  weights.insert(weights.end(), bytes->begin(), bytes->end());
  weightByHash.emplace(hash, std::make_pair(offset, uint64_t(bytes->size())));
  weightByAttr[attr] = offset;
  return offset;
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
  FailureOr<uint64_t> offset = addWeight(attr, def->getLoc());
  if (failed(offset))
    return failure();
  uint32_t id = addTensor(name, value, rt::TensorStorage::Weight, *offset, ~0u);
  tensors[value] = id;
  return id;
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
    FailureOr<uint64_t> offset = addWeight(attr, op->getLoc());
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

/// A step of `kind` for `op` reading `operands` (the op's, or the buffers
/// its operands are views of) and writing `output` to the arena.
FailureOr<rt::PlanStep *> PlanBuilder::addLibraryStep(Operation *op,
                                                      ValueRange operandValues,
                                                      Value output,
                                                      rt::StepKind kind) {
  SmallVector<uint32_t> operands;
  for (Value value : operandValues) {
    FailureOr<uint32_t> id = getTensor(value);
    if (failed(id))
      return failure();
    operands.push_back(*id);
  }
  std::string name = describeNode(op->getLoc());
  uint32_t outputId = addTensor(name, output, rt::TensorStorage::Arena, 0, ~0u);
  tensors[output] = outputId;
  rt::PlanStep &step = result.plan.addStep(kind, name);
  step.operands.assign(operands.begin(), operands.end());
  step.results = {outputId};
  return &step;
}

LogicalResult PlanBuilder::emitLinear(LinearOp op) {
  FailureOr<rt::PlanStep *> added = addLibraryStep(
      op, op->getOperands(), op.getOutput(), rt::StepKind::Linear);
  if (failed(added))
    return failure();
  rt::PlanStep &step = **added;
  addInt(step, "transpose_weight", op.getTransposeWeight());
  addInt(step, "activation", static_cast<int64_t>(op.getActivation()));
  addInt(step, "has_bias", op.getBias() != nullptr);
  addInt(step, "has_residual", op.getResidual() != nullptr);
  return success();
}

/// A weight tensor of a step's own constant (not an IR value).
FailureOr<uint32_t>
PlanBuilder::addConstantTensor(const QuantConstant &constant, Location loc) {
  FailureOr<uint64_t> offset = addWeight(constant.value, loc);
  if (failed(offset))
    return failure();
  rt::PlanTensor tensor;
  tensor.name = constant.name;
  auto type = llvm::cast<ShapedType>(constant.value.getType());
  tensor.dtype = *getRuntimeDType(type.getElementType());
  tensor.dims.assign(type.getShape().begin(), type.getShape().end());
  tensor.storage = rt::TensorStorage::Weight;
  tensor.offset = *offset;
  uint32_t id = result.plan.addTensor(std::move(tensor));
  result.aliasRoot.push_back(id); // its own bytes
  return id;
}

/// The step and its repacked constants come from QuantPlan.cpp.
LogicalResult PlanBuilder::emitQuantLinear(LinearOp op) {
  std::string name = describeNode(op.getLoc());
  FailureOr<QuantLinearLowering> lowering = lowerQuantizedLinear(op, name);
  FailureOr<uint32_t> input = getTensor(op.getInput());
  if (failed(lowering) || failed(input))
    return failure();
  SmallVector<uint32_t> operands = {*input};
  for (const QuantConstant &constant : lowering->constants) {
    FailureOr<uint32_t> id = addConstantTensor(constant, op.getLoc());
    if (failed(id))
      return failure();
    operands.push_back(*id);
  }
  for (Value value : {op.getBias(), op.getResidual()}) {
    if (!value)
      continue;
    FailureOr<uint32_t> id = getTensor(value);
    if (failed(id))
      return failure();
    operands.push_back(*id);
  }
  uint32_t output =
      addTensor(name, op.getOutput(), rt::TensorStorage::Arena, 0, ~0u);
  tensors[op.getOutput()] = output;
  rt::PlanStep &step = result.plan.addStep(rt::StepKind::QuantLinear, name);
  step.operands.assign(operands.begin(), operands.end());
  step.results = {output};
  step.attrs = std::move(lowering->attrs);
  return success();
}

/// The step's operands and attributes come from AttentionPlan.cpp.
LogicalResult PlanBuilder::emitAttention(AttentionOp op) {
  AttentionLowering lowering = lowerAttention(op);
  FailureOr<rt::PlanStep *> added = addLibraryStep(
      op, lowering.operands, op.getOutput(), rt::StepKind::Attention);
  if (failed(added))
    return failure();
  (*added)->attrs = std::move(lowering.attrs);
  return success();
}

LogicalResult PlanBuilder::emitGather(GatherOp op) {
  std::string name = describeNode(op.getLoc());
  FailureOr<uint32_t> data = getTensor(op.getData());
  FailureOr<uint32_t> indices = getTensor(op.getIndices());
  if (failed(data) || failed(indices))
    return failure();
  uint32_t output =
      addTensor(name, op.getOutput(), rt::TensorStorage::Arena, 0, ~0u);
  tensors[op.getOutput()] = output;
  rt::PlanStep &step = result.plan.addStep(rt::StepKind::Gather, name);
  step.operands = {*data, *indices};
  step.results = {output};
  int64_t axis = op.getAxis();
  if (axis < 0)
    axis += llvm::cast<RankedTensorType>(op.getData().getType()).getRank();
  addInt(step, "axis", axis);
  // A quantized table's row scales are a third operand (GatherPlan.cpp).
  if (!isQuantizedGather(op))
    return success();
  FailureOr<QuantConstant> scales = lowerQuantizedGather(op, name);
  FailureOr<uint32_t> id = failed(scales)
                               ? FailureOr<uint32_t>(failure())
                               : addConstantTensor(*scales, op.getLoc());
  if (failed(id))
    return failure();
  step.operands.push_back(*id);
  addInt(step, "row_scales", 1);
  return success();
}

LogicalResult PlanBuilder::flushGroup() {
  if (group.empty())
    return success();
  SmallVector<Operation *> ops = std::move(group);
  llvm::SmallPtrSet<Operation *, 16> opSet = std::move(groupSet);
  group.clear();
  groupSet.clear();

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
  // Attention steps read a view in its source's buffer, which the group
  // writes should it compute it; the view itself is written only for a
  // later group that reads its dims.
  for (Operation *op : ops)
    for (Value value : op->getResults()) {
      std::optional<AttentionView> view = getAttentionView(value);
      if (Operation *def = view ? view->source.getDefiningOp() : nullptr;
          def && opSet.contains(def))
        outputs.insert(view->source);
      for (Operation *user : value.getUsers())
        if (!opSet.contains(user) && !(view && isa<AttentionOp>(user)))
          outputs.insert(value);
    }
  if (outputs.empty())
    return success(); // nothing the model needs

  std::string entry = "k" + std::to_string(result.numKernels++);
  Location loc = ops.front()->getLoc();
  if (!result.kernels)
    result.kernels = ModuleOp::create(UnknownLoc::get(main.getContext()));
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

  SmallVector<uint32_t> operandIds;
  for (Value value : inputs) {
    FailureOr<uint32_t> id = getTensor(value);
    if (failed(id))
      return failure();
    operandIds.push_back(*id);
  }
  rt::PlanStep &step =
      result.plan.addStep(rt::StepKind::Kernel, describeNode(loc));
  step.operands.assign(operandIds.begin(), operandIds.end());
  for (Value value : outputs) {
    uint32_t id =
        addTensor(valueName(value), value, rt::TensorStorage::Arena, 0, ~0u);
    tensors[value] = id;
    step.results.push_back(id);
  }
  rt::PlanAttr entryAttr;
  entryAttr.name = "entry";
  entryAttr.kind = rt::PlanAttr::Kind::String;
  entryAttr.stringValue = entry;
  step.attrs.push_back(std::move(entryAttr));
  return success();
}

LogicalResult PlanBuilder::emitOutputs(func::ReturnOp ret) {
  auto names = main->getAttrOfType<ArrayAttr>("lmopt.output_names");
  llvm::SmallDenseSet<uint32_t> used;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    std::string name = "output" + std::to_string(index);
    if (names && index < names.size())
      if (auto text = llvm::dyn_cast<StringAttr>(names[index]))
        name = text.str();
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

FailureOr<CpuPlan> PlanBuilder::build() {
  Block &block = main.getBody().front();
  if (failed(setUpSymbols()))
    return failure();
  if (symbolic)
    refineStaticDims(main, *shapes);
  // Every op without a CPU lowering is reported before anything is built.
  llvm::DenseMap<Operation *, Role> roles;
  bool unsupported = false;
  for (Operation &op : block.without_terminator()) {
    FailureOr<Role> role = classify(&op, symbolic);
    if (failed(role)) {
      unsupported = true;
      continue;
    }
    roles[&op] = *role;
  }
  if (unsupported)
    return failure();

  auto inputNames = main->getAttrOfType<ArrayAttr>("lmopt.input_names");
  for (BlockArgument arg : main.getArguments()) {
    if (!isPlannable(arg.getType(), symbolic))
      return emitError(arg.getLoc())
             << "input " << arg.getArgNumber() << " has type " << arg.getType()
             << ", not a static tensor of a runtime dtype";
    std::string name = "input" + std::to_string(arg.getArgNumber());
    if (inputNames && arg.getArgNumber() < inputNames.size())
      if (auto text =
              llvm::dyn_cast<StringAttr>(inputNames[arg.getArgNumber()]))
        name = text.str();
    uint32_t id =
        addTensor(name, arg, rt::TensorStorage::Input, arg.getArgNumber(), ~0u);
    tensors[arg] = id;
    result.plan.inputs.push_back({name, id});
  }

  for (Operation &op : block.without_terminator()) {
    LogicalResult emitted = success();
    switch (roles[&op]) {
    case Role::Constant:
      continue; // a weight once a step reads it
    case Role::AttentionView:
      continue; // read in its source's buffer by the attention step
    case Role::Kernel:
      group.push_back(&op);
      groupSet.insert(&op);
      continue;
    case Role::Alias:
      emitted = emitAlias(&op);
      break;
    case Role::Linear:
      emitted =
          succeeded(flushGroup()) ? emitLinear(cast<LinearOp>(op)) : failure();
      break;
    case Role::QuantLinear:
      emitted = succeeded(flushGroup()) ? emitQuantLinear(cast<LinearOp>(op))
                                        : failure();
      break;
    case Role::Attention:
      emitted = succeeded(flushGroup()) ? emitAttention(cast<AttentionOp>(op))
                                        : failure();
      break;
    case Role::Gather:
      emitted =
          succeeded(flushGroup()) ? emitGather(cast<GatherOp>(op)) : failure();
      break;
    case Role::MatMul:
      emitted = success(
          succeeded(flushGroup()) &&
          succeeded(addLibraryStep(&op, op.getOperands(), op.getResult(0),
                                   rt::StepKind::MatMul)));
      break;
    }
    if (failed(emitted))
      return failure();
  }
  if (failed(flushGroup()))
    return failure();
  auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
  if (!ret)
    return main.emitError("@main does not end with func.return");
  if (failed(emitOutputs(ret)))
    return failure();
  if (unresolvedDims)
    return failure();
  if (symbolic)
    addPlanAssumptions(result.plan, *shapes);

  if (options.fuseRowQuantization)
    result.fusedRowQuantizations =
        fuseRowQuantization(result.plan, result.aliasRoot);
  result.memory = planMemory(result.plan, result.aliasRoot, options.memory);
  return std::move(result);
}

FailureOr<CpuPlan>
mlir::lmopt::cpu::buildCpuPlan(ModuleOp module,
                               const PlanBuildOptions &options) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return module.emitError("the module has no func.func @main to compile");
  if (main.getBody().getBlocks().size() != 1)
    return main.emitError("@main must have a single block");
  return PlanBuilder(main, options).build();
}
