//===- GraphExporter.h - building one ONNX graph ----------------*- C++ -*-===//
//
// Private to the ONNX exporter. GraphExporter owns the GraphProto being
// built: it names values, writes constants as initializers on first use,
// and adds nodes. Each lmopt op is exported by one function registered in
// one table keyed by the op's TypeID (ExportTable); decompositions of fused
// ops call GraphExporter::emit for every node they add.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_EXPORTER_ONNX_GRAPHEXPORTER_H
#define LMOPT_LIB_EXPORTER_ONNX_GRAPHEXPORTER_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx.pb.h"

#include <optional>
#include <string>

namespace mlir::lmopt {
class ConstantOp;
} // namespace mlir::lmopt

namespace mlir::lmopt::onnx_export {

/// ONNX element type codes (TensorProto::DataType) used below.
using DataType = onnx::TensorProto::DataType;

/// The ONNX element type of `type` (a quantized type maps to its storage
/// type), or an error at `loc` naming it.
FailureOr<DataType> getDataType(Type type, Location loc);

/// Little-endian bytes of `attr` as ONNX `raw_data` wants them (4-bit types
/// packed two per byte, low nibble first, unless `pack4Bit` is false: then
/// one per byte, as MLIR holds them), or an error at `loc`.
FailureOr<std::string> getRawData(ElementsAttr attr, Location loc,
                                  bool pack4Bit = true);

/// 4-bit values, one per byte, packed two per byte, low nibble first.
std::string packNibbles(StringRef values);

/// `data` (row-major, `rows` x `cols` elements of `elementBytes` bytes)
/// transposed.
std::string transposeBytes(StringRef data, int64_t rows, int64_t cols,
                           size_t elementBytes);

class GraphExporter;
struct ExportEntry;
using ExportFn = LogicalResult (*)(GraphExporter &, Operation *,
                                   const ExportEntry &);

struct ExportEntry {
  TypeID id;
  /// The ONNX operator the op maps to one to one; empty for decompositions.
  StringRef onnxType;
  ExportFn fn;
  /// The lowest default-domain opset the export needs.
  int64_t minOpset = 17;
};

// Family tables; each file lists what it exports.
SmallVector<ExportEntry> getOnnxOpExporters();
SmallVector<ExportEntry> getFusedOpExporters();
SmallVector<ExportEntry> getLinearExporters();
SmallVector<ExportEntry> getQuantizedOpExporters();

/// The one table of exportable ops.
class ExportTable {
public:
  static const ExportTable &get();
  const ExportEntry *lookup(Operation *op) const;

private:
  ExportTable();
  llvm::DenseMap<TypeID, ExportEntry> entries;
};

class GraphExporter {
public:
  GraphExporter(onnx::ModelProto &model, int64_t opset);

  int64_t getOpset() const { return opset; }
  onnx::GraphProto &getGraph() { return *model.mutable_graph(); }

  /// The ONNX name of `value`. A value defined by `lmopt.constant` becomes
  /// an initializer the first time it is asked for, and a `quant.scast`
  /// result is named then too.
  FailureOr<std::string> getName(Value value);
  /// Names of `values`; a null value gives "" (an absent optional input).
  FailureOr<SmallVector<std::string>> getNames(ValueRange values);
  /// Gives `value` a name chosen beforehand (graph inputs and outputs, and
  /// values that are another value's bits under a new type).
  void setName(Value value, StringRef name);
  /// A fresh name for the result of `op`, recorded as its name.
  std::string defineResult(Value result);

  /// Adds a node of `opType` with outputs named after `loc` and returns
  /// it; `numOutputs` fresh names are made unless `outputs` is given.
  onnx::NodeProto &addNode(StringRef opType, ArrayRef<std::string> inputs,
                           ArrayRef<std::string> outputs, Location loc,
                           StringRef domain = "");
  /// Adds a node with one fresh output and returns the output's name.
  std::string emit(StringRef opType, ArrayRef<std::string> inputs, Location loc,
                   function_ref<void(onnx::NodeProto &)> setAttrs = nullptr,
                   StringRef domain = "");

  /// Makes `result`'s name the name of `produced`: the last node's output
  /// is renamed when it is `produced`, else an Identity is added.
  void bindResult(Value result, StringRef produced, Location loc);

