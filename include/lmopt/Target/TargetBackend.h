//===- TargetBackend.h - What a compilation target implements ---*- C++ -*-===//
//
// A target (IREE's TargetBackend) is what `lmopt-compile --target=<name>`
// picks: it classifies the ops of the function being planned, emits the
// library steps it runs, rewrites the finished plan, compiles the outlined
// kernels into the payload its runtime device loads, and states what that
// device must have. Everything else (partitioning, weights, memory plan,
// symbolic dims, bundle writing) is shared in lib/Target/Common
// (docs/architecture.md, "Targets").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_TARGETBACKEND_H
#define LMOPT_TARGET_TARGETBACKEND_H

#include "lmopt/Target/Common/PlanBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::lmopt {

/// The element type the matrix products and attention compute in
/// (`lmopt-compile --precision`); everything else stays f32.
enum class Precision { FP32, FP16, BF16 };

/// "fp32", "fp16", "bf16": the flag's spelling, also written in the meta.
StringRef stringifyPrecision(Precision precision);

/// The precision `name` spells, if any.
std::optional<Precision> parsePrecision(StringRef name);

/// Every target's options in one struct, so that a tool fills it once from
/// its flags. Fields named after a target apply to that target only.
struct TargetOptions {
  /// Optimization level of the generated kernels, 0-3 (`-O`).
  unsigned optLevel = 2;
  /// cpu: the LLVM CPU name the kernels are compiled for (`--cpu`);
  /// "host" is this machine's.
  std::string cpu = "host";
  /// cpu: an int8 linear whose output only feeds a per-token int8 linear
  /// writes that output quantized (`--no-fuse-row-quantization` clears it).
  bool fuseRowQuantization = true;
  /// cpu: a bf16 linear whose output only feeds a kernel that casts it to
  /// bf16 writes bf16 itself (`--no-fuse-bf16-outputs` clears it).
  bool fuseBf16Outputs = true;
  /// cpu: an int8 linear whose output only feeds a kernel that quantizes it
  /// statically writes the quantized bytes itself
  /// (`--no-fuse-static-outputs` clears it).
  bool fuseStaticOutputs = true;
  /// cuda: the compute capability (major * 10 + minor) the generated
  /// kernels are compiled for (`--cuda-arch=sm_90`).
  unsigned cudaSmVersion = 90;
  /// Half precision: lmopt-narrow-precision runs after optimization.
  Precision precision = Precision::FP32;
};

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// The `--target` value ("cpu").
  virtual StringRef getName() const = 0;
  /// One line for `--help`.
  virtual StringRef getDescription() const = 0;
  /// The runtime device the plan's steps and kernels run on ("cpu").
  virtual StringRef getDeviceName() const = 0;

  /// An error when the target cannot run `options.precision` (saying what
  /// to use instead). The default runs f32 only.
  virtual llvm::Error checkPrecision(const TargetOptions &options) const;

  //===--------------------------------------------------------------------===//
  // Plan building (lmopt/Target/Common/PlanBuilder.h)
  //===--------------------------------------------------------------------===//

  /// The role of `op`, an op of the function being planned that is not a
  /// constant (the plan builder stores those itself). When the target cannot
  /// run `op`, a diagnostic at its location naming the op, its node and the
  /// reason, and failure; the builder reports every such op before failing.
  /// `symbolic`: the plan has symbolic dims, so types may be dynamic.
  virtual FailureOr<OpRole> classify(Operation *op, bool symbolic) const = 0;

  /// For a value that library steps read in place in a wider buffer (a
  /// result of an op classified View, or one a kernel group computes):
  /// that buffer's value. Null otherwise. The default reads the attention
  /// steps' views (AttentionPlan.h), which every target's attention step
  /// takes.
  virtual Value getViewSource(Value value) const;

  /// Emits the step(s) of `op`, classified LibraryStep, through `emitter`.
  virtual LogicalResult emitStep(Operation *op, PlanEmitter &emitter) const = 0;

  /// Rewrites the plan after partitioning and before memory planning (a
  /// fusion only the target's steps allow); reports what it did in
  /// `plan.rewrites`. The default does nothing.
  virtual void rewritePlan(TargetPlan &plan,
                           const TargetOptions &options) const;

  //===--------------------------------------------------------------------===//
  // Kernels
  //===--------------------------------------------------------------------===//

  /// Adds the target's registered kernel passes to `pm`: what
  /// serializeKernels runs on the outlined kernels once they are in linalg
  /// on tensors, down to the dialect it serializes.
  virtual void buildKernelPipeline(OpPassManager &pm,
                                   const TargetOptions &options) const = 0;

  /// Compiles `kernels` (TargetPlan::kernels, not modified) into the payload
  /// the runtime device loads. Failures are diagnostics, all offenders
  /// reported.
  virtual FailureOr<std::vector<uint8_t>>
  serializeKernels(ModuleOp kernels, const TargetOptions &options) const = 0;

  //===--------------------------------------------------------------------===//
  // Run-time requirements
  //===--------------------------------------------------------------------===//

  /// The lines of the bundle's `requires` section that running `plan`
  /// compiled with `options` needs (docs/bundle-format.md); a machine that
  /// lacks one refuses the bundle.
  virtual llvm::Expected<std::vector<std::string>>
  getRequirements(const BundlePlan &plan,
                  const TargetOptions &options) const = 0;

  /// `requirements` for the user, in one line; "" when none.
  virtual std::string
  describeRequirements(ArrayRef<std::string> requirements) const = 0;
};

/// Makes `backend` the target named backend->getName(). Registering a name
/// twice is a programmer error.
void registerTargetBackend(std::unique_ptr<TargetBackend> backend);

/// The target registered as `name`, or null.
const TargetBackend *lookupTargetBackend(StringRef name);

/// The registered targets' names, sorted.
std::vector<std::string> getRegisteredTargetBackends();

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_TARGETBACKEND_H
