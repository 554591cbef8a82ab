//===- QuantizeDriver.h - The quantization step of a compile ----*- C++ -*-===//
//
// What `lmopt-compile --quantize` does between graph optimization and
// planning (docs/quantization.md, "lmopt-compile"): calibration on the
// target itself (ModelRunner), the lmopt-quantize pass, the accuracy report
// and the per-layer sensitivity search; after the bundle is written, the
// size summary. It prints what it did to the stream it is given and returns
// failures as errors (a DiagnosedError when diagnostics said why).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_QUANTIZATION_QUANTIZEDRIVER_H
#define LMOPT_QUANTIZATION_QUANTIZEDRIVER_H

#include "lmopt/Target/Common/BundleEmitter.h"
#include "lmopt/Target/Common/TrainingEntries.h"
#include "lmopt/Target/TargetBackend.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt::quantization {

/// lmopt-compile's quantization flags, one field each; an optional field is
/// set when its flag was given.
struct QuantizeDriverOptions {
  /// --quantize: a mode of getQuantizeModes(), or "" to calibrate only
  /// (then calibrationTableOut is what the step is for).
  std::string mode;
  /// --quantize-embeddings.
  bool quantizeEmbeddings = false;
  /// --calibration: the samples (.npz).
  std::string calibrationFile;
  /// --calibration-method: minmax, percentile, percentile:P or entropy.
  std::string calibrationMethod = "minmax";
  /// --calibration-table-out.
  std::string calibrationTableOut;
  /// --exclude: globs of linears kept f32.
  std::vector<std::string> exclude;
  /// --block-size (int4-weight).
  std::optional<unsigned> blockSize;
  /// --asymmetric (int4-weight).
  bool asymmetric = false;
  /// --int4-method: rtn or gptq.
  std::optional<std::string> int4Method;
  /// --quantized-mlir-out.
  std::string quantizedMlirOut;
  /// --quantize-attention: auto, bf16 or f32 (parseAttentionPrecision).
  std::string attention = "auto";
  /// --quantize-report was given (the caller writes the report).
  bool writeReport = false;
  /// --sensitivity[=N]: "" for the default count.
  std::optional<std::string> sensitivity;
  /// --sensitivity-target: the output cosine the suggested exclude list
  /// must reach.
  double sensitivityTarget = 0.99;
  /// --prune's criterion reads activation statistics (wanda, activation):
  /// the --calibration samples measure them before pruning, and
  /// --calibration needs no --quantize.
  bool pruneCalibration = false;
  /// --prune=layers=N ranks encoder layers by block importance: the
  /// --calibration samples measure it before pruning.
  bool pruneBlockImportance = false;
  /// --prune's criterion=gradient: the loss (--loss) whose gradients with
  /// respect to unit masks rank the units, measured on the --calibration
  /// samples, which then hold its labels.
  std::optional<TrainingOptions> pruneGradientLoss;
};

/// The modes --quantize accepts.
ArrayRef<StringRef> getQuantizeModes();

/// Checks the options alone, before a model is read; the error names the
/// flag and what it needs.
llvm::Error checkQuantizeOptions(const QuantizeDriverOptions &options);

struct QuantizeState;

class QuantizeDriver {
public:
  /// `options` passed checkQuantizeOptions. Calibration and measurements
  /// run on `backend` compiled with `targetOptions`; messages go to `log`.
  QuantizeDriver(QuantizeDriverOptions options, const TargetBackend &backend,
                 TargetOptions targetOptions, llvm::raw_ostream &log);
  ~QuantizeDriver();

  /// Calibrates, quantizes `module` in place and prints the accuracy report
  /// (and the sensitivity search when asked); `meta` is what the bundle will
  /// carry, for the f32 bundle that the size ratio compares with.
  llvm::Error run(ModuleOp module, const BundleMeta &meta);
  /// Before pruning: runs the --calibration samples through `module` and
  /// attaches the linear input statistics lmopt-prune's calibration
  /// criteria read, and the layers' block importance `layers=N` reads.
  llvm::Error measureForPruning(ModuleOp module);
  /// After the bundle is written: prints the size summary and returns the
  /// quantization report (docs/quantization.md, "--quantize-report").
  llvm::json::Object finish(uint64_t bundleBytes);

private:
  QuantizeDriverOptions options;
  const TargetBackend &backend;
  TargetOptions targetOptions;
  llvm::raw_ostream &log;
  std::unique_ptr<QuantizeState> state;
};

} // namespace mlir::lmopt::quantization

#endif // LMOPT_QUANTIZATION_QUANTIZEDRIVER_H
