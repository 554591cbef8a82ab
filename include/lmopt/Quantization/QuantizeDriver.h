//===- Quantize.h - lmopt-compile's quantization flags ----------*- C++ -*-===//
//
// `--quantize` and its companions (docs/quantization.md, "lmopt-compile"):
// calibration, the lmopt-quantize pass, the accuracy report and the
// per-layer sensitivity search. Kept apart from the tool's other flags.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOOLS_LMOPT_COMPILE_QUANTIZE_H
#define LMOPT_TOOLS_LMOPT_COMPILE_QUANTIZE_H

#include "lmopt/Target/CPU/BundleEmitter.h"
#include "lmopt/Target/CPU/KernelCodegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"

#include <memory>

namespace lmopt_compile {

llvm::cl::OptionCategory &getQuantizeCategory();

struct QuantizeState;

/// Runs between graph optimization and planning when `--quantize` (or a
/// flag that needs it) is given.
class QuantizeStep {
public:
  QuantizeStep();
  ~QuantizeStep();

  /// True when any quantization flag was given.
  static bool requested();
  /// Checks the flags alone; prints the error and fails on bad ones.
  mlir::LogicalResult checkFlags();
  /// Calibrates, quantizes `module` in place and prints the accuracy report
  /// (and the sensitivity search when asked); `meta` is what the bundle will
  /// carry, for the f32 bundle that the size ratio compares with.
  mlir::LogicalResult run(mlir::ModuleOp module,
                          const mlir::lmopt::cpu::KernelCodegenOptions &codegen,
                          const mlir::lmopt::cpu::BundleMeta &meta);
  /// After the bundle is written: the size summary and the JSON report.
  mlir::LogicalResult finish(uint64_t bundleBytes);

private:
  std::unique_ptr<QuantizeState> state;
};

} // namespace lmopt_compile

#endif // LMOPT_TOOLS_LMOPT_COMPILE_QUANTIZE_H
