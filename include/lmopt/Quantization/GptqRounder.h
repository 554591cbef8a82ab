//===- GptqRounder.h - GPTQ behind the quantize pass ------------*- C++ -*-===//
//
// The quantize pass's WeightRounder for int4 GPTQ: each linear's weight goes
// through gptqQuantize (Gptq.h) with the second moments calibration measured
// for its input. The pass depends only on the interface; tools that
// calibrate build this and hand it over in QuantizeOptions.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_QUANTIZATION_GPTQROUNDER_H
#define LMOPT_QUANTIZATION_GPTQROUNDER_H

#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"
#include "lmopt/Quantization/Gptq.h"

#include "llvm/ADT/StringMap.h"

#include <functional>
#include <memory>

namespace mlir::lmopt::quantization {

class GptqRounder : public WeightRounder {
public:
  /// Called after each linear, for progress lines: its layer name, N, K,
  /// the seconds GPTQ took and its statistics.
  using LayerCallback =
      std::function<void(StringRef layer, int64_t n, int64_t k, double seconds,
                         const GptqStats &stats)>;

  /// `hessians`: the second moments of each layer's input (linears sharing
  /// an input share one), by layer name.
  explicit GptqRounder(llvm::StringMap<std::shared_ptr<const Hessian>> hessians,
                       LayerCallback onLayer = {});

  /// Fails, with a diagnostic on `linear`, when `layer` has no second
  /// moments or ones of another width, or when GPTQ cannot factor them.
  LogicalResult round(Operation *linear, StringRef layer, ArrayRef<float> w,
                      int64_t n, int64_t k, int64_t blockSize,
                      RoundingGrid &grid) override;

private:
  llvm::StringMap<std::shared_ptr<const Hessian>> hessians;
  LayerCallback onLayer;
};

} // namespace mlir::lmopt::quantization

#endif // LMOPT_QUANTIZATION_GPTQROUNDER_H
