//===- LibrarySteps.cpp - The library steps every target emits alike ------===//

#include "lmopt/Target/Common/LibrarySteps.h"

#include "lmopt/Support/FusionReport.h"
#include "lmopt/Target/Common/AttentionPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

LogicalResult mlir::lmopt::reportNoLowering(Operation *op, StringRef target,
                                            const Twine &why) {
  InFlightDiagnostic diag = op->emitError()
                            << "no " << target << " lowering for '"
                            << op->getName() << "' (node '"
                            << describeNode(op->getLoc()) << "')";
  if (!why.isTriviallyEmpty())
    diag << ": " << why;
  return diag;
}

FailureOr<OpRole> mlir::lmopt::classifyAsKernel(Operation *op,
                                               StringRef target) {
  if (isa<GemmOp, DropoutOp>(op) || op->getNumRegions() != 0 ||
      op->getNumResults() == 0 ||
      !isa<LmoptDialect, arith::ArithDialect>(op->getDialect()))
    return reportNoLowering(op, target, "");
  return OpRole::Kernel;
}

LogicalResult mlir::lmopt::emitLinearStep(LinearOp op, PlanEmitter &emitter) {
  FailureOr<rt::PlanStep *> added = emitter.addLibraryStep(
      op, op->getOperands(), op.getOutput(), rt::StepKind::Linear);
  if (failed(added))
    return failure();
  rt::PlanStep &step = **added;
  PlanEmitter::addIntAttr(step, "transpose_weight", op.getTransposeWeight());
  PlanEmitter::addIntAttr(step, "activation",
                          static_cast<int64_t>(op.getActivation()));
  PlanEmitter::addIntAttr(step, "has_bias", op.getBias() != nullptr);
  PlanEmitter::addIntAttr(step, "has_residual", op.getResidual() != nullptr);
  // Only when set: the plans of every other linear stay as they were.
  if (op.getTransposeInput())
    PlanEmitter::addIntAttr(step, "transpose_input", 1);
  return success();
}

LogicalResult mlir::lmopt::emitAttentionStep(AttentionOp op,
                                             PlanEmitter &emitter) {
  AttentionLowering lowering = lowerAttention(op);
  FailureOr<rt::PlanStep *> added = emitter.addLibraryStep(
      op, lowering.operands, op.getOutput(), rt::StepKind::Attention);
  if (failed(added))
    return failure();
  (*added)->attrs = std::move(lowering.attrs);
  return success();
}

LogicalResult mlir::lmopt::emitAttentionGradStep(AttentionGradOp op,
                                                 PlanEmitter &emitter) {
  FailureOr<std::vector<uint32_t>> operands =
      emitter.getTensors(op->getOperands());
  if (failed(operands))
    return failure();
  std::string name = describeNode(op.getLoc());
  std::vector<uint32_t> results;
  for (Value result : op->getResults())
    results.push_back(
        emitter.addResult(result, name + ":" + std::to_string(results.size())));
  rt::PlanStep &step = emitter.addStep(rt::StepKind::AttentionGrad, name);
  step.operands = std::move(*operands);
  step.results = std::move(results);
  int64_t numHeads = op.getNumHeads();
  int64_t hidden =
      llvm::cast<RankedTensorType>(op.getQuery().getType()).getShape().back();
  double scale = op.getScale() ? double(op.getScale()->convertToFloat())
                               : 1.0 / std::sqrt(double(hidden / numHeads));
  PlanEmitter::addIntAttr(step, "num_heads", numHeads);
  PlanEmitter::addFloatAttr(step, "scale", scale);
  PlanEmitter::addIntAttr(step, "causal", op.getCausal());
  PlanEmitter::addIntAttr(step, "zero_masked_rows", op.getZeroMaskedRows());
  return success();
}

/// A step of `kind` reading the data and indices of a gather-like op, with
/// its axis normalized into [0, rank(data)).
template <typename OpTy>
static FailureOr<rt::PlanStep *>
emitGatherLikeStep(OpTy op, PlanEmitter &emitter, rt::StepKind kind) {
  FailureOr<rt::PlanStep *> added = emitter.addLibraryStep(
      op, {op.getData(), op.getIndices()}, op.getOutput(), kind);
  if (failed(added))
    return failure();
  int64_t axis = op.getAxis();
  if (axis < 0)
    axis += llvm::cast<RankedTensorType>(op.getData().getType()).getRank();
  PlanEmitter::addIntAttr(**added, "axis", axis);
  return added;
}

FailureOr<rt::PlanStep *> mlir::lmopt::emitGatherStep(GatherOp op,
                                                      PlanEmitter &emitter) {
  return emitGatherLikeStep(op, emitter, rt::StepKind::Gather);
}

LogicalResult mlir::lmopt::emitGatherElementsStep(GatherElementsOp op,
                                                  PlanEmitter &emitter) {
  return success(succeeded(
      emitGatherLikeStep(op, emitter, rt::StepKind::GatherElements)));
}

LogicalResult mlir::lmopt::emitScatterNDStep(ScatterNDOp op,
                                             PlanEmitter &emitter) {
  FailureOr<rt::PlanStep *> added = emitter.addLibraryStep(
      op, op->getOperands(), op.getOutput(), rt::StepKind::ScatterND);
  if (failed(added))
    return failure();
  if (op.getReduction() != ScatterReduction::none)
    PlanEmitter::addIntAttr(**added, "reduction",
                            static_cast<int64_t>(op.getReduction()));
  return success();
}

LogicalResult mlir::lmopt::emitMatMulStep(MatMulOp op, PlanEmitter &emitter) {
  return success(succeeded(emitter.addLibraryStep(
      op, op->getOperands(), op.getResult(), rt::StepKind::MatMul)));
}
