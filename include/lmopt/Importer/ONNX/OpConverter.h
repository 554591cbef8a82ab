//===- OpConverter.h - per-node conversion interface ------------*- C++ -*-===//
//
// Each ONNX operator is converted by one function registered in one table,
// keyed by (domain, op type, opset range). Converters see a node through
// NodeContext: inputs as MLIR values, attributes as C++ values, and the
// integer contents the importer already knows (shape arithmetic), so that
// they never touch protobuf and every error they report names the node.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_IMPORTER_ONNX_OPCONVERTER_H
#define LMOPT_IMPORTER_ONNX_OPCONVERTER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace mlir::lmopt::onnx_import {

class GraphImporter;

/// Contents of a small integer (or bool) tensor known at import time, in
/// row-major order. An entry equal to ShapedType::kDynamic is unknown, which
/// is how a shape vector with symbolic dims is tracked.
struct KnownInts {
  SmallVector<int64_t> shape;
  SmallVector<int64_t> values;

  bool isFullyKnown() const;
  int64_t getNumElements() const { return values.size(); }
  /// A vector of `length` unknown entries.
  static KnownInts unknown(int64_t length);
  static KnownInts vector(ArrayRef<int64_t> values);
  static KnownInts scalar(int64_t value);
  /// The contents of an integer attribute (INT64_MIN is read as
  /// INT64_MIN + 1, which only matters for slice bounds, where it does not).
  static KnownInts fromAttr(DenseIntElementsAttr attr);
};

/// The most elements tracked in a KnownInts; larger tensors are left to the
/// compiler's folders.
inline constexpr int64_t kMaxKnownElements = 4096;

/// One node being converted.
class NodeContext {
public:
  NodeContext(GraphImporter &graph, const onnx::NodeProto &node,
              StringRef domain, int64_t opset, Location loc);

  /// Resolves the node's inputs; called by the importer before conversion.
  LogicalResult resolveInputs();

  StringRef getOpType() const;
  StringRef getDomain() const { return domain; }
  int64_t getOpset() const { return opset; }
  /// The node's name, or the name of its first output for unnamed nodes.
  StringRef getName() const;
  /// The name of output `index` ("" when absent).
  StringRef getOutputName(size_t index) const;
  /// ImportOptions::untieInitializerAliases.
  bool untiesInitializerAliases() const;
  Location getLoc() const { return loc; }
  OpBuilder &getBuilder();
  MLIRContext *getContext() { return loc.getContext(); }

  /// An error at the node's location whose text starts with the node's name,
  /// type, domain and opset.
  InFlightDiagnostic emitError();

  //===--- Inputs ---------------------------------------------------------===//

  size_t getNumInputs() const;
  /// False for missing optional inputs (absent or named "").
  bool hasInput(size_t index) const;
  /// The value of input `index`, or null when it is absent.
  Value getInput(size_t index) const;
  RankedTensorType getInputType(size_t index) const;
  /// Reports an error unless the node has between `min` and `max` inputs
  /// and the first `min` of them are present.
  LogicalResult checkInputs(size_t min, size_t max);
  /// What is known about input `index`'s contents, or null.
  const KnownInts *getKnown(size_t index) const;
  /// Input `index` as a fully known integer tensor, or an error that says
  /// `what` must be constant.
  FailureOr<SmallVector<int64_t>> getConstantInts(size_t index, StringRef what);

  //===--- Outputs --------------------------------------------------------===//

  size_t getNumOutputs() const;
  bool hasOutput(size_t index) const;
  void setOutput(size_t index, Value value,
                 std::optional<KnownInts> known = std::nullopt);
  /// Materializes fully known contents as an `lmopt.constant`.
  Value createConstant(const KnownInts &known, Type elementType);

  //===--- Attributes -----------------------------------------------------===//

  bool hasAttr(StringRef name) const;
  /// Attribute getters report a missing required attribute (no default) or
  /// an attribute of the wrong kind.
  FailureOr<int64_t> getInt(StringRef name,
                            std::optional<int64_t> defaultValue = {});
  FailureOr<float> getFloat(StringRef name,
                            std::optional<float> defaultValue = {});
  FailureOr<SmallVector<int64_t>>
  getInts(StringRef name, std::optional<ArrayRef<int64_t>> defaultValue = {});
  FailureOr<SmallVector<float>> getFloats(StringRef name);
  FailureOr<std::string> getString(StringRef name,
                                   std::optional<StringRef> defaultValue = {});
  /// A tensor attribute as an elements attribute.
  FailureOr<ElementsAttr> getTensor(StringRef name);
  /// An attribute holding an ONNX element type code (Cast's `to`).
  FailureOr<Type> getElementType(StringRef name);
  /// Attribute 'stash_type' (default 1): f32 for 1, f64 for 11, else an
  /// error.
  FailureOr<Type> getStashType();
  /// `axes` mapped into [0, rank), reporting out-of-range or repeated ones.
  FailureOr<SmallVector<int64_t>> normalizeAxes(ArrayRef<int64_t> axes,
                                                int64_t rank);

