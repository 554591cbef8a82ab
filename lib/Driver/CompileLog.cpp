//===- CompileLog.cpp - What lmopt-compile prints as it goes --------------===//

#include "CompileLog.h"

#include "lmopt/Format/PlanShapes.h"
#include "lmopt/Target/Common/BundleEmitter.h"
#include "lmopt/Target/Common/TrainingReport.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

void mlir::lmopt::printPhase(llvm::raw_ostream &log, unsigned number,
                             llvm::StringRef name, double seconds,
                             llvm::StringRef detail) {
  std::string label = name.str() + " ";
  label.resize(std::max<size_t>(label.size(), 14), '.');
  log << llvm::formatv("[{0}/{1}] {2} {3:f1} s", number, kNumCompilePhases,
                       label, seconds);
  if (!detail.empty())
    log << "  (" << detail << ")";
  log << "\n";
}

llvm::Error CompileLog::beforePrune(ModuleOp module) {
  // After the calibration run: the snapshot reads the block importance it
  // attaches.
  if (quantizer)
    if (llvm::Error error = quantizer->measureForPruning(module))
      return error;
  beforePruning = PruneSnapshot::measure(module);
  return llvm::Error::success();
}

llvm::Error CompileLog::beforePlan(ModuleOp module, const BundleMeta &meta) {
  if (beforePruning) {
    afterPruning = PruneSnapshot::measure(module);
    printPruneReport(log, *beforePruning, *afterPruning);
  }
  return quantizer ? quantizer->run(module, meta) : llvm::Error::success();
}

void CompileLog::optimized(const FusionSummary &summary) {
  fusionReport = summary.report;
  nearMisses = summary.nearMissLines;
  std::map<std::string, int64_t> fired;
  for (const auto &[kind, value] : summary.counts)
    if (int64_t fused = value.getAsObject()->getInteger("fused").value_or(0))
      fired[kind.str()] = fused;
  log << "fusions:";
  if (fired.empty())
    log << " none";
  bool first = true;
  for (const auto &[kind, count] : fired) {
    log << (first ? " " : ", ") << kind << " " << count;
    first = false;
  }
  log << " (near misses: " << summary.nearMissLines.size() << ")\n";
  for (const std::string &line : summary.nearMissLines)
    log << "  " << line << "\n";
}

/// "symbols: input_ids.0 <= 8, ..." and the assumptions, for a plan with
/// symbolic dims.
static void printSymbols(llvm::raw_ostream &log, const rt::Plan &plan,
                         bool named) {
  if (!plan.isSymbolic())
    return;
  if (named)
    log << "entry '" << plan.name << "' ";
  log << "symbols:";
  for (auto [i, symbol] : llvm::enumerate(plan.symbols))
    log << (i ? ", " : " ") << symbol.name << " <= " << symbol.bound;
  log << "\nassumptions:";
  if (plan.assumptions.empty())
    log << " none";
  for (auto [i, assumption] : llvm::enumerate(plan.assumptions))
    log << (i ? ", " : " ")
        << rt::formatDimExpr(plan, plan.exprs[assumption.lhs])
        << (assumption.kind == rt::PlanAssumption::Kind::Equal ? " == "
                                                               : " <= ")
        << rt::formatDimExpr(plan, plan.exprs[assumption.rhs]);
  log << " (checked on every run)\n";
}

