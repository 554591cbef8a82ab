//===- GraphImporter.h - ONNX graph walking ---------------------*- C++ -*-===//
//
// Private to the ONNX importer: turns one GraphProto into the body of a
// func.func. Owns the map from ONNX value names to MLIR values, the integer
// contents known at import time, and the order in which nodes convert.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_IMPORTER_ONNX_GRAPHIMPORTER_H
#define LMOPT_LIB_IMPORTER_ONNX_GRAPHIMPORTER_H

#include "TensorImport.h"

#include "lmopt/Importer/ONNX/Importer.h"
#include "lmopt/Importer/ONNX/OpConverter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::lmopt::onnx_import {

class GraphImporter {
public:
  GraphImporter(MLIRContext *ctx, onnx::GraphProto &graph,
                const llvm::StringMap<int64_t> &opsets, StringRef modelPath,
                const ImportOptions &options);

  /// Builds the function into `module`.
  LogicalResult importInto(ModuleOp module);

  OpBuilder &getBuilder() { return builder; }
  const ImportOptions &getOptions() const { return options; }
  Location getFileLoc() const { return fileLoc; }

  /// The value named `name`, materializing an initializer on first use; null
  /// for "" (an absent optional input).
  FailureOr<Value> lookup(StringRef name, Location useLoc);
  const KnownInts *getKnown(Value value) const;
  void define(StringRef name, Value value, std::optional<KnownInts> known);
  /// Creates an `lmopt.constant` (hoisted to the top of the function at the
  /// end) and records its contents when they are small integers.
  Value createConstant(ElementsAttr value, Location loc);
  FailureOr<ElementsAttr> readTensor(onnx::TensorProto &tensor, Location loc) {
    return tensorReader.read(tensor, loc);
  }

private:
  LogicalResult checkNames();
  FailureOr<SmallVector<size_t>> sortNodes();
  FailureOr<RankedTensorType> getInputType(const onnx::ValueInfoProto &info);
  /// The contents --input-value binds to graph input `name` of `type`.
  FailureOr<ElementsAttr> getBoundValue(StringRef name, RankedTensorType type);
  LogicalResult reportUnsupportedNodes();
  LogicalResult convertNode(onnx::NodeProto &node);
  Location getNodeLoc(const onnx::NodeProto &node) const;

  MLIRContext *ctx;
  onnx::GraphProto &graph;
  const llvm::StringMap<int64_t> &opsets;
  const ImportOptions &options;
  Location fileLoc;
  OpBuilder builder;
  TensorReader tensorReader;

  llvm::StringMap<Value> values;
  llvm::StringMap<onnx::TensorProto *> initializers;
  llvm::DenseMap<Value, KnownInts> known;
};

/// The domain key used by the converter table: "" for the default domain.
StringRef getCanonicalDomain(StringRef domain);

} // namespace mlir::lmopt::onnx_import

#endif // LMOPT_LIB_IMPORTER_ONNX_GRAPHIMPORTER_H
