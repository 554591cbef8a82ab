//===- ObjectEmission.h - LLVM IR to a kernel shared object -----*- C++ -*-===//
//
// The LLVM half of kernel code generation: the `name(void **args)` entry
// points, the host target machine, LLVM's optimization pipeline, the object
// file and the shared object linked by the system's compiler driver.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_OBJECTEMISSION_H
#define LMOPT_TARGET_CPU_OBJECTEMISSION_H

#include "lmopt/Target/CPU/KernelPipeline.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::lmopt::cpu {

/// A target machine for `cpu` ("host": this machine's CPU and features),
/// position-independent code, at LLVM optimization level `optLevel` (0-3).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createKernelTargetMachine(StringRef cpu, unsigned optLevel);

/// Renames each kernel's implementation to an internal symbol and defines
/// `extern "C" void name(void **args)` calling it with the loaded pointers;
/// for a partitioned kernel also `__lmopt_part_<name>(void **args, int64_t
/// part, int64_t parts)`, which runs that share of its rows.
llvm::Error addKernelEntryPoints(llvm::Module &module,
                                 ArrayRef<KernelEntryPoint> kernels);

/// Sets the module's triple and data layout and every function's CPU,
/// features and preferred vector width (0: the CPU's default), then runs
/// LLVM's default pipeline at `optLevel`.
void optimizeKernelModule(llvm::Module &module, llvm::TargetMachine &machine,
                          unsigned optLevel, unsigned preferVectorWidth);

/// The object file for `module`.
llvm::Expected<llvm::SmallVector<char, 0>>
emitObjectFile(llvm::Module &module, llvm::TargetMachine &machine);

/// Links `object` into a shared object with `cc -shared ... -lm` and returns
/// its bytes; temporary files are removed.
llvm::Expected<std::vector<uint8_t>>
linkSharedObject(llvm::ArrayRef<char> object);

} // namespace mlir::lmopt::cpu

#endif // LMOPT_TARGET_CPU_OBJECTEMISSION_H
