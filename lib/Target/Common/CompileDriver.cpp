//===- CompileDriver.cpp - Optimized module to a bundle for a target ------===//

#include "lmopt/Target/Common/CompileDriver.h"

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Support/DiagnosedError.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

#include <chrono>

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

FusionSummary mlir::lmopt::summarizeFusions(MLIRContext *context) {
  std::string text;
  llvm::raw_string_ostream os(text);
  getFusionReport(context).writeJSON(os);
  FusionSummary summary;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return summary;
  }
  const llvm::json::Object *fusions =
      parsed->getAsObject() ? parsed->getAsObject()->getObject("fusions")
                            : nullptr;
  if (!fusions)
    return summary;
  summary.report = *fusions;
  for (const auto &[kind, value] : *fusions) {
    const llvm::json::Object *record = value.getAsObject();
    if (!record)
      continue;
    int64_t fused = record->getInteger("fused").value_or(0);
    int64_t missed = 0;
    if (const llvm::json::Array *misses = record->getArray("near_misses")) {
      missed = int64_t(misses->size());
      for (const llvm::json::Value &miss : *misses) {
        const llvm::json::Object *entry = miss.getAsObject();
        if (!entry)
          continue;
        summary.nearMissLines.push_back(
            ("near miss: " + kind.str() + " at '" +
             entry->getString("node").value_or("").str() +
             "': " + entry->getString("reason").value_or("").str()));
      }
    }
    summary.counts[kind] =
        llvm::json::Object{{"fused", fused}, {"near_misses", missed}};
  }
  return summary;
}

PlanSummary mlir::lmopt::summarizePlan(const TargetPlan &plan) {
  PlanSummary summary;
  for (const rt::PlanStep &step : plan.plan.steps)
    ++summary.steps[rt::stepKindName(step.kind)];
  summary.numSteps = int64_t(plan.plan.steps.size());
  summary.numKernels = plan.numKernels;
  summary.weightsBytes = int64_t(plan.weights.size());
  summary.arenaBytes = int64_t(plan.plan.arenaSize());
  summary.naiveArenaBytes = int64_t(plan.memory.naiveSize);
  summary.inPlaceLinears = plan.memory.inPlaceLinears;
  summary.rewrites = plan.rewrites;
  return summary;
}

llvm::json::Object PlanSummary::toJSON() const {
  llvm::json::Object stepCounts;
  for (const auto &[kind, count] : steps)
    stepCounts[kind] = count;
  llvm::json::Object json{
      {"steps", std::move(stepCounts)},
      {"kernels", numKernels},
      {"weights_bytes", weightsBytes},
      {"arena_bytes", arenaBytes},
      {"naive_arena_bytes", naiveArenaBytes},
      {"in_place_linears", inPlaceLinears},
  };
  for (const PlanRewriteCount &rewrite : rewrites)
    json[rewrite.key] = rewrite.count;
  if (bundleBytes)
    json["bundle_bytes"] = int64_t(*bundleBytes);
  return json;
}

CompileObserver::~CompileObserver() = default;
void CompileObserver::phaseDone(unsigned, StringRef, double, StringRef) {}
void CompileObserver::optimized(const FusionSummary &) {}
llvm::Error CompileObserver::beforePlan(ModuleOp, const BundleMeta &) {
  return llvm::Error::success();
}
void CompileObserver::planned(const TargetPlan &) {}
void CompileObserver::kernelsCompiled(const CompiledKernels &, StringRef) {}

LogicalResult CompileDriver::optimize(ModuleOp module) const {
  PassManager pm(module.getContext());
  buildLmoptOptimizePipeline(pm);
  return pm.run(module);
}

FailureOr<TargetPlan> CompileDriver::plan(ModuleOp module) const {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return module.emitError("the module has no func.func @main to compile");
  return buildTargetPlan(main, backend, options.target, options.plan);
}

llvm::Expected<CompiledKernels>
CompileDriver::compileKernels(const TargetPlan &plan) const {
  CompiledKernels compiled;
  if (plan.numKernels > 0) {
    FailureOr<std::vector<uint8_t>> payload =
        backend.serializeKernels(*plan.kernels, options.target);
    if (failed(payload))
      return makeDiagnosedError();
    compiled.payload = std::move(*payload);
  }
  llvm::Expected<std::vector<std::string>> requirements =
      backend.getRequirements(plan, options.target);
  if (!requirements)
    return requirements.takeError();
  compiled.requirements = std::move(*requirements);
  return compiled;
}

llvm::Expected<uint64_t>
CompileDriver::writeBundle(StringRef path, const TargetPlan &plan,
                           const CompiledKernels &kernels,
                           BundleMeta meta) const {
  meta.target = backend.getName().str();
  return ::mlir::lmopt::writeBundle(path, plan, kernels.payload,
                                    buildMetaJSON(plan.plan, meta),
                                    kernels.requirements);
}

namespace {
/// Seconds since construction or the last call.
class PhaseClock {
public:
  double lap() {
    auto now = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(now - start).count();
    start = now;
    return seconds;
  }

private:
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
};
} // namespace

llvm::Expected<PlanSummary>
CompileDriver::run(ModuleOp module, CompileObserver &observer) const {
  PhaseClock clock;
  if (failed(optimize(module)))
    return makeDiagnosedError();
  observer.phaseDone(2, "optimize", clock.lap(), "");
  FusionSummary fusions = summarizeFusions(module.getContext());
  observer.optimized(fusions);
  BundleMeta meta;
  meta.modelName = options.modelName;
  meta.target = backend.getName().str();
  meta.fusions = std::move(fusions.counts);
  if (llvm::Error error = observer.beforePlan(module, meta))
    return std::move(error);

  clock.lap();
  FailureOr<TargetPlan> planned = plan(module);
  if (failed(planned))
    return makeDiagnosedError();
  observer.phaseDone(3, "plan", clock.lap(),
                     std::to_string(planned->plan.steps.size()) + " steps");
  observer.planned(*planned);
  PlanSummary summary = summarizePlan(*planned);
  if (options.outputPath.empty())
    return summary;

  clock.lap();
  llvm::Expected<CompiledKernels> kernels = compileKernels(*planned);
  if (!kernels)
    return kernels.takeError();
  observer.phaseDone(4, "kernels", clock.lap(),
                     std::to_string(planned->numKernels) + " kernels");
  observer.kernelsCompiled(*kernels,
                           backend.describeRequirements(kernels->requirements));

  clock.lap();
  llvm::Expected<uint64_t> bundleBytes =
      writeBundle(options.outputPath, *planned, *kernels, meta);
  if (!bundleBytes)
    return llvm::createStringError(
        "cannot write '" + options.outputPath +
        "': " + llvm::toString(bundleBytes.takeError()));
  observer.phaseDone(5, "write", clock.lap(), "");
  summary.bundleBytes = *bundleBytes;
  return summary;
}
