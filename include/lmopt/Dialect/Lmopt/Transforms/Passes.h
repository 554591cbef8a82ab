//===- Passes.h - lmopt graph passes ----------------------------*- C++ -*-===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_H

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class OpPassManager;
} // namespace mlir

namespace mlir::lmopt {

#define GEN_PASS_DECL
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"

/// Rewrites inert dropouts (inference mode or ratio 0) to their input.
void populateEliminateDropoutPatterns(RewritePatternSet &patterns);

/// Rewrites decomposed scaled-dot-product attention into `lmopt.attention`;
/// records each fusion in the fusion report.
void populateFuseAttentionPatterns(RewritePatternSet &patterns);

/// Merges linears with constant weights that share an input into one linear
/// and a split; records each fusion in the fusion report.
void populateFuseQkvPatterns(RewritePatternSet &patterns);

/// Rewrites decomposed GELU subgraphs (erf and tanh forms) to lmopt.gelu.
void populateFuseGeluPatterns(RewritePatternSet &patterns);

/// Rewrites rotate-half rotary embeddings `x * cos + rotate_half(x) * sin` to
/// lmopt.rotary.
void populateFuseRotaryPatterns(RewritePatternSet &patterns);

/// Rewrites matmul/gemm and their bias, activation and residual epilogues to
/// lmopt.linear.
void populateFuseLinearPatterns(RewritePatternSet &patterns);

/// Rewrites products of a rank-2 transpose into linears that read the
/// transpose's input in place (`transpose_input`).
void populateFoldLinearTransposePatterns(RewritePatternSet &patterns);

/// Rewrites decomposed layer norms to `lmopt.layer_norm` and RMS norms to
/// `lmopt.rms_norm`; records each fusion in the fusion report.
void populateFuseLayerNormPatterns(RewritePatternSet &patterns);

/// Rewrites `layer_norm(add(a, b))` to `lmopt.skip_layer_norm`; records each
/// fusion in the fusion report.
void populateFuseSkipLayerNormPatterns(RewritePatternSet &patterns);

/// Cancels the casts between half-precision islands: sinks widening casts
/// from f16/bf16 below ops that only move elements, and folds
/// `narrow(widen(x))` to `x`.
void populateNarrowPrecisionCleanupPatterns(RewritePatternSet &patterns);

/// The default inference pipeline: dropout elimination, folding, CSE.
/// The pipeline for a model about to be trained: the optimize pipeline
/// without the fusions that merge parameters (QKV) or expect quantized
/// weights, so that every parameter keeps its own tensor and name.
void buildLmoptTrainingPipeline(OpPassManager &pm);
void buildLmoptOptimizePipeline(OpPassManager &pm);

/// Registers `lmopt-optimize-pipeline`.
void registerLmoptOptimizePipeline();

#define GEN_PASS_REGISTRATION
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"

/// Registers every lmopt pass and named pipeline.
inline void registerAllLmoptPasses() {
  registerLmoptPasses();
  registerLmoptOptimizePipeline();
}

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_H
