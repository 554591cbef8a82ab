//===- ConvertLmoptToLinalg.cpp - the convert-lmopt-to-linalg pass --------===//
//
// Composes the pattern families (elementwise, reductions, data movement,
// indexing) with the greedy driver: an op is lowered when its pattern accepts
// its form and is left otherwise, which a partial conversion would need a
// legality callback repeating each pattern's checks to express.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Conversion/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_CONVERTLMOPTTOLINALGPASS
#include "lmopt/Conversion/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

void mlir::lmopt::populateLmoptToLinalgPatterns(RewritePatternSet &patterns) {
  populateLmoptElementwiseToLinalgPatterns(patterns);
  populateLmoptReductionToLinalgPatterns(patterns);
  populateLmoptDataMovementToLinalgPatterns(patterns);
  populateLmoptIndexingToLinalgPatterns(patterns);
  populateLmoptQuantizationToLinalgPatterns(patterns);
}

namespace {

struct ConvertLmoptToLinalgPass
    : lmopt::impl::ConvertLmoptToLinalgPassBase<ConvertLmoptToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLmoptToLinalgPatterns(patterns);
    // Only lmopt ops are rewritten; nothing the patterns create is folded.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    config.enableFolding(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    foldStorageCasts(getOperation());
  }
};

} // namespace
