//===- ModelRunner.h - Run a module on a target for measurement -*- C++ -*-===//
//
// Calibration and the quantization report run the optimized module on the
// calibration samples through the target itself (the compile driver's plan,
// kernels and bundle, then a runtime session), so that they measure what
// the bundle computes and at the target's speed. Probes expose every linear's
// input and output as extra results of @main. Kernel objects are cached by the
// kernels' IR, so the variants that only swap linears (one layer quantized at a
// time) compile their kernels once.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_QUANTIZATION_MODELRUNNER_H
#define LMOPT_QUANTIZATION_MODELRUNNER_H

#include "lmopt/Quantization/Calibration.h"
#include "lmopt/Runtime/Session.h"
#include "lmopt/Target/Common/CompileDriver.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::lmopt::quantization {

/// The layer name the report, the calibration table and `exclude=` globs use
/// for each `lmopt.linear` of @main, in program order: lmopt-quantize's
/// getLayerName, the first name in its location (the ONNX node the linear
/// was built at; "" without one).
std::vector<std::string> getLinearNames(func::FuncOp main);

/// What a probed module returns after @main's own results.
struct ProbeLayout {
  struct Linear {
    std::string name;
    /// Result indices of the linear's input (-1 when not probed, e.g. a
    /// quantized input) and of its output.
    int input = -1, output = -1;
  };
  unsigned numModelOutputs = 0;
  /// Every linear, in program order.
  std::vector<Linear> linears;
};

/// A copy of `module` whose @main also returns each linear's f32 input
/// (when `probeInputs`) and output (when `probeOutputs`); results are
/// shared when values repeat.
OwningOpRef<ModuleOp> addLinearProbes(ModuleOp module, bool probeInputs,
                                      bool probeOutputs, ProbeLayout &layout);

class ModelRunner {
public:
  /// Compiles with `backend` and `options` (the plan's own options are the
  /// defaults: no symbolic dims).
  ModelRunner(const TargetBackend &backend, TargetOptions options)
      : driver(backend, CompileOptions{std::move(options), {}, {}, {}}) {}
  ~ModelRunner();

  /// Plans and compiles `module` (not modified) and writes it as a bundle to
  /// `path` with `meta`; returns the bundle's size.
  llvm::Expected<uint64_t> writeBundle(ModuleOp module, llvm::StringRef path,
                                       const BundleMeta &meta = {});

  /// Compiles `module` into a temporary bundle and runs every sample;
  /// per sample, the outputs in @main's result order.
  llvm::Expected<std::vector<std::vector<::lmopt::runtime::NamedTensor>>>
  run(ModuleOp module, const CalibrationSet &samples);

  /// Compiles every module and runs them side by side, one sample at a
  /// time, handing `consume` the sample's outputs of each (in `modules`
  /// order); nothing is kept, so probed outputs of large models fit.
  using SampleConsumer = llvm::function_ref<void(
      size_t sample,
      llvm::ArrayRef<std::vector<::lmopt::runtime::NamedTensor>> outputs)>;
  llvm::Error runEach(llvm::ArrayRef<ModuleOp> modules,
                      const CalibrationSet &samples, SampleConsumer consume);

private:
  /// The plan's kernels, compiled once per distinct kernel module.
  llvm::Expected<const CompiledKernels *> compile(const BundlePlan &plan);

  /// A session of `module`, compiled into a temporary bundle.
  llvm::Expected<std::unique_ptr<::lmopt::runtime::Session>>
  open(ModuleOp module);

  CompileDriver driver;
  /// By the kernel module's text.
  std::map<std::string, CompiledKernels> kernelCache;
  std::vector<std::string> temporaries;
};

} // namespace mlir::lmopt::quantization

#endif // LMOPT_QUANTIZATION_MODELRUNNER_H
