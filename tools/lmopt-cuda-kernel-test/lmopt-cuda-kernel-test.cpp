//===- lmopt-cuda-kernel-test.cpp - compile kernels with the CUDA codegen -===//
//
// Compiles every function of an .mlir kernel module with compileCudaKernels
// and prints what tests check: the kernels in the gpu dialect, the PTX, and
// each kernel's launch record as the runtime will parse it; writes the
// payload and the cubin for cuobjdump/nvdisasm. Needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Format/CudaKernels.h"
#include "lmopt/Target/CUDA/KernelCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace rt = ::lmopt::runtime;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<kernels.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<bool>
    printGpuIR("print-gpu-ir",
               llvm::cl::desc("Print the kernels in the gpu dialect"));
static llvm::cl::opt<bool> printPtx("print-ptx",
                                    llvm::cl::desc("Print the PTX"));
static llvm::cl::opt<bool> printLaunches(
    "print-launches",
    llvm::cl::desc("Print each kernel's launch record, from the payload"));
static llvm::cl::opt<std::string>
    payloadFile("o", llvm::cl::desc("Write the payload here"),
                llvm::cl::value_desc("file"));
static llvm::cl::opt<std::string>
    cubinFile("cubin", llvm::cl::desc("Write the cubin here"),
              llvm::cl::value_desc("file"));
static llvm::cl::opt<unsigned> smVersion("sm",
                                         llvm::cl::desc("Compute capability"),
                                         llvm::cl::init(90));
static llvm::cl::opt<std::string>
    toolkitPath("cuda-path", llvm::cl::desc("CUDA toolkit (ptxas)"),
                llvm::cl::init(""));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "lmopt-cuda-kernel-test: error: " << message << "\n";
  return 1;
}

static int writeFile(StringRef path, const uint8_t *data, size_t size) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return fail(error);
  file->os().write(reinterpret_cast<const char *>(data), size);
  file->keep();
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "lmopt CUDA kernel codegen test driver\n");
  DialectRegistry registry;
  registry
      .insert<mlir::lmopt::LmoptDialect, arith::ArithDialect, func::FuncDialect,
              quant::QuantDialect, tensor::TensorDialect>();
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string error;
  auto buffer = openInputFile(inputFile, &error);
  if (!buffer)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  mlir::lmopt::cuda::CudaCodegenOptions options;
  options.smVersion = smVersion;
  options.toolkitPath = toolkitPath;
  std::string gpuIR, ptx;
  llvm::raw_string_ostream gpuStream(gpuIR), ptxStream(ptx);
  if (printGpuIR)
    options.gpuIROutput = &gpuStream;
  if (printPtx)
    options.ptxOutput = &ptxStream;
  FailureOr<std::vector<uint8_t>> bytes =
      mlir::lmopt::cuda::compileCudaKernels(*module, options);
  // What was printed before a failure helps to see where it failed.
  llvm::outs() << gpuIR << ptx;
  if (failed(bytes))
    return 1;

  rt::CudaKernelPayload payload;
  rt::Status status =
      rt::parseCudaKernels(bytes->data(), bytes->size(), "payload", payload);
  if (!status.isOk())
    return fail("the payload does not parse: " + status.toString());
  if (printLaunches)
    for (const rt::CudaKernelInfo &info : payload.kernels)
      llvm::outs() << "kernel " << info.name << ": operands "
                   << info.numOperands << " results " << info.numResults
                   << " sizes " << info.numDynamicSizes << " block "
                   << info.blockSize << " grid tensor " << info.gridTensor
                   << " axes " << info.gridAxes << " units/block "
                   << info.unitsPerBlock << " shared " << info.sharedBytes
                   << "\n";
  if (!payloadFile.empty() &&
      writeFile(payloadFile, bytes->data(), bytes->size()))
    return 1;
  if (!cubinFile.empty() &&
      writeFile(cubinFile, payload.image.data(), payload.image.size()))
    return 1;
  return 0;
}
