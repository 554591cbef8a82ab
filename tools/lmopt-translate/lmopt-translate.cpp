//===- lmopt-translate.cpp - lmopt translation driver ---------------------===//
//
// mlir-translate for lmopt: registers the importers, and drives the ONNX
// exporter, whose output is a model file (plus external data) written
// atomically rather than a stream; all behaviour lives in the libraries.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Exporter/ONNX/Exporter.h"
#include "lmopt/Importer/ONNX/Importer.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("Pin the shape of an ONNX graph input: name:1x128 "
                   "(repeatable; '?' keeps a dim dynamic)"),
    llvm::cl::value_desc("name:shape"));

static llvm::cl::list<std::string> inputValues(
    "input-value",
    llvm::cl::desc("Bind an ONNX graph input to constant contents: "
                   "name:1,-1 (repeatable; its shape must be static)"),
    llvm::cl::value_desc("name:values"));

static llvm::cl::opt<std::string>
    functionName("onnx-function-name",
                 llvm::cl::desc("Name of the function an ONNX graph becomes "
                                "(--import-onnx) or that is exported "
                                "(--export-onnx; default: main, else the "
                                "only function)"),
                 llvm::cl::init("main"));

static llvm::cl::opt<bool> untieInitializerAliases(
    "untie-initializer-aliases",
    llvm::cl::desc("With --import-onnx: an Identity of a float initializer "
                   "becomes a constant of its own named after its output "
                   "(the parameters an exporter deduplicated; what "
                   "lmopt-compile --train does)"));

static llvm::cl::opt<bool> exportONNX(
    "export-onnx",
    llvm::cl::desc("Export lmopt IR (or an ONNX model, imported first) as an "
                   "ONNX model to the -o file"));

static llvm::cl::opt<std::string> externalData(
    "external-data",
    llvm::cl::desc("With --export-onnx: write initializers of 1 KiB or more "
                   "to this file next to the output (default: the output's "
                   "name + '.data'); needed past 2 GiB"),
    llvm::cl::value_desc("file name"), llvm::cl::ValueOptional);

static llvm::cl::opt<int64_t> onnxOpset(
    "onnx-opset",
    llvm::cl::desc("With --export-onnx: the lowest opset to write (17 to "
                   "21; raised where an op needs it)"),
    llvm::cl::init(17));

static FailureOr<lmopt::ImportOptions> getImportOptions(MLIRContext *ctx) {
  lmopt::ImportOptions options;
  options.functionName = functionName;
  options.untieInitializerAliases = untieInitializerAliases;
  for (const std::string &spec : inputShapes) {
    if (llvm::Error error = lmopt::parseInputShape(spec, options)) {
      emitError(UnknownLoc::get(ctx)) << llvm::toString(std::move(error));
      return failure();
    }
  }
  for (const std::string &spec : inputValues) {
    if (llvm::Error error = lmopt::parseInputValue(spec, options)) {
      emitError(UnknownLoc::get(ctx)) << llvm::toString(std::move(error));
      return failure();
    }
  }
  return options;
}

static OwningOpRef<Operation *> importONNX(llvm::SourceMgr &sourceMgr,
                                           MLIRContext *ctx) {
  FailureOr<lmopt::ImportOptions> options = getImportOptions(ctx);
  if (failed(options))
    return nullptr;
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  // The buffer's identifier is the path given on the command line; the
  // importer resolves external data relative to it. Standard input has no
  // folder, so it gets none.
  StringRef path = buffer->getBufferIdentifier();
  if (path == "<stdin>")
    path = "-";
  FailureOr<OwningOpRef<ModuleOp>> module =
      lmopt::importONNXModel(*ctx, buffer->getMemBufferRef(), path, *options);
  if (failed(module))
    return nullptr;
  return OwningOpRef<Operation *>(module->release());
}

/// `lmopt-translate --export-onnx in.{mlir,onnx} -o out.onnx`.
static int exportMain(int argc, char **argv) {
  // Declared here, not at file scope, because mlirTranslateMain declares
  // its own input and -o options.
  static llvm::cl::opt<std::string> inputFilename(
      llvm::cl::Positional, llvm::cl::desc("<input .mlir or .onnx file>"),
      llvm::cl::init("-"));
  static llvm::cl::opt<std::string> outputFilename(
      "o", llvm::cl::desc("Output ONNX file ('-' for standard output)"),
      llvm::cl::value_desc("filename"), llvm::cl::init("-"));
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "lmopt translation driver (ONNX export)\n");

  DialectRegistry registry;
  lmopt::registerONNXImportDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  OwningOpRef<ModuleOp> module;
  if (llvm::sys::path::extension(inputFilename) == ".onnx") {
    FailureOr<lmopt::ImportOptions> options = getImportOptions(&context);
    if (failed(options))
      return 1;
    FailureOr<OwningOpRef<ModuleOp>> imported =
        lmopt::importONNXModel(context, inputFilename, *options);
    if (failed(imported))
      return 1;
    module = std::move(*imported);
  } else {
    std::string message;
    std::unique_ptr<llvm::MemoryBuffer> buffer =
        openInputFile(inputFilename, &message);
    if (!buffer) {
      llvm::errs() << "error: " << message << "\n";
      return 1;
    }
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
  }

  lmopt::ExportOptions options;
  options.minOpset = onnxOpset;
  // The function an ONNX input was imported as, or the one named.
  if (functionName.getNumOccurrences() > 0 ||
      llvm::sys::path::extension(inputFilename) == ".onnx")
    options.functionName = functionName;
  if (externalData.getNumOccurrences() > 0)
    options.externalDataFile =
        externalData.empty()
            ? (llvm::sys::path::filename(outputFilename) + ".data").str()
            : externalData.getValue();
  return failed(lmopt::exportONNXModel(*module, outputFilename, options));
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (StringRef(argv[i]) == "--export-onnx" ||
        StringRef(argv[i]) == "-export-onnx")
      return exportMain(argc, argv);

  TranslateToMLIRRegistration importRegistration(
      "import-onnx", "import an ONNX model (ModelProto) as lmopt IR",
      TranslateRawSourceMgrToMLIRFunction(importONNX),
      [](DialectRegistry &registry) {
        lmopt::registerONNXImportDialects(registry);
      });
  return failed(mlirTranslateMain(argc, argv, "lmopt translation driver"));
}
