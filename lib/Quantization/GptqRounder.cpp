//===- GptqRounder.cpp - GPTQ behind the quantize pass --------------------===//

#include "lmopt/Quantization/GptqRounder.h"

#include "mlir/IR/Diagnostics.h"

#include <chrono>

using namespace mlir;
using namespace mlir::lmopt::quantization;

GptqRounder::GptqRounder(
    llvm::StringMap<std::shared_ptr<const Hessian>> hessians,
    LayerCallback onLayer)
    : hessians(std::move(hessians)), onLayer(std::move(onLayer)) {}

LogicalResult GptqRounder::round(Operation *linear, StringRef layer,
                                 ArrayRef<float> w, int64_t n, int64_t k,
                                 int64_t blockSize, RoundingGrid &grid) {
  auto it = hessians.find(layer);
  if (it == hessians.end() || !it->second)
    return linear->emitError()
           << "no calibration statistics (input second moments) for linear '"
           << layer << "'; GPTQ needs them";
  const Hessian &hessian = *it->second;
  if (hessian.size() != k)
    return linear->emitError() << "calibration statistics of linear '" << layer
                               << "' are for K = " << hessian.size()
                               << ", its weight has K = " << k;
  auto start = std::chrono::steady_clock::now();
  GptqOptions options;
  options.blockSize = blockSize;
  GptqStats stats;
  if (!gptqQuantize(hessian, w.data(), n, grid, options, stats))
    return linear->emitError()
           << "GPTQ cannot factor the input second moments of linear '" << layer
           << "' (not finite, or not positive definite even with dampening "
           << stats.lambda << ")";
  if (onLayer)
    onLayer(
        layer, n, k,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        stats);
  return success();
}
