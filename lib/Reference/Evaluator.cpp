//===- Evaluator.cpp - reference evaluator for lmopt IR -------------------===//

#include "lmopt/Reference/Evaluator.h"

#include "OpEvaluators.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::lmopt::reference;

EvaluatorTable::EvaluatorTable() {
  registerElementwiseEvaluators(*this);
  registerShapeEvaluators(*this);
  registerIndexingEvaluators(*this);
  registerMatMulEvaluators(*this);
  registerNormalizationEvaluators(*this);
  registerAttentionEvaluators(*this);
  registerQuantizationEvaluators(*this);
}

const EvaluatorTable &EvaluatorTable::get() {
  static const EvaluatorTable table;
  return table;
}

const EvaluateFn *EvaluatorTable::lookup(TypeID id) const {
  auto it = entries.find(id);
  return it == entries.end() ? nullptr : &it->second;
}

Type mlir::lmopt::reference::getResultElementType(Operation *op,
                                                  unsigned index) {
  return llvm::cast<ShapedType>(op->getResult(index).getType())
      .getElementType();
}

FailureOr<int64_t> mlir::lmopt::reference::normalizeAxis(Operation *op,
                                                         int64_t axis,
                                                         int64_t rank,
                                                         StringRef what) {
  if (axis < -rank || axis >= rank)
    return op->emitError() << what << " " << axis
                           << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

SmallVector<int64_t>
mlir::lmopt::reference::getIntValues(const Tensor &tensor) {
  SmallVector<int64_t> values;
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i)
    values.push_back(tensor.getInt(i));
  return values;
}

LogicalResult
mlir::lmopt::reference::checkElementCount(Operation *op,
                                          ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim != 0 && count > kMaxElements / dim)
      return op->emitError()
             << "shape " << formatShape(shape) << " has more than "
             << kMaxElements << " elements";
    count *= dim;
  }
  return success();
}

FailureOr<SmallVector<int64_t>>
mlir::lmopt::reference::broadcastOrError(Operation *op, ArrayRef<int64_t> lhs,
                                         ArrayRef<int64_t> rhs) {
  FailureOr<SmallVector<int64_t>> shape = broadcast(lhs, rhs);
  if (failed(shape))
    return op->emitError() << "shapes " << formatShape(lhs) << " and "
                           << formatShape(rhs) << " do not broadcast";
  if (failed(checkElementCount(op, *shape)))
    return failure();
  return shape;
}

FailureOr<Tensor> mlir::lmopt::reference::broadcastTo(Operation *op,
                                                      const Tensor &x,
                                                      ArrayRef<int64_t> shape,
                                                      StringRef what) {
  FailureOr<SmallVector<int64_t>> joined = broadcast(x.getShape(), shape);
  if (failed(joined) || ArrayRef<int64_t>(*joined) != shape)
    return op->emitError() << what << " of shape " << formatShape(x.getShape())
                           << " does not broadcast to " << formatShape(shape);
  return x.take(broadcastIndices(x.getShape(), shape), shape);
}

/// Checks a computed value against the type the IR declares for it.
static LogicalResult checkAgainstType(Operation *op, const Tensor &tensor,
                                      Type declared, StringRef what,
                                      unsigned index) {
  auto type = llvm::dyn_cast<RankedTensorType>(declared);
  if (!type)
    return op->emitError() << what << " #" << index << " has type " << declared
                           << ", not a ranked tensor";
  if (tensor.getElementType() != type.getElementType())
    return op->emitError() << what << " #" << index << " has element type "
                           << tensor.getElementType() << ", declared "
                           << type.getElementType();
  ArrayRef<int64_t> shape = tensor.getShape();
  bool matches = shape.size() == type.getShape().size();
  for (auto [actual, expected] : llvm::zip(shape, type.getShape()))
    matches &= ShapedType::isDynamic(expected) || actual == expected;
  if (!matches)
    return op->emitError() << what << " #" << index << " has shape "
                           << formatShape(shape) << ", which does not match "
                           << "its declared type " << declared;
  return success();
}

FailureOr<SmallVector<Tensor>>
mlir::lmopt::reference::evaluateOp(Operation *op, ArrayRef<Tensor> operands) {
  const EvaluateFn *fn =
      EvaluatorTable::get().lookup(op->getName().getTypeID());
  if (!fn)
    return op->emitError() << "reference evaluator does not support '"
                           << op->getName() << "'";
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(operands, op->getOperandTypes())))
    if (failed(checkAgainstType(op, std::get<0>(pair), std::get<1>(pair),
                                "operand", index)))
      return failure();
  EvalResult results = (*fn)(op, operands);
  if (failed(results))
    return failure();
  if (results->size() != op->getNumResults())
    return op->emitError() << "reference evaluator produced " << results->size()
                           << " results, expected " << op->getNumResults();
  for (auto [index, tensor] : llvm::enumerate(*results)) {
    tensor.roundToElementType();
    if (failed(checkAgainstType(op, tensor, op->getResult(index).getType(),
                                "result", index)))
      return failure();
  }
  return results;
}

FailureOr<SmallVector<Tensor>>
mlir::lmopt::reference::evaluateFunction(func::FuncOp func,
                                         ArrayRef<Tensor> arguments) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError() << "function '" << func.getSymName()
                            << "' must have exactly one block to evaluate";
  Block &block = func.getBody().front();
  if (arguments.size() != block.getNumArguments())
    return func.emitError()
           << "function '" << func.getSymName() << "' takes "
           << block.getNumArguments() << " arguments, got " << arguments.size();
  llvm::DenseMap<Value, Tensor> values;
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(block.getArguments(), arguments))) {
    auto [argument, tensor] = pair;
    if (failed(checkAgainstType(func, tensor, argument.getType(), "argument",
                                index)))
      return failure();
    values[argument] = tensor;
  }
  // Each value is dropped after its last use, so that a model's peak memory
  // is its live values rather than every intermediate.
  llvm::DenseMap<Value, Operation *> lastUse;
  for (Operation &op : block)
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;
  for (Operation &op : block) {
    SmallVector<Tensor> operands;
    for (Value operand : op.getOperands()) {
      auto it = values.find(operand);
      if (it == values.end())
        return op.emitError() << "operand is not defined before its use";
      operands.push_back(it->second);
    }
    for (Value operand : op.getOperands())
      if (lastUse.lookup(operand) == &op)
        values.erase(operand);
    if (llvm::isa<func::ReturnOp>(op))
      return operands;
    if (op.getNumRegions() != 0)
      return op.emitError() << "reference evaluator does not support '"
                            << op.getName() << "' (an op with regions)";
    FailureOr<SmallVector<Tensor>> results = evaluateOp(&op, operands);
    if (failed(results))
      return failure();
    for (auto [result, tensor] : llvm::zip(op.getResults(), *results))
      values[result] = std::move(tensor);
  }
  return func.emitError() << "function '" << func.getSymName()
                          << "' has no 'func.return'";
}
