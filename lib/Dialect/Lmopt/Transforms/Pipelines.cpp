//===- Pipelines.cpp - named lmopt pass pipelines -------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void lmopt::buildLmoptOptimizePipeline(OpPassManager &pm) {
  pm.addPass(createEliminateDropoutPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void lmopt::registerLmoptOptimizePipeline() {
  PassPipelineRegistration<>(
      "lmopt-optimize-pipeline",
      "The default inference pipeline: dropout elimination, folding and CSE",
      buildLmoptOptimizePipeline);
}
