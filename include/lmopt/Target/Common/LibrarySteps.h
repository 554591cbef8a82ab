//===- LibrarySteps.h - The library steps every target emits alike -*- C++ -*-===//
//
// The operands and attributes of the library steps whose runtime executors
// read the same plan on every device (docs/bundle-format.md, "Steps"):
// linear, attention, gather and matmul. A target's emitStep calls these and
// adds what is its own (the CPU's quantized forms and row scales); its
// classify reports what it cannot run with reportNoLowering.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_LIBRARYSTEPS_H
#define LMOPT_TARGET_COMMON_LIBRARYSTEPS_H

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Target/Common/PlanBuilder.h"

namespace mlir::lmopt {

/// "no <target> lowering for '<op>' (node '<node>')[: <why>]" at `op`, and
/// failure: what a target's classify says about an op it cannot run.
LogicalResult reportNoLowering(Operation *op, StringRef target,
                               const Twine &why);

/// The role of an op no library step takes: Kernel for an op of the lmopt
/// or arith dialects without regions (the kernel generator diagnoses what
/// it cannot lower); Gemm (fused into linears unless its alpha, beta or
/// transposes say otherwise), dropout and anything else get
/// reportNoLowering.
FailureOr<OpRole> classifyAsKernel(Operation *op, StringRef target);

/// A `linear` step: operands input, weight, [bias], [residual]; attributes
/// transpose_weight, activation, has_bias, has_residual, and
/// transpose_input when set.
LogicalResult emitLinearStep(LinearOp op, PlanEmitter &emitter);

/// An `attention` step with the operands and attributes of
/// lowerAttention (AttentionPlan.h): views read in place.
LogicalResult emitAttentionStep(AttentionOp op, PlanEmitter &emitter);

/// An `attention_grad` step: operands query, key, value, output_grad,
/// [mask] (dense: no views); results the gradients of query, key and
/// value; attributes num_heads, scale (the op's, or 1/sqrt(D)), causal,
/// zero_masked_rows.
LogicalResult emitAttentionGradStep(AttentionGradOp op, PlanEmitter &emitter);

/// A `gather` step: operands data, indices; attribute axis (normalized to
/// be non-negative). Returned so that a target can add to it.
FailureOr<::lmopt::runtime::PlanStep *> emitGatherStep(GatherOp op,
                                                        PlanEmitter &emitter);

/// A `gather_elements` step: operands data, indices; attribute axis
/// (normalized to be non-negative). The runtime checks every index.
LogicalResult emitGatherElementsStep(GatherElementsOp op, PlanEmitter &emitter);
/// A `scatter_nd` step: operands data, indices, updates; attribute
/// reduction (omitted for none).
LogicalResult emitScatterNDStep(ScatterNDOp op, PlanEmitter &emitter);

/// A `matmul` step: operands lhs, rhs (numpy semantics).
LogicalResult emitMatMulStep(MatMulOp op, PlanEmitter &emitter);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_LIBRARYSTEPS_H
