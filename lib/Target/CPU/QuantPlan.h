//===- QuantPlan.h - Quantized lmopt.linear to a quant_linear step -*- C++ -*-===//
//
// The plan builder's part for the quantized and mixed-precision forms of
// `lmopt.linear` (docs/dialect.md): which forms the CPU runs, and the
// step's attributes and constant operands in the layout the runtime's
// QuantLinearStep reads (docs/bundle-format.md, "quant_linear").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_TARGET_CPU_QUANTPLAN_H
#define LMOPT_LIB_TARGET_CPU_QUANTPLAN_H

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Format/Plan.h"
#include "lmopt/Target/Common/PlanBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <string>
#include <vector>

namespace mlir::lmopt::cpu {

/// True for a linear whose input or weight is not f32 (or whose input is
/// quantized at run time): it becomes a quant_linear step, not a linear one.
bool isQuantizedLinear(LinearOp op);

/// Whether `op` multiplies a bf16 input by a bf16 weight computed at run
/// time into an f32 result (mixed-precision training,
/// lmopt-narrow-precision's wide-results form): a plain linear step with
/// bf16 operands, not a quantized one.
bool isBf16ProductLinear(LinearOp op);

/// A weight-like operand the step reads, as a constant to store.
struct QuantConstant {
  /// Names the tensor in the plan ("<node>.weight", ".scales", ...).
  std::string name;
  ElementsAttr value;
};

struct QuantLinearLowering {
  std::vector<::lmopt::runtime::PlanAttr> attrs;
  /// In step operand order after the input: weight, then scales (not for
  /// bf16), then zero points (int4 with zero points).
  std::vector<QuantConstant> constants;
};

/// The step for `op` (isQuantizedLinear), or a diagnostic on `op` naming
/// its node when the CPU has no kernel for that form.
FailureOr<QuantLinearLowering> lowerQuantizedLinear(LinearOp op,
                                                    StringRef node);

/// Whether the storage cast `op` only feeds weights of quantized linears
/// (then the plan stores the step's repacked form, not the cast's bytes).
bool onlyFeedsQuantizedLinears(Operation *op);

/// Moves the per-token quantization of an int8 linear's input into the
/// int8 linear that produces it, where that producer has no residual and
/// its output feeds nothing else (QuantFusion.cpp): the producer gets
/// `quantize_output` and results (i8 output, f32 row scales, f32 product
/// scratch), the consumer `input_quantized` and the row scales as its
/// second operand. New tensors are appended to `aliasRoot`. Returns how
/// many pairs it fused.
unsigned fuseRowQuantization(::lmopt::runtime::Plan &plan,
                             std::vector<uint32_t> &aliasRoot);

/// Lets a bf16 linear without a residual write the bf16 tensor that a
/// kernel made of one f32 -> bf16 cast alone reads from its output, where
/// nothing else reads that output (the FFN's up projection feeding the down
/// projection): the producer gets `output_bf16` and the kernel's result,
/// the kernel step and its function go, and so does the f32 tensor
/// (tensors renumbered). Returns how many casts it removed.
unsigned fuseBf16Outputs(TargetPlan &plan);

/// Lets a bf16 or int8 linear without a residual or another narrowed output
/// write bf16 where its f32 output is read only as the query, key and/or
/// value of an attention with bf16 products (BERT's fused QKV projection):
/// the tensor becomes bf16, the producer gets `output_bf16` and the
/// attention `input_bf16`, when every one of the attention's query, key and
/// value is such an output, its products fit the AMX tiles (fixed head dim
/// and key length, multiples of 32) and its scale is a power of two: then
/// the numbers are the same bits. Returns how many attentions read bf16.
unsigned fuseBf16AttentionInputs(::lmopt::runtime::Plan &plan,
                                 const std::vector<uint32_t> &aliasRoot);

/// Lets an int8 linear without a residual, or an attention, write the u8
/// or i8 tensor that a kernel made of one per-tensor lmopt.quantize alone
/// reads from its output, where nothing else reads that output: the
/// producer gets
/// `output_static`, `output_scale` and `output_zero_point` and the kernel's
/// result, the kernel step and its function go, and so does the f32 tensor
/// (tensors renumbered). Returns how many quantizations it removed.
unsigned fuseStaticOutputs(TargetPlan &plan);

} // namespace mlir::lmopt::cpu

#endif // LMOPT_LIB_TARGET_CPU_QUANTPLAN_H
