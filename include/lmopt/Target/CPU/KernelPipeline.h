//===- KernelPipeline.h - lmopt kernels to the LLVM dialect -----*- C++ -*-===//
//
// The MLIR half of kernel code generation: the kernel contract check, the
// lowering to linalg with its "no CPU lowering" diagnostics, and the pass
// pipeline from linalg on tensors to the LLVM dialect (its own passes are
// declared in lmopt/Target/CPU/Passes.h).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_KERNELPIPELINE_H
#define LMOPT_TARGET_CPU_KERNELPIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace mlir::lmopt::cpu {

/// One exported kernel: its symbol, how many data pointers `args` holds, and
/// how many dynamic dims its operands and results have (their sizes are an
/// int64 array that `args[numArguments]` points at). A partitioned kernel's
/// implementation takes `part` and `parts` after the pointers (before the
/// sizes) and also gets the entry point `__lmopt_part_<name>`.
struct KernelEntryPoint {
  std::string name;
  unsigned numArguments = 0;
  unsigned numSizes = 0;
  bool partitioned = false;
};

/// The bufferization, deallocation and LLVM translation interfaces the
/// pipeline needs.
void registerKernelCodegenInterfaces(DialectRegistry &registry);

/// Checks the input contract (only public func.funcs with bodies, ranked
/// tensors in and out) and returns the entry points, one per function;
/// every violation is reported.
FailureOr<SmallVector<KernelEntryPoint>> checkKernelModule(ModuleOp module);

/// Runs convert-lmopt-to-linalg and reports every lmopt op it left as
/// "no <target> lowering for 'lmopt.foo' in kernel 'k'" (the CUDA target
/// shares this front half of the pipeline).
LogicalResult lowerKernelsToLinalg(ModuleOp module, StringRef target = "CPU");

/// linalg on tensors to linalg on memrefs: elementwise fusion, one-shot
/// bufferization with results as out-params, temporaries on the stack or
/// deallocated.
void buildKernelBufferizationPipeline(OpPassManager &pm);

/// The part of it every target's kernels take: one-shot bufferization with
/// identity layouts at the function boundary, repeated results copied, and
/// results (of static or run-time size) as the caller's out-parameters.
void buildKernelBufferizePasses(OpPassManager &pm);

/// linalg on memrefs to the LLVM dialect: loops, polynomial math,
/// bare-pointer functions (a dynamic-shaped memref argument becomes a bare
/// pointer plus one trailing index argument per dynamic dim).
void buildKernelToLLVMPipeline(OpPassManager &pm);

} // namespace mlir::lmopt::cpu

#endif // LMOPT_TARGET_CPU_KERNELPIPELINE_H
