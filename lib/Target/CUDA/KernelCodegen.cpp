//===- KernelCodegen.cpp - generated CUDA kernels -------------------------===//
//
// compileCudaKernels: the CPU's front half (contract check, lowering to
// linalg), GPU fusion, the CPU's row tiling (one row per iteration) and
// bufferization, the mapping onto blocks and threads (KernelMapping.cpp),
// then gpu.func kernels in one gpu.module, NVVM, and the cubin ptxas makes
// (gpu-module-to-binary). The caller's module is left as it was.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CUDA/KernelCodegen.h"

#include "KernelMapping.h"

#include "lmopt/Format/CudaKernels.h"
#include "lmopt/Target/CPU/KernelPipeline.h"
#include "lmopt/Target/CPU/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cuda;

/// Threads per block of every generated kernel: 8 warps, enough to hide
/// latency on a row of a few hundred elements.
static constexpr unsigned kBlockSize = 256;
static constexpr StringLiteral kGpuModuleName = "lmopt_kernels";

static void registerCudaCodegenInterfaces(DialectRegistry &registry) {
  cpu::registerKernelCodegenInterfaces(registry);
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm lowers the other dialects through their
  // ConvertToLLVM interfaces (mlir-opt registers them all).
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

/// The CUDA toolkit to take ptxas and libdevice from: the option, else
/// $CUDA_HOME, else /usr/local/cuda.
static std::string getToolkitPath(const CudaCodegenOptions &options) {
  if (!options.toolkitPath.empty())
    return options.toolkitPath;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  return "/usr/local/cuda";
}

/// Linalg on tensors to buffers, with GPU fusion and one row per iteration.
static void buildGpuBufferizationPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(cpu::createRelaxKernelFloatsPass());
  cpu::TileKernelRowsPassOptions tileOptions;
  tileOptions.rank1RowTile = 1;
  pm.addNestedPass<func::FuncOp>(cpu::createTileKernelRowsPass(tileOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  cpu::buildKernelBufferizePasses(pm);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Moves every (mapped) function into one gpu.module as a kernel gpu.func
/// of the same name, its shared buffers as workgroup attributions.
static void outlineKernels(ModuleOp module, const CudaCodegenOptions &options) {
  MLIRContext *context = module.getContext();
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  auto target = NVVM::NVVMTargetAttr::get(
      context, options.optLevel, "nvptx64-nvidia-cuda",
      ("sm_" + llvm::Twine(options.smVersion)).str());
  auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), kGpuModuleName,
                                            b.getArrayAttr({target}));
  // Constants bufferized into memref.globals go with the kernels.
  for (auto global :
       llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
    global->moveBefore(gpuModule.getBody(), gpuModule.getBody()->end());
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  for (func::FuncOp func : funcs) {
    b.setInsertionPointToEnd(gpuModule.getBody());
    auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getSymName(),
                                         func.getFunctionType());
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    kernel.setKnownBlockSizeAttr(
        b.getDenseI32ArrayAttr({int32_t(kBlockSize), 1, 1}));
    kernel.getBody().getBlocks().clear();
    kernel.getBody().takeBody(func.getBody());
    Block &entry = kernel.getBody().front();
    entry.walk([&](func::ReturnOp ret) {
      OpBuilder rb(ret);
      gpu::ReturnOp::create(rb, ret.getLoc());
      ret.erase();
    });
    SmallVector<memref::AllocOp> shared;
    kernel.walk([&](memref::AllocOp alloc) {
      if (llvm::isa_and_nonnull<gpu::AddressSpaceAttr>(
              alloc.getType().getMemorySpace()))
        shared.push_back(alloc);
    });
    for (memref::AllocOp alloc : shared) {
      BlockArgument buffer =
          kernel.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
      alloc.getResult().replaceAllUsesWith(buffer);
      alloc.erase();
    }
    func.erase();
  }
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
}

/// gpu dialect to NVVM inside the gpu.module.
static void buildGpuToNVVMPipeline(OpPassManager &pm) {
  OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
  gpuPm.addPass(createLowerAffinePass());
  gpuPm.addPass(memref::createExpandStridedMetadataPass());
  gpuPm.addPass(createLowerAffinePass());
  gpuPm.addPass(createSCFToControlFlowPass());
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createCSEPass());
  ConvertGpuOpsToNVVMOpsOptions nvvmOptions;
  nvvmOptions.useBarePtrCallConv = true;
  nvvmOptions.indexBitwidth = 64;
  gpuPm.addPass(createConvertGpuOpsToNVVMOps(nvvmOptions));
  gpuPm.addPass(createReconcileUnrealizedCastsPass());
  gpuPm.addPass(createCanonicalizerPass());
}

/// The bytes of the one object gpu-module-to-binary left in `module`.
static FailureOr<std::string> serializeGpuModule(ModuleOp module,
                                                 StringRef format,
                                                 StringRef toolkitPath) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  GpuModuleToBinaryPassOptions binaryOptions;
  binaryOptions.toolkitPath = toolkitPath.str();
  binaryOptions.compilationTarget = format.str();
  pm.addPass(createGpuModuleToBinaryPass(binaryOptions));
  if (failed(pm.run(module)))
    return failure();
  auto binary = module.lookupSymbol<gpu::BinaryOp>(kGpuModuleName);
  if (!binary || binary.getObjects().size() != 1)
    return emitError(module.getLoc(),
                     "CUDA kernel code generation: no binary for the kernels");
  auto object = llvm::cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  return object.getObject().getValue().str();
}

