//===- ObjectEmission.cpp - LLVM IR to a kernel shared object -------------===//

#include "ObjectEmission.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::lmopt::cpu;

static llvm::CodeGenOptLevel getCodeGenOptLevel(unsigned optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::lmopt::cpu::createKernelTargetMachine(StringRef cpu, unsigned optLevel) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for '" + triple.str() +
                                   "': " + error);
  std::string cpuName = cpu.str();
  llvm::SubtargetFeatures features;
  if (cpu == "host") {
    cpuName = llvm::sys::getHostCPUName().str();
    for (const llvm::StringMapEntry<bool> &feature :
         llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.getKey(), feature.getValue());
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features.getString(), targetOptions, llvm::Reloc::PIC_,
      std::nullopt, getCodeGenOptLevel(optLevel)));
  if (!machine)
    return llvm::createStringError(
        "cannot create an LLVM target machine for '" + triple.str() +
        "', CPU '" + cpuName + "'");
  // An unknown CPU name only warns inside LLVM and falls back to a generic
  // CPU; a typo must not silently lose the vector units.
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpuName))
    return llvm::createStringError("LLVM does not know the CPU '" + cpuName +
                                   "' for '" + triple.str() + "'");
  return machine;
}

/// `name(void **args)`, or with `partitioned` `__lmopt_part_<name>(void
/// **args, int64_t part, int64_t parts)`: loads the pointers and sizes from
/// `args` and calls the implementation (for the whole kernel: part 0 of 1).
static void buildEntryPoint(llvm::Module &module, llvm::Function *impl,
                            const KernelEntryPoint &kernel, bool partEntry) {
  llvm::LLVMContext &context = module.getContext();
  auto *ptrType = llvm::PointerType::getUnqual(context);
  auto *sizeType = llvm::Type::getInt64Ty(context);
  SmallVector<llvm::Type *> params = {ptrType};
  if (partEntry)
    params.append({sizeType, sizeType});
  auto *entryType = llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                            params, /*isVarArg=*/false);
  llvm::Function *entry = llvm::Function::Create(
      entryType, llvm::GlobalValue::ExternalLinkage,
      partEntry ? "__lmopt_part_" + kernel.name : kernel.name, module);
  entry->addParamAttr(0, llvm::Attribute::NoAlias);
  entry->addParamAttr(0, llvm::Attribute::ReadOnly);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", entry));
  // The ABI's promise (non-null, 64-byte aligned) on each pointer, so it
  // survives inlining the implementation.
  llvm::MDNode *alignment = llvm::MDNode::get(
      context, llvm::ConstantAsMetadata::get(builder.getInt64(64)));
  llvm::MDNode *empty = llvm::MDNode::get(context, {});
  SmallVector<llvm::Value *> arguments;
  for (unsigned i = 0; i < kernel.numArguments; ++i) {
    llvm::Value *slot =
        builder.CreateConstInBoundsGEP1_64(ptrType, entry->getArg(0), i);
    llvm::LoadInst *pointer =
        builder.CreateAlignedLoad(ptrType, slot, llvm::Align(8));
    pointer->setMetadata(llvm::LLVMContext::MD_align, alignment);
    pointer->setMetadata(llvm::LLVMContext::MD_nonnull, empty);
    arguments.push_back(pointer);
  }
  if (partEntry)
    arguments.append({entry->getArg(1), entry->getArg(2)});
  else if (kernel.partitioned)
    arguments.append({builder.getInt64(0), builder.getInt64(1)});
  // Sizes of the dynamic dims: an int64 array after the data pointers.
  if (kernel.numSizes) {
    llvm::Value *slot = builder.CreateConstInBoundsGEP1_64(
        ptrType, entry->getArg(0), kernel.numArguments);
    llvm::LoadInst *sizes =
        builder.CreateAlignedLoad(ptrType, slot, llvm::Align(8));
    sizes->setMetadata(llvm::LLVMContext::MD_nonnull, empty);
    for (unsigned i = 0; i < kernel.numSizes; ++i)
      arguments.push_back(builder.CreateAlignedLoad(
          sizeType, builder.CreateConstInBoundsGEP1_64(sizeType, sizes, i),
          llvm::Align(8)));
  }
  builder.CreateCall(impl, arguments);
  builder.CreateRetVoid();
}

llvm::Error
mlir::lmopt::cpu::addKernelEntryPoints(llvm::Module &module,
                                       ArrayRef<KernelEntryPoint> kernels) {
  llvm::LLVMContext &context = module.getContext();
  auto *ptrType = llvm::PointerType::getUnqual(context);
  auto *sizeType = llvm::Type::getInt64Ty(context);
  for (const KernelEntryPoint &kernel : kernels) {
    llvm::Function *impl = module.getFunction(kernel.name);
    if (!impl || impl->isDeclaration())
      return llvm::createStringError("kernel '" + kernel.name +
                                     "' is missing from the LLVM module");
    unsigned numParts = kernel.partitioned ? 2 : 0;
    if (impl->arg_size() != kernel.numArguments + numParts + kernel.numSizes ||
        !impl->getReturnType()->isVoidTy() ||
        llvm::any_of(impl->args(), [&](const llvm::Argument &arg) {
          return arg.getType() != (arg.getArgNo() < kernel.numArguments
                                       ? static_cast<llvm::Type *>(ptrType)
                                       : sizeType);
        }))
      return llvm::createStringError(
          "kernel '" + kernel.name + "' has the LLVM signature '" +
          [&] {
            std::string text;
            llvm::raw_string_ostream os(text);
            impl->getFunctionType()->print(os);
            return text;
          }() +
          "', not " + std::to_string(kernel.numArguments) + " pointers, " +
          std::to_string(numParts) + " part indices and " +
          std::to_string(kernel.numSizes) + " sizes returning void");
    impl->setName("__lmopt_kernel_impl." + kernel.name);
    impl->setLinkage(llvm::GlobalValue::InternalLinkage);
    buildEntryPoint(module, impl, kernel, /*partEntry=*/false);
    if (kernel.partitioned)
      buildEntryPoint(module, impl, kernel, /*partEntry=*/true);
  }
  return llvm::Error::success();
}

