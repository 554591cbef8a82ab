//===- lmopt-opt.cpp - lmopt pass driver ----------------------------------===//
//
// mlir-opt for lmopt: registers the dialects a model passes through and every
// lmopt pass and pipeline; all behaviour lives in the libraries.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
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

static llvm::cl::opt<std::string> reportOutput(
    "lmopt-report",
    llvm::cl::desc("Write the fusion report after the pipeline: '-' prints a "
                   "table, a .json path gets JSON, other paths the table"),
    llvm::cl::value_desc("file|-"), llvm::cl::init(""));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerTransformsPasses();
  mlir::lmopt::registerAllLmoptPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::lmopt::LmoptDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::quant::QuantDialect,
                  mlir::tensor::TensorDialect>();

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
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
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
