//===- Passes.h - CPU kernel code generation passes -------------*- C++ -*-===//
//
// The lmopt-specific steps of the CPU kernel pipeline, each registered so
// that lmopt-opt can run it alone (Passes.td says what each expects).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_PASSES_H
#define LMOPT_TARGET_CPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::lmopt::cpu {

/// The unit attribute lmopt-lower-kernel-row-loops puts on a function that
/// it gave `part` and `parts` arguments.
inline constexpr llvm::StringLiteral kPartitionedAttrName = "lmopt.partitioned";

/// The unit attribute lmopt-tile-kernel-rows (with `independent-roots`) puts
/// on a function whose row loops read nothing another of its loops writes,
/// so that each loop can be split between threads on its own.
inline constexpr llvm::StringLiteral kIndependentRowLoopsAttrName =
    "lmopt.independent_row_loops";

#define GEN_PASS_DECL
#include "lmopt/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lmopt/Target/CPU/Passes.h.inc"

} // namespace mlir::lmopt::cpu

#endif // LMOPT_TARGET_CPU_PASSES_H
