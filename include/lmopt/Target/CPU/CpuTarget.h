//===- CpuTarget.h - The CPU target -----------------------------*- C++ -*-===//
//
// `--target=cpu`: library steps run by oneDNN and the runtime's own CPU
// executors (linear, quantized linear, attention, gather, matmul), the
// other ops as kernels LLVM compiles for the host CPU into a shared object,
// and the CPU features those kernels use as the bundle's requirements
// (docs/cpu-backend.md).
//
// Options (TargetOptions): `optLevel` and `cpu` for the kernels' code
// generation, `fuseRowQuantization` for the plan rewrite that lets an int8
// linear write its output quantized for the next one.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_CPUTARGET_H
#define LMOPT_TARGET_CPU_CPUTARGET_H

#include "lmopt/Target/TargetBackend.h"

#include <memory>

namespace mlir::lmopt::cpu {

std::unique_ptr<TargetBackend> createCpuTargetBackend();

/// Registers the CPU target as "cpu".
void registerCpuTargetBackend();

} // namespace mlir::lmopt::cpu

#endif // LMOPT_TARGET_CPU_CPUTARGET_H
