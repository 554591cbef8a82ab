//===- CompileDriver.h - Optimized module to a bundle -----------*- C++ -*-===//
//
// The phases of `lmopt-compile` after import, for any target: the
// registered optimization pipeline, an optional step of the caller's
// (quantization), the plan, the kernels and the bundle. Each phase is a
// method of its own (the quantization runner plans and compiles many
// variants with them); `run` composes them and tells an observer what each
// did, so that the tool only prints (docs/architecture.md, "Targets").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_COMPILEDRIVER_H
#define LMOPT_TARGET_COMMON_COMPILEDRIVER_H

#include "lmopt/Target/Common/BundleEmitter.h"
#include "lmopt/Target/Common/KvCacheEntries.h"
#include "lmopt/Target/Common/TrainingEntries.h"
#include "lmopt/Target/Common/PlanBuilder.h"
#include "lmopt/Target/TargetBackend.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt {

/// What the graph passes did, from the context's fusion report.
struct FusionSummary {
  /// {kind: {"fused": n, "near_misses": m}}, for the bundle's meta.
  llvm::json::Object counts;
  /// The report itself, near misses with their nodes and reasons.
  llvm::json::Object report;
  /// "near miss: attention at 'node': reason", one per near miss.
  std::vector<std::string> nearMissLines;
};

FusionSummary summarizeFusions(MLIRContext *context);

/// A plan's figures: what lmopt-compile prints after writing the bundle and
/// writes as its report's "plan".
struct PlanSummary {
  /// Steps by kind name ("linear"), and in all.
  std::map<std::string, int64_t> steps;
  int64_t numSteps = 0;
  int64_t numKernels = 0;
  int64_t weightsBytes = 0;
  int64_t arenaBytes = 0;
  int64_t naiveArenaBytes = 0;
  int64_t inPlaceLinears = 0;
  std::vector<PlanRewriteCount> rewrites;
  /// With CompileOptions::omitWeights, once the bundle is written: the
  /// weight ranges left out and their bytes.
  std::optional<std::pair<int64_t, int64_t>> omittedWeights;
  /// With CompileOptions::sparseWeights, once the bundle is written: the
  /// ranges stored compressed, their dense bytes and their stored bytes.
  struct SparseStorage {
    int64_t ranges = 0, denseBytes = 0, storedBytes = 0;
  };
  std::optional<SparseStorage> sparseWeights;
  /// Set once the bundle is written.
  std::optional<uint64_t> bundleBytes;

  llvm::json::Object toJSON() const;
};

/// The figures of every entry together: steps and kernels summed, the
/// largest arena.
PlanSummary summarizePlan(const BundlePlan &plan);

/// A plan's kernels as the target's payload, and what running them needs.
struct CompiledKernels {
  /// Empty when the plan has no kernels.
  std::vector<uint8_t> payload;
  /// The bundle's `requires` lines (TargetBackend::getRequirements).
  std::vector<std::string> requirements;
};

struct CompileOptions {
  TargetOptions target;
  PlanBuildOptions plan;
  /// Set: compile a decoder with past key/values into prefill and decode
  /// entries with its cache as state (KvCacheEntries.h); its maxShapes
  /// replace `plan.maxShapes`.
  std::optional<KvCacheOptions> kvCache;
  /// Set: compile training entries instead (TrainingEntries.h), after the
  /// training graph pipeline; its maxShapes replace `plan.maxShapes`.
  std::optional<TrainingOptions> training;
  /// The bundle `run` writes; empty stops after planning.
  std::string outputPath;
  /// The model's name in the bundle's meta.
  std::string modelName;
  /// Leave the large floating-point weights out of the bundle
  /// (lmopt/Format/OmittedWeights.h): it runs only with random weights, to
  /// be timed.
  bool omitWeights = false;
  /// Store the f32 weights that are 2:4 sparse (lmopt-prune's sparsity)
  /// compressed (lmopt/Format/SparseWeights.h); not with omitWeights.
  bool sparseWeights = false;
  /// Set: `lmopt-prune`'s options ("ffn=0.5 heads=0.5"), run after the
  /// graph pipeline, before narrowing and quantization.
  std::string prune;
  /// Set: `lmopt-expose-intermediates`'s options ("hidden-states"), run
  /// after the pruning.
  std::string expose;
};

/// How many phases lmopt-compile counts; import is the first, the caller's.
inline constexpr unsigned kNumCompilePhases = 5;

/// What CompileDriver::run reports as it goes; every method has a default
/// that does nothing.
class CompileObserver {
public:
  virtual ~CompileObserver();
  /// Phase `number` of kNumCompilePhases, `name`, ended after `seconds`;
  /// `detail` says what it made ("30 steps"), or is empty.
  virtual void phaseDone(unsigned number, StringRef name, double seconds,
                         StringRef detail);
  virtual void optimized(const FusionSummary &fusions);
  /// Between optimization and planning: may rewrite `module` (quantize
  /// it). `meta` is what the bundle will carry.
  virtual llvm::Error beforePlan(ModuleOp module, const BundleMeta &meta);
  /// With pruning, after the graph pipeline and before lmopt-prune: may
  /// annotate `module` (the activation statistics of a calibration run).
  virtual llvm::Error beforePrune(ModuleOp module);
  virtual void planned(const BundlePlan &plan);
  /// `description` is the requirements for the user, or empty.
  virtual void kernelsCompiled(const CompiledKernels &kernels,
                               StringRef description);
};

class CompileDriver {
public:
  CompileDriver(const TargetBackend &backend, CompileOptions options)
      : backend(backend), options(std::move(options)) {}

  const TargetBackend &getBackend() const { return backend; }
  const CompileOptions &getOptions() const { return options; }

  /// lmopt-optimize-pipeline, the registered graph pipeline, then the
  /// pruning (after `observer`'s beforePrune) and the narrowing. A failure
  /// that was diagnosed is a DiagnosedError.
  llvm::Error optimize(ModuleOp module,
                       CompileObserver *observer = nullptr) const;
  /// The plan of `module`: its @main as the entry `main`, or, with
  /// `kvCache`, prefill and decode entries (which replace @main). Not
  /// modified otherwise but for types the symbolic dims analysis makes
  /// static.
  FailureOr<BundlePlan> plan(ModuleOp module) const;
  /// The plan's kernels through the target's pipeline, and its
  /// requirements. A failure that was diagnosed is a DiagnosedError.
  llvm::Expected<CompiledKernels> compileKernels(const BundlePlan &plan) const;
  /// Writes the bundle (meta's target set to this driver's), without the
  /// `omitted` weight ranges or with the `sparse` ones compressed when
  /// given; returns its size.
  llvm::Expected<uint64_t>
  writeBundle(StringRef path, const BundlePlan &plan,
              const CompiledKernels &kernels, BundleMeta meta,
              const ::lmopt::runtime::OmittedWeights *omitted = nullptr,
              const ::lmopt::runtime::SparseWeights *sparse = nullptr) const;

  /// Phases 2 to 5 on `module` (imported; rewritten in place): optimize,
  /// `observer.beforePlan`, plan, and unless the output path is empty,
  /// kernels and write. Diagnosed failures are DiagnosedErrors.
  llvm::Expected<PlanSummary> run(ModuleOp module,
                                  CompileObserver &observer) const;

private:
  const TargetBackend &backend;
  CompileOptions options;
};

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_COMPILEDRIVER_H
