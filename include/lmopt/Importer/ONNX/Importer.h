//===- Importer.h - ONNX model to lmopt IR ----------------------*- C++ -*-===//
//
// Reads an ONNX model (a ModelProto file) and builds a module with one
// `func.func` of `lmopt` ops on builtin tensors. Nothing in this header sees
// protobuf; the schema stays inside lib/Importer/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_IMPORTER_ONNX_IMPORTER_H
#define LMOPT_IMPORTER_ONNX_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::lmopt {

struct ImportOptions {
  /// Shapes pinned for graph inputs, by input name. They replace symbolic dims
  /// and must agree with every static dim the model declares.
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// Contents bound to graph inputs, by input name, as the numbers were
  /// written ("1", "-2", "0.5"): each such input becomes a constant of its
  /// (static) shape and is no longer an argument. For inputs that set
  /// shapes or axes (ReduceSum's axes, Reshape's shape), which lmopt needs
  /// at compile time, as TensorRT needs the values of its shape tensors.
  llvm::StringMap<SmallVector<std::string>> inputValues;
  /// Name of the imported function.
  std::string functionName = "main";
  /// Initializers of more bytes than this become `dense_resource` blobs;
  /// smaller ones are printed inline.
  size_t inlineConstantLimit = 64;
  /// An `Identity` of a float initializer becomes a constant of its own,
  /// named after the Identity's output, instead of another name for the
  /// initializer: exporters deduplicate equal initializers (a fresh model's
  /// zero biases, unit norm weights) behind such Identity nodes, and
  /// training must keep each source parameter its own (lmopt-compile
  /// --train).
  bool untieInitializerAliases = false;
  /// Pinned shapes and bound values of names that are not graph inputs are
  /// ignored instead of refused (a distillation teacher imported with the
  /// student's input shapes).
  bool ignoreUnknownInputs = false;
};

/// Parses "name:1x128" (a `?` keeps a dim dynamic) and adds it to `options`.
llvm::Error parseInputShape(llvm::StringRef spec, ImportOptions &options);

/// Parses "name:1,-1" (a scalar is one number, "name:" an empty tensor)
/// and adds it to `options`.
llvm::Error parseInputValue(llvm::StringRef spec, ImportOptions &options);

/// Registers the dialects that imported modules use.
void registerONNXImportDialects(DialectRegistry &registry);

/// Imports the model at `path`. External data is resolved relative to the
/// model's folder and never read from outside it. Every problem is reported
/// as a diagnostic through `ctx`.
FailureOr<OwningOpRef<ModuleOp>> importONNXModel(MLIRContext &ctx,
                                                 llvm::StringRef path,
                                                 const ImportOptions &options);

/// Same, for a model already in memory; `path` names it in locations and
/// locates external data. `buffer` must outlive the returned module only for
/// the duration of the call (weights are copied or re-read).
FailureOr<OwningOpRef<ModuleOp>> importONNXModel(MLIRContext &ctx,
                                                 llvm::MemoryBufferRef buffer,
                                                 llvm::StringRef path,
                                                 const ImportOptions &options);

} // namespace mlir::lmopt

#endif // LMOPT_IMPORTER_ONNX_IMPORTER_H