  /// Creates an op at the node's location.
  template <typename OpTy, typename... Args> OpTy createOp(Args &&...args) {
    return OpTy::create(getBuilder(), loc, std::forward<Args>(args)...);
  }

private:
  GraphImporter &graph;
  const onnx::NodeProto &node;
  StringRef domain;
  int64_t opset;
  Location loc;
  SmallVector<Value> inputs;
};

using ConverterFn = LogicalResult (*)(NodeContext &);

struct ConverterEntry {
  StringRef domain; // "" for the default ONNX domain
  StringRef opType;
  int64_t minOpset;
  int64_t maxOpset;
  ConverterFn convert;
};

/// The one table of supported operators.
class ConverterTable {
public:
  static const ConverterTable &get();
  const ConverterEntry *lookup(StringRef domain, StringRef opType,
                               int64_t opset) const;
  ArrayRef<ConverterEntry> getEntries() const { return entries; }

private:
  ConverterTable();
  SmallVector<ConverterEntry> entries;
};

// Family tables; each file lists what it converts.
ArrayRef<ConverterEntry> getElementwiseConverters();
ArrayRef<ConverterEntry> getMatMulConverters();
ArrayRef<ConverterEntry> getNormalizationConverters();
ArrayRef<ConverterEntry> getShapeConverters();
ArrayRef<ConverterEntry> getDataMovementConverters();
ArrayRef<ConverterEntry> getQuantizedConverters();
/// Pad, as slices and concatenations (PadOps.cpp).
ArrayRef<ConverterEntry> getPadConverters();
/// Trilu, as an index comparison selecting the input or zero (MaskOps.cpp).
ArrayRef<ConverterEntry> getMaskConverters();
/// Attention and RotaryEmbedding (opset 23), onto the fused ops
/// (AttentionOps.cpp).
ArrayRef<ConverterEntry> getAttentionConverters();
/// ONNX Runtime's `com.microsoft` fused operators.
ArrayRef<ConverterEntry> getMicrosoftConverters();

/// Activations, Clip, Sum/Mean, IsInf, Xor, ArgMax/ArgMin and the norm-like
/// reductions, as the simpler operators ONNX defines them with
/// (CompositeOps.cpp).
ArrayRef<ConverterEntry> getCompositeConverters();

/// Einsum, as transposes, sums, reshapes and batched matmuls (EinsumOps.cpp).
ArrayRef<ConverterEntry> getEinsumConverters();

/// A reduction node's axes and result shape (NormalizationOps.cpp): `axes`
/// as the node gives them (empty: every dim), and `noop` when ONNX's
/// `noop_with_empty_axes` leaves the input unreduced (`shape` is then the
/// input's).
struct ReduceSpec {
  SmallVector<int64_t> axes;
  bool keepdims = true;
  bool noop = false;
  SmallVector<int64_t> shape;
};
/// Reads `axes` (an attribute before `axesInputOpset`, an optional constant
/// input from then on), `keepdims` and `noop_with_empty_axes` of the node.
FailureOr<ReduceSpec> getReduceSpec(NodeContext &ctx, int64_t axesInputOpset);

/// The indices 0, 1, ..., size - 1 of dim `axis` of `input`, as an i64
/// vector: a constant for a static dim, a range over the dim read at run
/// time for a dynamic one (MaskOps.cpp).
Value createAxisIndices(NodeContext &ctx, Value input, int64_t axis);

/// `lhs + rhs` with ONNX's broadcasting rules checked, or an error at the
/// node naming both element types or shapes (ElementwiseOps.cpp).
FailureOr<Value> buildBroadcastAdd(NodeContext &ctx, Value lhs, Value rhs);

/// The positions `[0, n)` along dim `axis` of `input` as a 1-D i64 tensor,
/// from the input's shape at run time where the dim is dynamic
/// (AttentionOps.cpp).
Value createPositions(NodeContext &ctx, Value input, int64_t axis);

/// The latest opset of the default domain this importer knows: every
/// converter's schema versions up to it were reviewed (docs/importer.md,
/// "Opsets above 23"). Raise it only after reviewing each supported op's
/// newer versions, since every table entry extends to it.
inline constexpr int64_t kMaxSupportedOpset = 28;

} // namespace mlir::lmopt::onnx_import

#endif // LMOPT_IMPORTER_ONNX_OPCONVERTER_H
