//===- lmopt-translate.cpp - lmopt translation driver ---------------------===//
//
// mlir-translate for lmopt: registers the importers; all behaviour lives in
// the libraries.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/Importer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("Pin the shape of an ONNX graph input: name:1x128 "
                   "(repeatable; '?' keeps a dim dynamic)"),
    llvm::cl::value_desc("name:shape"));

static llvm::cl::opt<std::string>
    functionName("onnx-function-name",
                 llvm::cl::desc("Name of the function an ONNX graph becomes"),
                 llvm::cl::init("main"));

static OwningOpRef<Operation *> importONNX(llvm::SourceMgr &sourceMgr,
                                           MLIRContext *ctx) {
  lmopt::ImportOptions options;
  options.functionName = functionName;
  for (const std::string &spec : inputShapes) {
    if (llvm::Error error = lmopt::parseInputShape(spec, options)) {
      emitError(UnknownLoc::get(ctx)) << llvm::toString(std::move(error));
      return nullptr;
    }
  }
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  // The buffer's identifier is the path given on the command line; the
  // importer resolves external data relative to it. Standard input has no
  // folder, so it gets none.
  StringRef path = buffer->getBufferIdentifier();
  if (path == "<stdin>")
    path = "-";
  FailureOr<OwningOpRef<ModuleOp>> module =
      lmopt::importONNXModel(*ctx, buffer->getMemBufferRef(), path, options);
  if (failed(module))
    return nullptr;
  return OwningOpRef<Operation *>(module->release());
}

int main(int argc, char **argv) {
  TranslateToMLIRRegistration importRegistration(
      "import-onnx", "import an ONNX model (ModelProto) as lmopt IR",
      TranslateRawSourceMgrToMLIRFunction(importONNX),
      [](DialectRegistry &registry) {
        lmopt::registerONNXImportDialects(registry);
      });
  return failed(mlirTranslateMain(argc, argv, "lmopt translation driver"));
}