void mlir::lmopt::cpu::optimizeKernelModule(llvm::Module &module,
                                            llvm::TargetMachine &machine,
                                            unsigned optLevel,
                                            unsigned preferVectorWidth) {
  module.setTargetTriple(machine.getTargetTriple());
  module.setDataLayout(machine.createDataLayout());
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    function.addFnAttr("target-cpu", machine.getTargetCPU());
    function.addFnAttr("target-features", machine.getTargetFeatureString());
    function.addFnAttr(llvm::Attribute::NoUnwind);
    // Some CPUs' tuning prefers 256-bit vectors; the kernels are streaming
    // loops that gain from the full width where the CPU has it.
    if (preferVectorWidth != 0)
      function.addFnAttr("prefer-vector-width",
                         std::to_string(preferVectorWidth));
  }

  llvm::LoopAnalysisManager loopAnalyses;
  llvm::FunctionAnalysisManager functionAnalyses;
  llvm::CGSCCAnalysisManager cgsccAnalyses;
  llvm::ModuleAnalysisManager moduleAnalyses;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = optLevel >= 2;
  tuning.SLPVectorization = optLevel >= 2;
  llvm::PassBuilder passBuilder(&machine, tuning);
  passBuilder.registerModuleAnalyses(moduleAnalyses);
  passBuilder.registerCGSCCAnalyses(cgsccAnalyses);
  passBuilder.registerFunctionAnalyses(functionAnalyses);
  passBuilder.registerLoopAnalyses(loopAnalyses);
  passBuilder.crossRegisterProxies(loopAnalyses, functionAnalyses,
                                   cgsccAnalyses, moduleAnalyses);
  llvm::OptimizationLevel level = llvm::OptimizationLevel::O0;
  if (optLevel == 1)
    level = llvm::OptimizationLevel::O1;
  else if (optLevel == 2)
    level = llvm::OptimizationLevel::O2;
  else if (optLevel >= 3)
    level = llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes =
      optLevel == 0 ? passBuilder.buildO0DefaultPipeline(level)
                    : passBuilder.buildPerModuleDefaultPipeline(level);
  passes.run(module, moduleAnalyses);
}

llvm::Expected<llvm::SmallVector<char, 0>>
mlir::lmopt::cpu::emitObjectFile(llvm::Module &module,
                                 llvm::TargetMachine &machine) {
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the LLVM target cannot emit object files");
  codegen.run(module);
  return object;
}

/// The system's C compiler driver, which knows the platform's linker flags.
static llvm::Expected<std::string> findLinkerDriver() {
  for (StringRef name : {"cc", "gcc", "clang"})
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name))
      return *path;
  return llvm::createStringError(
      "no C compiler driver ('cc', 'gcc' or 'clang') on PATH to link kernels");
}

static llvm::Expected<std::string> createTemporary(StringRef prefix,
                                                   StringRef suffix) {
  llvm::SmallString<128> path;
  if (std::error_code error =
          llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
    return llvm::createStringError("cannot create a temporary ." + suffix +
                                   " file: " + error.message());
  return std::string(path);
}

llvm::Expected<std::vector<uint8_t>>
mlir::lmopt::cpu::linkSharedObject(llvm::ArrayRef<char> object) {
  llvm::Expected<std::string> driver = findLinkerDriver();
  if (!driver)
    return driver.takeError();
  llvm::Expected<std::string> objectPath =
      createTemporary("lmopt-kernels", "o");
  if (!objectPath)
    return objectPath.takeError();
  llvm::FileRemover removeObject(*objectPath);
  llvm::Expected<std::string> libraryPath =
      createTemporary("lmopt-kernels", "so");
  if (!libraryPath)
    return libraryPath.takeError();
  llvm::FileRemover removeLibrary(*libraryPath);
  llvm::Expected<std::string> logPath = createTemporary("lmopt-link", "log");
  if (!logPath)
    return logPath.takeError();
  llvm::FileRemover removeLog(*logPath);

  {
    std::error_code error;
    llvm::raw_fd_ostream os(*objectPath, error);
    if (!error) {
      os.write(object.data(), object.size());
      os.close();
      error = os.error();
    }
    if (error)
      return llvm::createStringError("cannot write '" + *objectPath +
                                     "': " + error.message());
  }

  SmallVector<StringRef> args = {
      *driver, "-shared",           "-o", *libraryPath, *objectPath,
      "-lm",   "-Wl,--no-undefined"};
  std::string command = llvm::join(args, " ");
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(*logPath),
                                          StringRef(*logPath)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, redirects,
                                         0, 0, &message);
  if (status != 0) {
    std::string output;
    if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> log =
            llvm::MemoryBuffer::getFile(*logPath))
      output = (*log)->getBuffer().trim().str();
    return llvm::createStringError(
        "linking kernels failed: '" + command + "' " +
        (status < 0 ? "did not run: " + message
                    : "exited with " + std::to_string(status)) +
        (output.empty() ? "" : ": " + output));
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> library =
      llvm::MemoryBuffer::getFile(*libraryPath, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!library)
    return llvm::createStringError("cannot read the linked '" + *libraryPath +
                                   "': " + library.getError().message());
  StringRef bytes = (*library)->getBuffer();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}
