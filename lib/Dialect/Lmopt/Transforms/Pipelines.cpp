//===- Pipelines.cpp - named lmopt pass pipelines -------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void lmopt::buildLmoptOptimizePipeline(OpPassManager &pm) {
  // Inert dropouts go first: they sit inside the attention and residual
  // subgraphs the fusions match. Canonicalization then folds the shape
  // arithmetic and composes transposes so the matchers see one form.
  pm.addPass(createEliminateDropoutPass());
  pm.addPass(createCanonicalizerPass());
  // Normalizations before the products: a residual add that feeds a layer
  // norm becomes a skip_layer_norm rather than a linear's residual.
  pm.addPass(createFuseLayerNormPass());
  pm.addPass(createFuseSkipLayerNormPass());
  // GELU before the products, so it can land in the linear's epilogue.
  pm.addPass(createFuseGeluPass());
  // Rotary embeddings before attention: the attention then reads the
  // rotated queries and keys from one op each.
  pm.addPass(createFuseRotaryPass());
  // Attention matches on the raw projections' results, whether or not they
  // are linears yet; the QKV merge needs the linears.
  pm.addPass(createFuseAttentionPass());
  pm.addPass(createFuseLinearPass());
  // Models quantized by other tools: their dequantize/integer-product
  // subgraphs become quantized linears, which run on the low-bit kernels.
  pm.addPass(createFoldQuantizedLinearPass());
  pm.addPass(createFuseQkvPass());
  // What reads constants only is computed once here (DeBERTa's
  // relative-position projections), after the fusions made it one op.
  pm.addPass(createFoldConstantsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void lmopt::buildLmoptTrainingPipeline(OpPassManager &pm) {
  pm.addPass(createEliminateDropoutPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFuseLayerNormPass());
  pm.addPass(createFuseSkipLayerNormPass());
  pm.addPass(createFuseGeluPass());
  pm.addPass(createFuseAttentionPass());
  pm.addPass(createFuseLinearPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void lmopt::registerLmoptOptimizePipeline() {
  PassPipelineRegistration<>(
      "lmopt-optimize-pipeline",
      "The default inference pipeline: dropout elimination, folding, "
      "fusions and CSE",
      buildLmoptOptimizePipeline);
}
