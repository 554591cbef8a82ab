//===- Passes.td - lmopt conversion passes -----------------*- tablegen -*-===//

#ifndef LMOPT_CONVERSION_PASSES_TD
#define LMOPT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLmoptToLinalgPass : Pass<"convert-lmopt-to-linalg"> {
  let summary = "Lower elementwise, reduction and normalization ops to linalg";
  let description = [{
    Rewrites the lmopt ops that the CPU backend generates kernels for into
    `linalg.generic` ops on tensors, with `tensor.empty` (sized by
    `tensor.dim` of the inputs for dynamic dims) as destinations:

    - unary elementwise ops, `cast` (ONNX Cast semantics) and `gelu`;
    - broadcasting binary ops and `where`, with numpy broadcasting expressed
      by indexing maps (a dim of static size 1 reads index 0);
    - `reduce_sum/mean/max/min`, `softmax`, `log_softmax` (max-subtracted),
      `layer_norm`, `skip_layer_norm` and `rms_norm`, with statistics
      accumulated in f32 (f64 for f64 tensors);
    - `dequantize`/`quantize` (per tensor, per axis, block-wise `quant`
      types), `dynamic_quantize_linear` and `matmul_integer` (i32
      accumulation) on the signless storage integers, reinterpreted through
      `builtin.unrealized_conversion_cast` pairs that the pass folds.

    Precondition: ranked tensors whose element types are integers or floats.
    Where two operands both have a dynamic dim at one position, they are
    assumed equal and checked at run time with `cf.assert`; a dynamic dim
    facing a static dim larger than 1 (it could be 1 and broadcast) is not
    lowered. Ops with no lowering, or forms a pattern rejects, are left in
    place without a diagnostic: matrix products and attention become library
    calls later. The rewrite uses the greedy pattern driver, so the pass
    never fails on what it leaves.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // LMOPT_CONVERSION_PASSES_TD
