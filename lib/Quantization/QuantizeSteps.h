//===- QuantizeSteps.h - The pieces of the quantization step ----*- C++ -*-===//
//
// What QuantizeDriver composes, in files by concern: calibration with the
// Hessians GPTQ needs (CalibrationRun.cpp), the accuracy report
// (AccuracyReport.cpp) and the sensitivity search (Sensitivity.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_QUANTIZATION_QUANTIZESTEPS_H
#define LMOPT_LIB_QUANTIZATION_QUANTIZESTEPS_H

#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"
#include "lmopt/Quantization/BlockImportance.h"
#include "lmopt/Quantization/Calibration.h"
#include "lmopt/Quantization/GptqRounder.h"
#include "lmopt/Quantization/ModelRunner.h"
#include "lmopt/Quantization/QuantizeDriver.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::lmopt::quantization {

/// The f32 elements of a model output or probe.
inline const float *floatData(const ::lmopt::runtime::NamedTensor &tensor) {
  return tensor.tensor.as<float>();
}

/// What calibration measured for the quantize pass.
struct CalibrationStats {
  /// int8-static: each linear input's range.
  llvm::StringMap<InputRange> ranges;
  /// int4 GPTQ: each linear input's second moments.
  llvm::StringMap<std::shared_ptr<const Hessian>> hessians;
};

/// True when int4 weights are rounded with GPTQ: asked for, or by default
/// with calibration data.
bool useGptq(const QuantizeDriverOptions &options);

/// The quantize pass's options from `options`, but for `exclude`, with
/// what calibration measured.
QuantizeOptions getQuantizeOptions(const QuantizeDriverOptions &options,
                                   ArrayRef<std::string> exclude,
                                   const CalibrationStats &stats);

/// Runs the quantize pass on `module` with getQuantizeOptions; its
/// failures are diagnostics.
LogicalResult quantize(ModuleOp module, const QuantizeDriverOptions &options,
                       ArrayRef<std::string> exclude,
                       const CalibrationStats &stats);

/// A glob that matches exactly `name` (the pass's globs are
/// llvm::GlobPattern, where `\` escapes).
std::string literalGlob(StringRef name);

/// Per linear of @main, in program order: its layer name (the pass's, else
/// its location) and whether its weight is no longer f32.
std::vector<std::pair<std::string, bool>> getQuantizedLinears(ModuleOp module);

/// Runs `module` with probes on every sample of `set`: each linear input's
/// range (by `method`) and, with `gptq`, its Hessian. Writes the
/// calibration table to `tableOut` unless it is empty; prints a summary.
llvm::Expected<CalibrationStats> calibrate(ModelRunner &runner, ModuleOp module,
                                           const CalibrationSet &set,
                                           const CalibrationMethod &method,
                                           bool gptq, StringRef tableOut,
                                           llvm::raw_ostream &log);

/// Which tokens of sample `sample` are text: with an `attention_mask`
/// input of [batch, seq] (i64 or i32), those it does not mask out, in
/// order; else none (every token counts).
std::optional<std::vector<bool>> calibrationTokenMask(const CalibrationSet &set,
                                                      size_t sample);

/// Runs `module` with probes on every sample of `set` and attaches to each
/// linear the statistics of its input that lmopt-prune's calibration
/// criteria read (PruneImportance.h); prints a summary.
llvm::Error measureActivationStats(ModelRunner &runner, ModuleOp module,
                                   const CalibrationSet &set,
                                   llvm::raw_ostream &log);

/// Runs `module`'s loss (`lossOptions`) and backward pass on every sample
/// of `calibrationFile`, which holds the loss's labels besides the model's
/// inputs, and attaches to each linear that reads an attention's or
/// another linear's output the sums over samples of |dL/dm| for a mask on
/// each input feature and head (PruneImportance.h, the gradient
/// criterion); prints a summary. `unlabelled` gets the samples without
/// the labels, for the other measurements.
llvm::Error measureGradientImportance(
    ModelRunner &runner, ModuleOp module, StringRef calibrationFile,
    const TrainingOptions &lossOptions, llvm::raw_ostream &log,
    std::optional<CalibrationSet> &unlabelled);

/// The min over model outputs of the cosine of `module`'s outputs against
/// `reference` (per sample, per output).
llvm::Expected<double> outputCosine(
    ModelRunner &runner, ModuleOp module, const CalibrationSet &set,
    const std::vector<std::vector<::lmopt::runtime::NamedTensor>> &reference);

/// Runs the f32 and quantized modules with probes side by side, prints the
/// per-layer and per-output errors, worst first, and adds them to
/// `report`.
llvm::Error reportAccuracy(ModelRunner &runner, ModuleOp fp32,
                           ModuleOp quantized, const CalibrationSet &set,
                           llvm::json::Object &report, llvm::raw_ostream &log);

/// Quantizes one of `layers` at a time, prints the most damaging, then
/// grows an exclude list (worst first) until the outputs reach the target
/// cosine; adds both to `report`.
llvm::Error searchSensitivity(ModelRunner &runner, ModuleOp fp32,
                              ArrayRef<std::string> layers,
                              const CalibrationSet &set,
                              const CalibrationStats &stats,
                              const QuantizeDriverOptions &options,
                              llvm::json::Object &report,
                              llvm::raw_ostream &log);

} // namespace mlir::lmopt::quantization

#endif // LMOPT_LIB_QUANTIZATION_QUANTIZESTEPS_H
