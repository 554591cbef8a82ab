//===- Exporter.h - lmopt IR to an ONNX model -------------------*- C++ -*-===//
//
// Writes a module's entry function (lmopt ops, optimized or quantized) as an
// ONNX model: ONNX-level ops map to their operators, fused ops decompose
// into standard ones exactly (docs/exporter.md). Nothing in this header
// sees protobuf; the schema stays inside lib/Importer and lib/Exporter.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_EXPORTER_ONNX_EXPORTER_H
#define LMOPT_EXPORTER_ONNX_EXPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir::lmopt {

struct ExportOptions {
  /// Name of the function to export; empty picks `main`, else the only
  /// function of the module.
  std::string functionName;
  /// Lowest default-domain opset to write; raised to what the ops need
  /// (never below 17).
  int64_t minOpset = 17;
  /// When set, initializers of at least `externalDataThreshold` bytes go to
  /// this file, named relative to the output's folder (a plain file name:
  /// no folder, no `..`).
  std::string externalDataFile;
  size_t externalDataThreshold = 1024;
};

/// Checks that `name` is a plain file name an external data file may have;
/// the error says why not.
LogicalResult verifyExternalDataName(StringRef name, Location loc);

/// Exports `module` to `outputPath` ("-" for standard output). The model,
/// and its external data file if any, are written to temporary files and
/// renamed into place only when everything succeeded, so an error never
/// leaves a partial file. Every problem is reported as a diagnostic; ops
/// that cannot be exported are all named, each at its location.
LogicalResult exportONNXModel(ModuleOp module, StringRef outputPath,
                              const ExportOptions &options);

} // namespace mlir::lmopt

#endif // LMOPT_EXPORTER_ONNX_EXPORTER_H
