//===- KernelCodegen.h - Generated CPU kernels ------------------*- C++ -*-===//
//
// Turns outlined kernel functions (lmopt ops on ranked tensors) into
// native code through upstream MLIR: convert-lmopt-to-linalg, bufferization,
// vectorization for the host CPU, LLVM in-process, and a shared object the
// bundle embeds (docs/cpu-backend.md).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_KERNELCODEGEN_H
#define LMOPT_TARGET_CPU_KERNELCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lmopt::cpu {

struct KernelCodegenOptions {
  /// LLVM CPU name; "host" asks LLVM for the machine's CPU.
  std::string cpu = "host";
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 3;
  /// Widest vectors the loop vectorizer should prefer, in bits; 0 keeps the
  /// CPU's tuning (which is 256 on several AVX-512 CPUs).
  unsigned preferVectorWidth = 512;
  /// When set, the kernels after fusion and bufferization (linalg on
  /// memrefs) are printed here (tests check what was fused and allocated).
  llvm::raw_ostream *bufferizedIROutput = nullptr;
  /// When set, the optimized LLVM IR is printed here (tests check what was
  /// vectorized).
  llvm::raw_ostream *optimizedIROutput = nullptr;
};

/// Compiles every `func.func` in `kernels` to one shared object.
///
/// Input contract: each function is public, takes its operands as ranked
/// tensors and returns its results as such tensors; its
/// body holds lmopt ops that convert-lmopt-to-linalg (or the data-movement
/// lowerings) handle, plus `arith.constant`s.
///
/// Output contract: for each function `@name` the shared object exports
/// `extern "C" void name(void **args)`, where `args[i]` is the data pointer of
/// operand i for i < #operands and then of each result, in order; buffers are
/// dense, row-major, 64-byte aligned, and results never alias operands. When
/// operands or results have dynamic dims, the next slot points at an int64
/// array of their sizes, operands then results, each in dim order. The
/// kernel writes every element of every result and nothing else. A kernel
/// whose work is one loop over independent rows (a normalization, softmax or
/// reduction, with what is fused into it) also exports `extern "C" void
/// __lmopt_part_<name>(void **args, int64_t part, int64_t parts)`, which does
/// share `part` of `parts` of those rows; calls for different parts may run
/// at the same time, and all `parts` of them together do what `name` does.
///
/// Failures are diagnostics at the offending op's location ("no CPU lowering
/// for 'lmopt.foo' in kernel 'k3' (node 'x')"), all offenders reported.
/// Environment failures (no linker, a failing link) are diagnostics on the
/// module naming the command and its output. `kernels` is not modified; its
/// context gets the bufferization and LLVM translation interfaces registered,
/// so calls sharing a context must not run concurrently.
FailureOr<std::vector<uint8_t>>
compileKernels(ModuleOp kernels, const KernelCodegenOptions &options);

/// The CPU features (of those the runtime can check,
/// lmopt::runtime::checkableCpuFeatures()) that kernels compiled with
/// `options` may use: the bundle's `requires` section lists them so that a
/// machine without one refuses the bundle instead of crashing.
llvm::Expected<std::vector<std::string>>
getKernelCpuFeatures(const KernelCodegenOptions &options);

} // namespace mlir::lmopt::cpu

#endif // LMOPT_TARGET_CPU_KERNELCODEGEN_H
