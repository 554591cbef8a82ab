//===- PlanBuilder.h - Optimized IR to a CPU execution plan -----*- C++ -*-===//
//
// Partitions the optimized module's `@main` into plan steps (library steps for
// linear, attention and gather; generated kernels for maximal runs of the
// other ops), lays the constants out in one weights buffer, outlines the
// kernels into their own module, and plans the activation arena
// (docs/cpu-backend.md, "Plan building").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_PLANBUILDER_H
#define LMOPT_TARGET_CPU_PLANBUILDER_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Target/CPU/MemoryPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt::cpu {

/// The runtime dtype that holds elements of `type` (i1 as Bool), if any.
/// Quantized types map to their storage integers (sub-byte widths one per
/// byte).
std::optional<::lmopt::runtime::DType> getRuntimeDType(Type type);

struct PlanBuildOptions {
  /// Constants of at most this many elements (and splats) are cloned into
  /// the kernels that use them instead of being passed as weights.
  int64_t maxInlineConstantElements = 64;
  MemoryPlanOptions memory;
  /// An int8 linear whose output only feeds a per-token int8 linear writes
  /// that output quantized (QuantPlan.h, fuseRowQuantization).
  bool fuseRowQuantization = true;
  /// Bounds of the dynamic input dims, by input name, one per dim (a
  /// static dim's entry must equal it). Every dynamic dim needs one; the
  /// plan then has symbolic dims (docs/cpu-backend.md, "Bounded dynamic
  /// shapes").
  std::map<std::string, std::vector<int64_t>> maxShapes;
};

struct CpuPlan {
  ::lmopt::runtime::Plan plan;
  /// The `weights` section: every constant a step reads, once, each at a
  /// multiple of 64 bytes.
  std::vector<uint8_t> weights;
  /// One public `func.func` per Kernel step, named by the step's `entry`
  /// attribute, in the input contract of compileKernels. Empty when the plan
  /// has no Kernel step.
  OwningOpRef<ModuleOp> kernels;
  unsigned numKernels = 0;
  /// Per tensor, the tensor whose bytes it shares (itself if none).
  std::vector<uint32_t> aliasRoot;
  /// Int8 linears that quantize their output for the next one.
  unsigned fusedRowQuantizations = 0;
  MemoryPlanStats memory;
};

/// Builds the plan of `module`'s single `func.func @main`. Dynamic input
/// dims become plan symbols bounded by `options.maxShapes`; every other dim
/// must follow from them (SymbolicShapes), with the equalities it assumed
/// recorded as plan assumptions. Ops with no CPU lowering are all reported
/// as diagnostics at their locations before failing.
FailureOr<CpuPlan> buildCpuPlan(ModuleOp module,
                                const PlanBuildOptions &options = {});

} // namespace mlir::lmopt::cpu

#endif // LMOPT_TARGET_CPU_PLANBUILDER_H
