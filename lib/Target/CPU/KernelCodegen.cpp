//===- KernelCodegen.cpp - generated CPU kernels --------------------------===//
//
// compileKernels composes the two halves: KernelPipeline (MLIR, from lmopt
// ops to the LLVM dialect) and ObjectEmission (LLVM, to a shared object).
// The caller's module is left as it was; the pipeline runs on a clone.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CPU/KernelCodegen.h"

#include "lmopt/Target/CPU/KernelPipeline.h"
#include "ObjectEmission.h"

#include "lmopt/Format/Requirements.h"
#include "lmopt/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::lmopt::cpu;

/// Reports an environment or LLVM failure as a diagnostic on the module.
static LogicalResult emitLLVMError(ModuleOp module, llvm::Error error) {
  emitError(module.getLoc())
      << "kernel code generation: " << llvm::toString(std::move(error));
  return failure();
}

FailureOr<std::vector<uint8_t>>
mlir::lmopt::cpu::compileKernels(ModuleOp kernels,
                                 const KernelCodegenOptions &options) {
  if (options.optLevel > 3)
    return emitError(kernels.getLoc()) << "kernel optimization level "
                                       << options.optLevel << " is outside 0-3";
  FailureOr<SmallVector<KernelEntryPoint>> entryPoints =
      checkKernelModule(kernels);
  if (failed(entryPoints))
    return failure();

  MLIRContext *context = kernels.getContext();
  DialectRegistry registry;
  registerKernelCodegenInterfaces(registry);
  context->appendDialectRegistry(registry);

  OwningOpRef<ModuleOp> module = kernels.clone();
  if (failed(lowerKernelsToLinalg(*module)))
    return failure();
  PassManager bufferize(context, ModuleOp::getOperationName());
  buildKernelBufferizationPipeline(bufferize);
  if (failed(bufferize.run(*module)))
    return failure();
  if (options.bufferizedIROutput)
    module->print(*options.bufferizedIROutput);
  for (KernelEntryPoint &entry : *entryPoints)
    if (auto func = module->lookupSymbol<func::FuncOp>(entry.name))
      entry.partitioned = func->hasAttr(kPartitionedAttrName);
  PassManager toLLVM(context, ModuleOp::getOperationName());
  buildKernelToLLVMPipeline(toLLVM);
  if (failed(toLLVM.run(*module)))
    return failure();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "lmopt_kernels");
  if (!llvmModule)
    return emitError(kernels.getLoc())
           << "kernel code generation: cannot translate to LLVM IR";
  if (llvm::Error error = addKernelEntryPoints(*llvmModule, *entryPoints))
    return emitLLVMError(kernels, std::move(error));

  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createKernelTargetMachine(options.cpu, options.optLevel);
  if (!machine)
    return emitLLVMError(kernels, machine.takeError());
  optimizeKernelModule(*llvmModule, **machine, options.optLevel,
                       options.preferVectorWidth);
  if (options.optimizedIROutput)
    llvmModule->print(*options.optimizedIROutput, nullptr);

  llvm::Expected<llvm::SmallVector<char, 0>> object =
      emitObjectFile(*llvmModule, **machine);
  if (!object)
    return emitLLVMError(kernels, object.takeError());
  llvm::Expected<std::vector<uint8_t>> library = linkSharedObject(*object);
  if (!library)
    return emitLLVMError(kernels, library.takeError());
  return std::move(*library);
}

llvm::Expected<std::vector<std::string>>
mlir::lmopt::cpu::getKernelCpuFeatures(const KernelCodegenOptions &options) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createKernelTargetMachine(options.cpu, options.optLevel);
  if (!machine)
    return machine.takeError();
  const llvm::MCSubtargetInfo *info = (*machine)->getMCSubtargetInfo();
  std::vector<std::string> features;
  for (const char *name : ::lmopt::runtime::checkableCpuFeatures())
    if (info->checkFeatures(std::string("+") + name))
      features.push_back(name);
  return features;
}
