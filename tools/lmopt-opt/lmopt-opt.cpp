//===- lmopt-opt.cpp - lmopt pass driver ----------------------------------===//
//
// mlir-opt for lmopt: registers the dialects a model passes through and every
// lmopt pass and pipeline; all behaviour lives in the libraries.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Conversion/Passes.h"
#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Importer/ONNX/Importer.h"
#include "lmopt/Target/CPU/Passes.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstring>

static llvm::cl::opt<std::string> reportOutput(
    "lmopt-report",
    llvm::cl::desc("Write the fusion report after the pipeline: '-' prints a "
                   "table, a .json path gets JSON, other paths the table"),
    llvm::cl::value_desc("file|-"), llvm::cl::init(""));

static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("For .onnx input: pin the shape of a graph input, "
                   "name:1x128 (repeatable; '?' keeps a dim dynamic)"),
    llvm::cl::value_desc("name:shape"));

/// Imports an ONNX model and returns it as MLIR bytecode, which keeps the
/// weights as binary resources and the node names as locations, for
/// MlirOptMain to parse like any other input.
static std::unique_ptr<llvm::MemoryBuffer>
importONNXAsBytecode(llvm::StringRef path, mlir::DialectRegistry &registry) {
  mlir::lmopt::ImportOptions options;
  for (const std::string &spec : inputShapes) {
    if (llvm::Error error = mlir::lmopt::parseInputShape(spec, options)) {
      llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
      return nullptr;
    }
  }
  mlir::MLIRContext context(registry);
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> module =
      mlir::lmopt::importONNXModel(context, path, options);
  if (mlir::failed(module))
    return nullptr;
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (mlir::failed(mlir::writeBytecodeToFile(module->get(), os)))
    return nullptr;
  // The bytecode reader needs its sections aligned as written.
  std::unique_ptr<llvm::WritableMemoryBuffer> buffer =
      llvm::WritableMemoryBuffer::getNewUninitMemBuffer(bytes.size(), path,
                                                         llvm::Align(64));
  if (!buffer)
    return nullptr;
  std::memcpy(buffer->getBufferStart(), bytes.data(), bytes.size());
  return buffer;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerTransformsPasses();
  mlir::lmopt::registerAllLmoptPasses();
  mlir::lmopt::registerLmoptAutodiffPasses();
  mlir::lmopt::registerLmoptConversionPasses();
  mlir::lmopt::cpu::registerLmoptCPUPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::lmopt::LmoptDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::quant::QuantDialect,
                  mlir::tensor::TensorDialect>();
  // What convert-lmopt-to-linalg produces, and the buffers its tests print.
  registry.insert<mlir::bufferization::BufferizationDialect,
                  mlir::cf::ControlFlowDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect>();
  // What the CPU kernel passes read and write: row loops, tiling offsets.
  registry.insert<mlir::affine::AffineDialect, mlir::scf::SCFDialect>();
  mlir::lmopt::registerONNXImportDialects(registry);
  mlir::lmopt::registerGradientModels(registry);

  std::string helpHeader =
      mlir::registerCLIOptions("lmopt optimizer driver", registry);
  auto [inputFile, outputFile] =
      mlir::parseCLIOptions(argc, argv, helpHeader);

  // Keep the pipeline given on the command line and append the report.
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  mlir::MlirOptMainConfig parsed = config;
  config.setPassPipelineSetupFn([parsed](mlir::PassManager &pm) {
    if (mlir::failed(parsed.setupPassPipeline(pm)))
      return mlir::failure();
    if (!reportOutput.empty())
      pm.addPass(mlir::lmopt::createEmitReportPass(
          mlir::lmopt::EmitReportPassOptions{reportOutput}));
    return mlir::success();
  });

  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleaveComma(registry.getDialectNames(), llvm::outs());
    llvm::outs() << "\n";
    return EXIT_SUCCESS;
  }
  if (config.shouldListPasses()) {
    mlir::printRegisteredPasses();
    return EXIT_SUCCESS;
  }

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input;
  if (llvm::StringRef(inputFile).ends_with(".onnx")) {
    input = importONNXAsBytecode(inputFile, registry);
    if (!input)
      return EXIT_FAILURE;
  } else {
    input = mlir::openInputFile(inputFile, &error);
    if (!input) {
      llvm::errs() << error << "\n";
      return EXIT_FAILURE;
    }
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry,
                                     config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