/// "entries:", "states:", mixed precision, dropout and saved activations.
static void printEntriesAndStates(llvm::raw_ostream &log,
                                  const BundlePlan &bundle) {
  if (bundle.entries.size() > 1) {
    log << "entries:";
    for (const TargetPlan &entry : bundle.entries)
      log << " " << entry.plan.name << " (" << entry.plan.steps.size()
          << " steps)";
    log << "\n";
  }
  uint64_t stateBytes = 0;
  for (const rt::PlanState &state : bundle.states)
    stateBytes += state.byteSize();
  if (!bundle.states.empty())
    log << "states: " << bundle.states.size() << " ("
        << bundle.states.front().name << " "
        << rt::dtypeName(bundle.states.front().dtype) << " "
        << rt::formatDims(bundle.states.front().dims)
        << (bundle.states.size() > 1 ? ", ..." : "") << "), " << stateBytes
        << " bytes in a session\n";
  if (std::optional<llvm::StringRef> precision =
          bundle.training.getString("precision"))
    log << "mixed precision: " << *precision
        << " products into f32; parameters, gradients and the "
           "optimizer f32\n";
  if (std::optional<int64_t> dropouts = bundle.training.getInteger("dropouts");
      dropouts && *dropouts)
    log << "dropout: " << *dropouts
        << " in training mode, masks from train_step's "
           "'dropout_seed' (--disable-dropout removes them)\n";
  if (const llvm::json::Object *memory = bundle.training.getObject("memory"))
    printSavedActivations(log, *memory);
}

void CompileLog::planned(const BundlePlan &bundle) {
  printEntriesAndStates(log, bundle);
  bool named = bundle.entries.size() > 1;
  for (const TargetPlan &entry : bundle.entries) {
    printSymbols(log, entry.plan, named);
    if (!dumpPlan)
      continue;
    if (named)
      listing << "entry '" << entry.plan.name << "':\n";
    printPlan(listing, entry, bundle.weights.size());
  }
  if (dumpPlan)
    for (const rt::PlanState &state : bundle.states)
      listing << "state '" << state.name << "' " << rt::dtypeName(state.dtype)
              << " " << rt::formatDims(state.dims) << " init "
              << rt::planStateInitName(state.init) << "\n";
  if (dumpKernels && bundle.kernels)
    bundle.kernels.get().print(listing);
  // Keep the listing ahead of the later phases' lines when both go to one
  // stream.
  listing.flush();
}

void mlir::lmopt::printSummary(llvm::raw_ostream &log,
                               const PlanSummary &summary,
                               llvm::StringRef outputPath) {
  log << "steps:";
  bool first = true;
  for (const auto &[kind, count] : summary.steps) {
    log << (first ? " " : ", ") << count << " " << kind;
    first = false;
  }
  log << " (" << summary.numSteps << " in all)\n";
  log << "kernels: " << summary.numKernels << "\n";
  log << "weights: " << summary.weightsBytes << " bytes\n";
  if (summary.omittedWeights && summary.omittedWeights->first == 0)
    log << "omitted weights: none (no f32/f16/bf16 weight of 1024 "
           "elements or more); the bundle has all its weights\n";
  else if (summary.omittedWeights)
    log << "omitted weights: " << summary.omittedWeights->first << " tensors, "
        << summary.omittedWeights->second
        << " bytes (--omit-weights: run the bundle with lmopt-run "
           "--random-weights=SEED, to time it only)\n";
  if (summary.sparseWeights && summary.sparseWeights->ranges == 0)
    log << "sparse weights: none (no f32 weight of 1024 elements or more is "
           "2:4 sparse; quantized weights are stored dense)\n";
  else if (summary.sparseWeights)
    log << "sparse weights: " << summary.sparseWeights->ranges
        << " tensors 2:4, " << summary.sparseWeights->denseBytes
        << " bytes stored in " << summary.sparseWeights->storedBytes
        << " (values and positions; expanded when a session loads them)\n";
  for (const PlanRewriteCount &rewrite : summary.rewrites)
    if (rewrite.count)
      log << rewrite.description << ": " << rewrite.count << "\n";
  log << "arena: " << summary.arenaBytes << " bytes (naive "
      << summary.naiveArenaBytes << " bytes";
  if (summary.naiveArenaBytes)
    log << llvm::formatv(", {0:f0}%", 100.0 * double(summary.arenaBytes) /
                                          double(summary.naiveArenaBytes));
  log << "; " << summary.inPlaceLinears << " in-place residuals)\n";
  log << "bundle: " << *summary.bundleBytes << " bytes -> " << outputPath
      << "\n";
}
