//===- ModelCompiler.h - A model file to a bundle, as one call --*- C++ -*-===//
//
// The whole of `lmopt-compile` behind its flags: import (.onnx with pinned
// shapes and values, or .mlir), the checks on dynamic inputs and bounds,
// optional quantization or training entries, and the compile driver's
// phases, with the progress lines and summary the tool prints. The tool
// and the Python package both call it, so they accept the same options and
// print the same messages (docs/python.md).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DRIVER_MODELCOMPILER_H
#define LMOPT_DRIVER_MODELCOMPILER_H

#include "lmopt/Quantization/QuantizeDriver.h"
#include "lmopt/Target/Common/CompileDriver.h"
#include "lmopt/Target/Common/TrainingEntries.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt {

/// One field per lmopt-compile flag (docs/user-guide.md, "lmopt-compile").
struct ModelCompilerOptions {
  /// The model: a .onnx file, or a .mlir module with a func.func @main.
  std::string inputPath;
  /// The bundle; empty only with dumpPlan or dumpKernels.
  std::string outputPath;
  /// A registered target backend's name.
  std::string target = "cpu";
  unsigned optLevel = 2;
  std::string cpu = "host";
  std::string cudaArch = "sm_90";
  std::string precision = "fp32";
  /// name:1x128, name:1,-1, name:8x128 as the flags spell them.
  std::vector<std::string> inputShapes;
  std::vector<std::string> inputValues;
  std::vector<std::string> maxShapes;
  std::string inputShapesFrom;
  int64_t kvCache = 0;
  /// With kvCache: prefill returns every prompt position's logits.
  bool prefillAllLogits = false;
  bool dumpPlan = false;
  bool dumpKernels = false;
  bool fuseRowQuantization = true;
  bool fuseBf16Outputs = true;
  bool fuseStaticOutputs = true;
  bool omitWeights = false;
  /// "ffn=0.5,heads=0.5": structured pruning (lmopt-prune's options,
  /// comma-separated); empty: none.
  std::string prune;
  /// The loss (--loss) of --prune's criterion=gradient; unset: the
  /// default, cross-entropy of the first output against `labels`.
  std::optional<TrainingOptions> pruneLoss;
  /// "hidden-states,/model/node": intermediate values returned as extra
  /// outputs (lmopt-expose-intermediates); empty: none.
  std::string expose;
  /// Set: the quantization step runs between optimization and planning.
  std::optional<quantization::QuantizeDriverOptions> quantize;
  /// Set: compile training entries (checked against the other options).
  std::optional<TrainingOptions> training;
  /// --disable-dropout without training is refused.
  bool disableDropout = false;
};

/// What a successful compile produced besides the bundle.
struct ModelCompileResult {
  PlanSummary summary;
  /// The fusion report: counts and near misses by kind.
  llvm::json::Object fusions;
  /// The near misses, one line each ("why a fusion did not fire").
  std::vector<std::string> nearMisses;
  /// With a quantization mode: the quantization report.
  std::optional<llvm::json::Object> quantization;
  /// With --prune: the pruning report (docs/compression.md, "Report").
  std::optional<llvm::json::Object> pruning;

  /// {"fusions": ..., "plan": ...}, as --report writes it.
  llvm::json::Object toJSON() const;
};

/// Registers the passes and target backends once per process.
void registerModelCompiler();

/// The registered targets, "cpu, cuda", for messages and help.
std::string getModelCompilerTargets();

/// Compiles `options.inputPath`. Progress, diagnostics and the summary go to
/// `log` (the tool's stderr), the --dump-plan/--dump-kernels listings to
/// `listing`. Failures have been printed to `log` and are DiagnosedErrors.
llvm::Expected<ModelCompileResult>
compileModel(const ModelCompilerOptions &options, llvm::raw_ostream &log,
             llvm::raw_ostream &listing);

} // namespace mlir::lmopt

#endif // LMOPT_DRIVER_MODELCOMPILER_H
