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
  // Elementwise subgraphs before the products, so the GELU can land in the
  // linear's epilogue.
  pm.addPass(createFuseGeluPass());
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
