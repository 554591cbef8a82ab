//===- MemoryPlan.h - Static activation arena for a plan --------*- C++ -*-===//
//
// Places every arena tensor of a plan in one activation arena: a live range
// per buffer over step indices, then a greedy best-fit assignment by size.
// Works on the runtime's plan data model only (no IR), so the rules are the
// ones the executor sees: tensors that share a buffer are listed in
// `aliasRoot`, and a Linear step may accumulate its residual in place.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_MEMORYPLAN_H
#define LMOPT_TARGET_COMMON_MEMORYPLAN_H

#include "lmopt/Format/Plan.h"

#include <cstdint>
#include <vector>

namespace mlir::lmopt {

struct MemoryPlanOptions {
  /// Let a Linear step write its output over a residual that dies there.
  bool inPlaceResidual = true;
};

struct MemoryPlanStats {
  /// Bytes of the arenas after packing (every device's together; the plan's
  /// arenaSizes has each).
  uint64_t arenaSize = 0;
  /// Sum of the 64-byte rounded sizes of all arena buffers: what an
  /// allocator that never reuses memory would need.
  uint64_t naiveSize = 0;
  /// Linear steps whose output took its residual's bytes.
  unsigned inPlaceLinears = 0;
};

/// Assigns the offset of every Arena tensor of `plan` and its arenaSize.
///
/// `aliasRoot[i]` is the tensor whose bytes tensor i shares (i itself for a
/// buffer of its own); an alias gets its root's offset and keeps the root
/// alive as long as it is used. Outputs live to the end of the plan. A
/// buffer is live from the first step that writes it to the last step that
/// reads it, inclusive, so a step's results never overlap its operands
/// except for an in-place residual, which updates `aliasRoot`.
MemoryPlanStats planMemory(::lmopt::runtime::Plan &plan,
                           std::vector<uint32_t> &aliasRoot,
                           const MemoryPlanOptions &options = {});

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_MEMORYPLAN_H
