//===- Autodiff.cpp - reverse-mode differentiation of lmopt IR ------------===//
//
// buildGradients marks the values that depend on the arguments to
// differentiate ("varied") and those the loss depends on ("useful"), then
// visits the ops in reverse, giving each op with a gradient at a result its
// rule's operand gradients. The backward ops go before the terminator, so
// every forward value they read dominates them.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"

#include "GradBuilder.h"

#include "lmopt/Dialect/Lmopt/IR/GradientOpInterface.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "lmopt/Dialect/Lmopt/Autodiff/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

/// The ONNX node (or initializer) name `loc` carries, or "".
static std::string nodeNameOf(Location loc) {
  return findNodeName(loc).value_or("");
}

static bool isFloatTensor(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  return type && llvm::isa<FloatType>(type.getElementType());
}


FailureOr<SmallVector<Value>>
mlir::lmopt::buildGradients(func::FuncOp func, Value loss, ArrayRef<Value> wrt,
                            AutodiffStats *stats) {
  Block &block = func.getBody().front();
  auto lossType = llvm::dyn_cast<RankedTensorType>(loss.getType());
  if (!lossType || lossType.getRank() != 0 ||
      !llvm::isa<FloatType>(lossType.getElementType()))
    return func.emitError("the loss must be a rank-0 float tensor, not ")
           << loss.getType();

  // Forward: what depends on the arguments to differentiate.
  llvm::DenseSet<Value> varied(wrt.begin(), wrt.end());
  for (Operation &op : block.without_terminator()) {
    if (!llvm::any_of(op.getOperands(),
                      [&](Value v) { return varied.contains(v); }))
      continue;
    for (Value result : op.getResults())
      if (isFloatTensor(result))
        varied.insert(result);
  }
  // Backward: what the loss depends on.
  llvm::DenseSet<Value> useful{loss};
  for (Operation &op : llvm::reverse(block.without_terminator()))
    if (llvm::any_of(op.getResults(),
                     [&](Value v) { return useful.contains(v); }))
      for (Value operand : op.getOperands())
        useful.insert(operand);

  Operation *terminator = block.getTerminator();
  OpBuilder builder(terminator);
  size_t opsBefore = block.getOperations().size();
  llvm::DenseMap<Value, Value> grads;
  auto accumulate = [&](Value value, Value grad, Location loc) {
    auto [it, inserted] = grads.try_emplace(value, grad);
    if (!inserted) {
      GradBuilder gb(builder, loc);
      it->second = gb.add(it->second, grad);
    }
  };
  {
    GradBuilder gb(builder, loss.getLoc());
    grads[loss] = gb.scalarLike(1.0, loss);
  }

  unsigned activeOps = 0;
  SmallVector<Operation *> forward;
  for (Operation &op : block.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value result : op->getResults()) {
      auto it = grads.find(result);
      resultGrads.push_back(it == grads.end() ? Value() : it->second);
      any |= it != grads.end();
    }
    if (!any)
      continue;
    bool needsOperand = llvm::any_of(op->getOperands(), [&](Value v) {
      return varied.contains(v) && useful.contains(v);
    });
    if (!needsOperand)
      continue;
    ++activeOps;
    auto rule = llvm::dyn_cast<GradientOpInterface>(op);
    if (!rule) {
      std::string node = nodeNameOf(op->getLoc());
      return op->emitError("'")
             << op->getName() << "'"
             << (node.empty() ? "" : " (node '" + node + "')")
             << " lies between the parameters and the loss but has no "
                "gradient rule";
    }
    SmallVector<Value> operandGrads;
    builder.setInsertionPoint(terminator);
    if (failed(rule.buildGradients(builder, resultGrads, operandGrads)))
      return failure();
    assert(operandGrads.size() == op->getNumOperands() &&
           "a rule must give one entry per operand");
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !varied.contains(operand) || !useful.contains(operand))
        continue;
      if (grad.getType() != operand.getType())
        return op->emitError("gradient rule of '")
               << op->getName() << "' gave type " << grad.getType()
               << " for an operand of type " << operand.getType();
      accumulate(operand, grad, op->getLoc());
    }
  }

  SmallVector<Value> result;
  for (Value value : wrt) {
    if (Value grad = grads.lookup(value)) {
      result.push_back(grad);
      continue;
    }
    GradBuilder gb(builder, value.getLoc());
    result.push_back(gb.zerosLike(value));
  }
  if (stats) {
    stats->activeOps = activeOps;
    stats->backwardOps =
        unsigned(block.getOperations().size() - opsBefore);
  }
  return result;
}

void mlir::lmopt::eraseDeadOps(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}

namespace {

struct AutodiffPass : mlir::lmopt::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<Value> wrt;
    SmallVector<Attribute> names;
    for (BlockArgument arg : func.getArguments())
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        kTrainableAttrName)) {
        wrt.push_back(arg);
        names.push_back(name);
      }
    if (wrt.empty())
      return;
    auto ret = llvm::cast<func::ReturnOp>(
        func.getBody().front().getTerminator());
    if (ret.getNumOperands() == 0) {
      func.emitError("a function to differentiate returns its loss first");
      return signalPassFailure();
    }
    FailureOr<SmallVector<Value>> grads =
        buildGradients(func, ret.getOperand(0), wrt);
    if (failed(grads))
      return signalPassFailure();
    unsigned first = ret.getNumOperands();
    ret->insertOperands(first, *grads);
    SmallVector<Type> results(ret.getOperandTypes());
    func.setType(FunctionType::get(func.getContext(),
                                   func.getArgumentTypes(), results));
    for (auto [index, name] : llvm::enumerate(names))
      func.setResultAttr(first + index, kGradientAttrName, name);
    eraseDeadOps(func.getBody().front());
  }
};

} // namespace
