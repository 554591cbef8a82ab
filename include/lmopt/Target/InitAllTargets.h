//===- InitAllTargets.h - Register every compilation target -----*- C++ -*-===//
//
// What tools call before they look a target up by name (as upstream's
// InitAllDialects.h): a tool that links a target library gets its target.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_INITALLTARGETS_H
#define LMOPT_TARGET_INITALLTARGETS_H

#include "lmopt/Target/CPU/CpuTarget.h"
#include "lmopt/Target/CUDA/CudaTarget.h"

namespace mlir::lmopt {

/// Registers every target lmopt has; calling it again does nothing.
inline void registerAllTargetBackends() {
  static bool registered = [] {
    cpu::registerCpuTargetBackend();
    cuda::registerCudaTargetBackend();
    return true;
  }();
  (void)registered;
}

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_INITALLTARGETS_H