/// ptxas, which gpu-module-to-binary runs: in the toolkit or on PATH.
static LogicalResult checkPtxas(ModuleOp module, StringRef toolkitPath) {
  SmallString<256> path(toolkitPath);
  llvm::sys::path::append(path, "bin", "ptxas");
  if (llvm::sys::fs::can_execute(path) ||
      llvm::sys::findProgramByName("ptxas"))
    return success();
  return emitError(module.getLoc())
         << "cannot compile CUDA kernels: no ptxas in '" << toolkitPath
         << "/bin' or on PATH (set the CUDA toolkit path or CUDA_HOME)";
}

FailureOr<std::vector<uint8_t>>
mlir::lmopt::cuda::compileCudaKernels(ModuleOp kernels,
                                      const CudaCodegenOptions &options) {
  if (options.optLevel > 3)
    return emitError(kernels.getLoc()) << "kernel optimization level "
                                       << options.optLevel << " is outside 0-3";
  if (options.smVersion < 75)
    return emitError(kernels.getLoc())
           << "CUDA kernels need sm_75 or newer, not sm_" << options.smVersion;
  FailureOr<SmallVector<cpu::KernelEntryPoint>> entryPoints =
      cpu::checkKernelModule(kernels);
  if (failed(entryPoints))
    return failure();
  std::string toolkitPath = getToolkitPath(options);
  if (failed(checkPtxas(kernels, toolkitPath)))
    return failure();

  MLIRContext *context = kernels.getContext();
  DialectRegistry registry;
  registerCudaCodegenInterfaces(registry);
  context->appendDialectRegistry(registry);
  // The lowerings create ops of dialects the input need not hold.
  context->loadDialect<affine::AffineDialect, arith::ArithDialect,
                       bufferization::BufferizationDialect, gpu::GPUDialect,
                       linalg::LinalgDialect, math::MathDialect,
                       memref::MemRefDialect, NVVM::NVVMDialect,
                       scf::SCFDialect, tensor::TensorDialect,
                       vector::VectorDialect>();

  OwningOpRef<ModuleOp> module = kernels.clone();
  if (failed(cpu::lowerKernelsToLinalg(*module, "CUDA")) ||
      failed(fuseKernelOpsForGpu(*module)))
    return failure();
  PassManager bufferize(context, ModuleOp::getOperationName());
  buildGpuBufferizationPipeline(bufferize);
  if (failed(bufferize.run(*module)))
    return failure();

  // Every kernel is mapped, and every offender reported, before failing.
  ::lmopt::runtime::CudaKernelPayload payload;
  payload.smVersion = options.smVersion;
  bool mapped = true;
  for (const cpu::KernelEntryPoint &entry : *entryPoints) {
    auto func = module->lookupSymbol<func::FuncOp>(entry.name);
    auto original = kernels.lookupSymbol<func::FuncOp>(entry.name);
    FailureOr<KernelLaunch> launch = mapKernelToThreads(func, kBlockSize);
    if (failed(launch)) {
      mapped = false;
      continue;
    }
    ::lmopt::runtime::CudaKernelInfo info;
    info.name = entry.name;
    info.numOperands = original.getNumArguments();
    info.numResults = original.getNumResults();
    info.numDynamicSizes = entry.numSizes;
    info.blockSize = launch->blockSize;
    info.gridTensor = launch->gridTensor;
    info.gridAxes = launch->gridAxes;
    info.unitsPerBlock = launch->unitsPerBlock;
    info.sharedBytes = 0; // static shared memory only
    payload.kernels.push_back(std::move(info));
  }
  if (!mapped)
    return failure();

  // Run-time sizes as trailing i64 parameters, then the gpu.module.
  PassManager sizes(context, ModuleOp::getOperationName());
  sizes.addPass(cpu::createPassDynamicSizesPass());
  sizes.addPass(createCanonicalizerPass());
  if (failed(sizes.run(*module)))
    return failure();
  outlineKernels(*module, options);
  if (options.gpuIROutput)
    module->print(*options.gpuIROutput);

  PassManager toNVVM(context, ModuleOp::getOperationName());
  buildGpuToNVVMPipeline(toNVVM);
  if (failed(toNVVM.run(*module)))
    return failure();

  if (options.ptxOutput) {
    OwningOpRef<ModuleOp> copy = module->clone();
    FailureOr<std::string> ptx = serializeGpuModule(*copy, "isa", toolkitPath);
    if (failed(ptx))
      return failure();
    *options.ptxOutput << *ptx;
  }
  FailureOr<std::string> cubin = serializeGpuModule(*module, "bin", toolkitPath);
  if (failed(cubin))
    return failure();
  payload.image.assign(cubin->begin(), cubin->end());
  return ::lmopt::runtime::serializeCudaKernels(payload);
}
