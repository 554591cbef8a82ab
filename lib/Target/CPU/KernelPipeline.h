//===- KernelPipeline.h - lmopt kernels to the LLVM dialect -----*- C++ -*-===//
//
// The MLIR half of kernel code generation: the kernel contract check, the
// lowering to linalg with its "no CPU lowering" diagnostics, and the pass
// pipeline from linalg on tensors to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_KERNELPIPELINE_H
#define LMOPT_TARGET_CPU_KERNELPIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
class Pass;
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

/// The unit attribute LowerKernelRowLoopsPass puts on a function that it
/// gave `part` and `parts` arguments.
inline constexpr llvm::StringLiteral kPartitionedAttrName = "lmopt.partitioned";

/// The bufferization, deallocation and LLVM translation interfaces the
/// pipeline needs.
void registerKernelCodegenInterfaces(DialectRegistry &registry);

/// Checks the input contract (only public func.funcs with bodies, ranked
/// tensors in and out) and returns the entry points, one per function;
/// every violation is reported.
FailureOr<SmallVector<KernelEntryPoint>> checkKernelModule(ModuleOp module);

/// Runs convert-lmopt-to-linalg and reports every lmopt op it left as
/// "no CPU lowering for 'lmopt.foo' in kernel 'k'".
LogicalResult lowerKernelsToLinalg(ModuleOp module);

/// Tiles a kernel that reads a reduction over the rows of its last generic
/// with scf.forall and fuses the producers in (KernelRowLoops.cpp).
std::unique_ptr<Pass> createTileKernelRowsPass();

/// On buffers: each scf.forall becomes an scf.for; a kernel that is one such
/// loop gets `part`/`parts` arguments and kPartitionedAttrName.
std::unique_ptr<Pass> createLowerKernelRowLoopsPass();

/// linalg on tensors to linalg on memrefs: elementwise fusion, one-shot
/// bufferization with results as out-params, temporaries on the stack or
/// deallocated.
void buildKernelBufferizationPipeline(OpPassManager &pm);

/// linalg on memrefs to the LLVM dialect: loops, polynomial math,
/// bare-pointer functions (a dynamic-shaped memref argument becomes a bare
/// pointer plus one trailing index argument per dynamic dim).
void buildKernelToLLVMPipeline(OpPassManager &pm);

} // namespace mlir::lmopt::cpu

#endif // LMOPT_TARGET_CPU_KERNELPIPELINE_H
