//===- CompileLog.h - What lmopt-compile prints as it goes ------*- C++ -*-===//
//
// The compile observer that prints each phase, the fusions and near misses,
// entries, states and symbols, and runs the quantization step between
// optimization and planning; and the summary printed after the bundle is
// written. Private to ModelCompiler.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DRIVER_COMPILELOG_H
#define LMOPT_LIB_DRIVER_COMPILELOG_H

#include "PruneReport.h"

#include "lmopt/Quantization/QuantizeDriver.h"
#include "lmopt/Target/Common/CompileDriver.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt {

/// "[n/5] name ...... 0.4 s  (detail)".
void printPhase(llvm::raw_ostream &log, unsigned number, llvm::StringRef name,
                double seconds, llvm::StringRef detail);

/// The figures after the bundle is written to `outputPath`.
void printSummary(llvm::raw_ostream &log, const PlanSummary &summary,
                  llvm::StringRef outputPath);

class CompileLog : public CompileObserver {
public:
  CompileLog(quantization::QuantizeDriver *quantizer, llvm::raw_ostream &log,
             llvm::raw_ostream &listing, bool dumpPlan, bool dumpKernels)
      : quantizer(quantizer), log(log), listing(listing), dumpPlan(dumpPlan),
        dumpKernels(dumpKernels) {}

  void phaseDone(unsigned number, llvm::StringRef name, double seconds,
                 llvm::StringRef detail) override {
    printPhase(log, number, name, seconds, detail);
  }
  void optimized(const FusionSummary &fusions) override;
  llvm::Error beforePrune(ModuleOp module) override;
  llvm::Error beforePlan(ModuleOp module, const BundleMeta &meta) override;
  void planned(const BundlePlan &bundle) override;
  void kernelsCompiled(const CompiledKernels &,
                       llvm::StringRef description) override {
    if (!description.empty())
      log << description << "\n";
  }

  /// The fusion report and its near-miss lines.
  llvm::json::Object fusionReport;
  std::vector<std::string> nearMisses;
  /// With --prune: the module before lmopt-prune and before planning.
  std::optional<PruneSnapshot> beforePruning, afterPruning;

private:
  quantization::QuantizeDriver *quantizer;
  llvm::raw_ostream &log;
  llvm::raw_ostream &listing;
  bool dumpPlan;
  bool dumpKernels;
};

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DRIVER_COMPILELOG_H
