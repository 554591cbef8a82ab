//===- KernelCodegenUnavailable.cpp - compileKernels without a generator --===//
//
// Built only when KernelCodegen.cpp is absent: plans still build, and a
// model that needs generated kernels fails with a diagnostic, never a link
// error.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CPU/KernelCodegen.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

FailureOr<std::vector<uint8_t>>
mlir::lmopt::cpu::compileKernels(ModuleOp kernels,
                                 const KernelCodegenOptions &) {
  return kernels.emitError(
      "this build of lmopt has no CPU kernel generator; the plan needs "
      "generated kernels");
}
