//===- lmopt-fuzz-onnx.cpp - libFuzzer target for the ONNX importer ------===//
//
// Feeds arbitrary bytes to the importer as a model read from standard input
// (so external data is refused and nothing outside the input is read). The
// importer must report problems as diagnostics; any crash, sanitizer report
// or leak is a bug.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::DialectRegistry registry;
  mlir::lmopt::registerONNXImportDialects(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::MemoryBufferRef buffer(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "-");
  mlir::lmopt::ImportOptions options;
  (void)mlir::lmopt::importONNXModel(ctx, buffer, "-", options);
  return 0;
}
