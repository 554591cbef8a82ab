//===- CompileDriver.cpp - Optimized module to a bundle for a target ------===//

#include "lmopt/Target/Common/CompileDriver.h"

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Support/DiagnosedError.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"
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

PlanSummary mlir::lmopt::summarizePlan(const BundlePlan &bundle) {
  PlanSummary summary;
  summary.numKernels = bundle.numKernels;
  summary.weightsBytes = int64_t(bundle.weights.size());
  for (const TargetPlan &plan : bundle.entries) {
    for (const rt::PlanStep &step : plan.plan.steps)
      ++summary.steps[rt::stepKindName(step.kind)];
    summary.numSteps += int64_t(plan.plan.steps.size());
    summary.arenaBytes =
        std::max(summary.arenaBytes, int64_t(plan.memory.arenaSize));
    summary.naiveArenaBytes =
        std::max(summary.naiveArenaBytes, int64_t(plan.memory.naiveSize));
    summary.inPlaceLinears += plan.memory.inPlaceLinears;
    for (const PlanRewriteCount &rewrite : plan.rewrites) {
      auto known = llvm::find_if(summary.rewrites, [&](const auto &r) {
        return r.key == rewrite.key;
      });
      if (known == summary.rewrites.end())
        summary.rewrites.push_back(rewrite);
      else
        known->count += rewrite.count;
    }
  }
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
  if (omittedWeights) {
    json["omitted_weights"] = omittedWeights->first;
    json["omitted_weight_bytes"] = omittedWeights->second;
  }
  if (sparseWeights) {
    json["sparse_weights"] = sparseWeights->ranges;
    json["sparse_weight_dense_bytes"] = sparseWeights->denseBytes;
    json["sparse_weight_stored_bytes"] = sparseWeights->storedBytes;
  }
  return json;
}

CompileObserver::~CompileObserver() = default;
void CompileObserver::phaseDone(unsigned, StringRef, double, StringRef) {}
void CompileObserver::optimized(const FusionSummary &) {}
llvm::Error CompileObserver::beforePlan(ModuleOp, const BundleMeta &) {
  return llvm::Error::success();
}
void CompileObserver::planned(const BundlePlan &) {}
void CompileObserver::kernelsCompiled(const CompiledKernels &, StringRef) {}

llvm::Error CompileObserver::beforePrune(ModuleOp) {
  return llvm::Error::success();
}

llvm::Error CompileDriver::optimize(ModuleOp module,
                                    CompileObserver *observer) const {
  {
    PassManager graph(module.getContext());
    if (options.training && options.training->disableDropout)
      graph.addPass(createDisableDropoutPass());
    if (options.training)
      buildLmoptTrainingPipeline(graph);
    else
      buildLmoptOptimizePipeline(graph);
    if (failed(graph.run(module)))
      return makeDiagnosedError();
  }
  PassManager pm(module.getContext());
  // Gemms that did not become linears run as matrix products.
  pm.addPass(createDecomposeGemmPass());
  if (!options.prune.empty()) {
    if (observer)
      if (llvm::Error error = observer->beforePrune(module))
        return error;
    std::unique_ptr<Pass> prune = createPrunePass();
    if (failed(prune->initializeOptions(options.prune, [&](const Twine &msg) {
          return module.emitError("--prune: ") << msg;
        })))
      return makeDiagnosedError();
    pm.addPass(std::move(prune));
  }
  if (!options.expose.empty()) {
    std::unique_ptr<Pass> expose = createExposeIntermediatesPass();
    if (failed(expose->initializeOptions(options.expose, [&](const Twine &msg) {
          return module.emitError("--expose: ") << msg;
        })))
      return makeDiagnosedError();
    pm.addPass(std::move(expose));
  }
  // Training narrows after differentiating (plan()).
  if (options.target.precision != Precision::FP32 && !options.training) {
    NarrowPrecisionPassOptions narrow;
    narrow.dtype = options.target.precision == Precision::FP16 ? "f16" : "bf16";
    // An f16 cache would need f16 states; the cache stays f32 for now.
    narrow.keepKvCacheAttention = options.kvCache.has_value();
    pm.addPass(createNarrowPrecisionPass(narrow));
  }
  if (failed(pm.run(module)))
    return makeDiagnosedError();
  return llvm::Error::success();
}

