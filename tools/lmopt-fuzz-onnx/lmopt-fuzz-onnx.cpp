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

/// MLIR's attribute and type storage comes from one BumpPtrAllocator per
/// context, shared by libMLIR (not instrumented) and this target's code
/// (instrumented, with LLVM's allocator header inlined): when the target's
/// code starts a new slab, the header poisons all of it and unpoisons only
/// its own allocation, and libMLIR's next allocations in that slab then
/// read as use-after-poison (a new attribute kind in the dialect was enough
/// to move a slab start there). Manual poisoning is off; every other check
/// stays.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

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