  /// Adds an initializer and returns its (fresh) name.
  std::string addInitializer(StringRef base, DataType type,
                             ArrayRef<int64_t> dims, std::string bytes);
  std::string addInt64s(StringRef base, ArrayRef<int64_t> values,
                        bool scalar = false);
  std::string addFloat(StringRef base, float value);
  /// A scalar of `type` (FLOAT, FLOAT16, BFLOAT16, DOUBLE) holding `value`.
  FailureOr<std::string> addFloatScalar(StringRef base, Type type, double value,
                                        Location loc);
  /// An initializer holding `attr`'s contents with element type `type`.
  FailureOr<std::string> addElements(StringRef base, ElementsAttr attr,
                                     DataType type, Location loc);

  std::string freshName(StringRef base);

private:
  onnx::ModelProto &model;
  int64_t opset;
  llvm::DenseMap<Value, std::string> names;
  llvm::StringSet<> usedNames;
  llvm::StringSet<> usedNodeNames;
};

/// The name a location gives a node: the innermost NameLoc's name, else
/// `fallback`.
std::string getLocName(Location loc, StringRef fallback);

/// The initializer name of a constant: its location's name, else its
/// resource key.
std::string getConstantName(ConstantOp constant);

// NodeProto attribute setters.
void setIntAttr(onnx::NodeProto &node, StringRef name, int64_t value);
void setFloatAttr(onnx::NodeProto &node, StringRef name, float value);
void setIntsAttr(onnx::NodeProto &node, StringRef name,
                 ArrayRef<int64_t> values);
void setStringAttr(onnx::NodeProto &node, StringRef name, StringRef value);
void setTensorAttr(onnx::NodeProto &node, StringRef name,
                   onnx::TensorProto tensor);

/// Names of `op`'s operands, or failure.
FailureOr<SmallVector<std::string>> getOperandNames(GraphExporter &ex,
                                                    Operation *op);

/// Exports `op` as one node of `onnxType`: operands are the inputs in
/// order, results the outputs; `setAttrs` adds the node's attributes.
LogicalResult
exportOneToOne(GraphExporter &ex, Operation *op, StringRef onnxType,
               function_ref<void(onnx::NodeProto &)> setAttrs = nullptr);

} // namespace mlir::lmopt::onnx_export

#endif // LMOPT_LIB_EXPORTER_ONNX_GRAPHEXPORTER_H

namespace mlir::quant {
class QuantizedType;
} // namespace mlir::quant

namespace mlir::lmopt::onnx_export {

/// The scale and zero point initializers of a `quant` type as ONNX
/// QuantizeLinear / DequantizeLinear take them, and their attributes.
struct QuantParams {
  std::string scale;
  std::string zeroPoint;
  std::optional<int64_t> axis;
  std::optional<int64_t> blockSize;
  void setAttrs(onnx::NodeProto &node) const;
};

/// Parameters of `type` for a tensor of `shape`, or an error at `loc` when
/// ONNX cannot express them (QuantizedOps.cpp).
FailureOr<QuantParams> addQuantParams(GraphExporter &ex,
                                      quant::QuantizedType type,
                                      ArrayRef<int64_t> shape, Location loc);

/// The ONNX name of a `quant.scast` result: the integer tensor itself, or
/// a constant written again with the quantized storage's signedness.
FailureOr<std::string> nameStorageCast(GraphExporter &ex, Operation *op);

/// DequantizeLinear of the ONNX value `input`, whose MLIR type is the
/// quantized `type`; returns the float result's name.
FailureOr<std::string> emitDequantize(GraphExporter &ex, StringRef input,
                                      RankedTensorType type, Location loc);

/// GELU of `input` (of float type `type`): the Gelu operator from opset
/// 20, else its Erf or Tanh formula (FusedOps.cpp).
FailureOr<std::string> emitGelu(GraphExporter &ex, StringRef input, Type type,
                                bool tanh, Location loc);

/// A reduction over `axes`, with `axes` an attribute or an input as the
/// opset wants.
std::string emitReduce(GraphExporter &ex, StringRef onnxType, StringRef input,
                       ArrayRef<int64_t> axes, bool keepdims, Location loc);

} // namespace mlir::lmopt::onnx_export