FailureOr<BundlePlan> CompileDriver::plan(ModuleOp module) const {
  BundlePlan bundle;
  std::vector<EntrySpec> entries;
  WeightsBuilder weights;
  if (options.training) {
    FailureOr<TrainingEntries> training =
        buildTrainingEntries(module, *options.training, weights);
    if (failed(training))
      return failure();
    bundle.states = std::move(training->states);
    entries = std::move(training->entries);
    bundle.training = std::move(training->meta);
    // The backward ops' shape arithmetic folds like the forward's did.
    PassManager pm(module.getContext());
    // Mixed precision: the forward's and the backward's products read bf16
    // copies of their operands (the parameters' included) and accumulate
    // into f32; everything else, the parameters and the optimizer stay f32.
    if (options.target.precision == Precision::BF16) {
      NarrowPrecisionPassOptions narrow;
      narrow.dtype = "bf16";
      narrow.wideResults = true;
      pm.addPass(createNarrowPrecisionPass(narrow));
      bundle.training["precision"] = "bf16";
    }
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // Weight gradients read the activations in place, not a transposed copy.
    pm.addPass(createFoldLinearTransposePass());
    if (failed(pm.run(module)))
      return failure();
  } else if (options.kvCache) {
    FailureOr<KvCacheEntries> kv =
        buildKvCacheEntries(module, *options.kvCache);
    if (failed(kv))
      return failure();
    bundle.states = std::move(kv->states);
    entries = std::move(kv->entries);
  } else {
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return module.emitError("the module has no func.func @main to compile");
    entries.push_back({"main", main, options.plan.maxShapes});
  }
  for (EntrySpec &spec : entries) {
    PlanBuildOptions planOptions = options.plan;
    planOptions.maxShapes = std::move(spec.maxShapes);
    planOptions.states = bundle.states;
    // Kernels of several entries share one module.
    if (entries.size() > 1)
      planOptions.kernelPrefix = spec.name + "_";
    FailureOr<TargetPlan> planned = buildTargetPlan(
        spec.func, backend, options.target, planOptions, weights);
    if (failed(planned))
      return failure();
    planned->plan.name = spec.name;
    bundle.numKernels += planned->numKernels;
    if (planned->kernels) {
      if (!bundle.kernels)
        bundle.kernels = std::move(planned->kernels);
      else
        for (Operation &op : llvm::make_early_inc_range(
                 planned->kernels->getBody()->getOperations()))
          op.moveBefore(bundle.kernels->getBody(),
                        bundle.kernels->getBody()->end());
    }
    bundle.entries.push_back(std::move(*planned));
  }
  bundle.weights = weights.takeBytes();
  return bundle;
}

llvm::Expected<CompiledKernels>
CompileDriver::compileKernels(const BundlePlan &plan) const {
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
CompileDriver::writeBundle(StringRef path, const BundlePlan &plan,
                           const CompiledKernels &kernels, BundleMeta meta,
                           const rt::OmittedWeights *omitted,
                           const rt::SparseWeights *sparse) const {
  meta.target = backend.getName().str();
  meta.weightsOmitted = omitted != nullptr;
  return ::mlir::lmopt::writeBundle(path, plan, backend.getDeviceName(),
                                    kernels.payload, buildMetaJSON(plan, meta),
                                    kernels.requirements, omitted, sparse);
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
  // Training in bf16 is the target-neutral wide-results form (plan()).
  if (options.training && options.target.precision != Precision::FP32) {
    if (options.target.precision != Precision::BF16)
      return llvm::createStringError(
          "--train --precision=fp16 needs dynamic loss scaling, which is not "
          "built yet; use --precision=bf16");
  } else if (llvm::Error error = backend.checkPrecision(options.target)) {
    return std::move(error);
  }
  if (llvm::Error error = optimize(module, &observer))
    return error;
  observer.phaseDone(2, "optimize", clock.lap(), "");
  FusionSummary fusions = summarizeFusions(module.getContext());
  observer.optimized(fusions);
  BundleMeta meta;
  meta.modelName = options.modelName;
  meta.target = backend.getName().str();
  meta.fusions = std::move(fusions.counts);
  meta.precision = stringifyPrecision(options.target.precision).str();
  if (llvm::Error error = observer.beforePlan(module, meta))
    return std::move(error);

  clock.lap();
  FailureOr<BundlePlan> planned = plan(module);
  if (failed(planned))
    return makeDiagnosedError();
  // A copy: observers read the plan's training facts too.
  meta.training = planned->training;
  PlanSummary summary = summarizePlan(*planned);
  std::string detail = std::to_string(summary.numSteps) + " steps";
  if (planned->entries.size() > 1)
    detail += " in " + std::to_string(planned->entries.size()) + " entries";
  observer.phaseDone(3, "plan", clock.lap(), detail);
  observer.planned(*planned);
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
  std::optional<rt::OmittedWeights> omitted;
  if (options.omitWeights) {
    omitted = rt::selectOmittedWeights(
        planned->getProgram(backend.getDeviceName()), planned->weights.size());
    summary.omittedWeights = {int64_t(omitted->ranges.size()),
                              int64_t(omitted->omittedBytes())};
    // Nothing to leave out: a normal bundle, which runs without a seed.
    if (omitted->ranges.empty())
      omitted.reset();
  }
  std::optional<rt::SparseWeights> sparse;
  if (options.sparseWeights && !omitted) {
    sparse = rt::selectSparseWeights(
        planned->getProgram(backend.getDeviceName()), planned->weights.data(),
        planned->weights.size());
    summary.sparseWeights = {int64_t(sparse->ranges.size()),
                             int64_t(sparse->denseBytes()),
                             int64_t(sparse->compressedBytes())};
    if (sparse->ranges.empty())
      sparse.reset();
  }
  llvm::Expected<uint64_t> bundleBytes =
      writeBundle(options.outputPath, *planned, *kernels, meta,
                  omitted ? &*omitted : nullptr, sparse ? &*sparse : nullptr);
  if (!bundleBytes) {
    // A failed write says so already ("cannot write 'out.lmopt': No space
    // left on device"); the other messages get the path here.
    std::string message = llvm::toString(bundleBytes.takeError());
    std::string quoted = "'" + options.outputPath + "'";
    if (llvm::StringRef(message).starts_with("cannot write " + quoted))
      return llvm::createStringError(message);
    return llvm::createStringError("cannot write " + quoted + ": " + message);
  }
  observer.phaseDone(5, "write", clock.lap(), "");
  summary.bundleBytes = *bundleBytes;
  return summary;
}
