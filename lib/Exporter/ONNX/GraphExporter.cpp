//===- GraphExporter.cpp - building one ONNX graph ------------------------===//

#include "GraphExporter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Support/ResourceBlob.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_export;

//===----------------------------------------------------------------------===//
// Element types and tensor bytes
//===----------------------------------------------------------------------===//

static std::optional<DataType> getIntegerDataType(unsigned width,
                                                  bool isSigned) {
  struct Entry {
    unsigned width;
    DataType signedType, unsignedType;
  };
  static const Entry kIntegers[] = {
      {4, onnx::TensorProto::INT4, onnx::TensorProto::UINT4},
      {8, onnx::TensorProto::INT8, onnx::TensorProto::UINT8},
      {16, onnx::TensorProto::INT16, onnx::TensorProto::UINT16},
      {32, onnx::TensorProto::INT32, onnx::TensorProto::UINT32},
      {64, onnx::TensorProto::INT64, onnx::TensorProto::UINT64}};
  for (const Entry &entry : kIntegers)
    if (entry.width == width)
      return isSigned ? entry.signedType : entry.unsignedType;
  return std::nullopt;
}

FailureOr<DataType> mlir::lmopt::onnx_export::getDataType(Type type,
                                                          Location loc) {
  std::optional<DataType> code;
  if (auto quantized = dyn_cast<quant::QuantizedType>(type))
    code = getIntegerDataType(quantized.getStorageTypeIntegralWidth(),
                              quantized.isSigned());
  else if (type.isF32())
    code = onnx::TensorProto::FLOAT;
  else if (type.isF16())
    code = onnx::TensorProto::FLOAT16;
  else if (type.isBF16())
    code = onnx::TensorProto::BFLOAT16;
  else if (type.isF64())
    code = onnx::TensorProto::DOUBLE;
  else if (type.isInteger(1))
    code = onnx::TensorProto::BOOL;
  else if (auto integer = dyn_cast<IntegerType>(type))
    code = getIntegerDataType(integer.getWidth(), !integer.isUnsigned());
  if (!code)
    return emitError(loc) << "element type " << type
                          << " has no ONNX equivalent";
  return *code;
}

/// One value per byte (the in-memory layout of 4-bit attributes) to ONNX's
/// packing: two per byte, low nibble first.
std::string mlir::lmopt::onnx_export::packNibbles(StringRef values) {
  std::string packed((values.size() + 1) / 2, '\0');
  for (size_t i = 0; i < values.size(); ++i)
    packed[i / 2] |= static_cast<char>((values[i] & 0xF) << (4 * (i % 2)));
  return packed;
}

FailureOr<std::string> mlir::lmopt::onnx_export::getRawData(ElementsAttr attr,
                                                            Location loc,
                                                            bool pack4Bit) {
  auto type = cast<ShapedType>(attr.getType());
  Type elementType = type.getElementType();
  if (!elementType.isIntOrFloat())
    return emitError(loc) << "constant of element type " << elementType
                          << " cannot be written as ONNX raw data";
  unsigned bits = elementType.getIntOrFloatBitWidth();
  if (bits != 1 && bits != 4 && bits % 8 != 0)
    return emitError(loc) << "constant of element type " << elementType
                          << " cannot be written as ONNX raw data";
  // Bools and 4-bit integers are one value per byte in memory.
  std::vector<uint8_t> storage;
  FailureOr<ArrayRef<uint8_t>> raw = getConstantBytes(attr, loc, storage);
  if (failed(raw))
    return failure();
  std::string bytes(raw->begin(), raw->end());
  if (bits == 4 && pack4Bit)
    return packNibbles(bytes);
  return bytes;
}

std::string mlir::lmopt::onnx_export::transposeBytes(StringRef data,
                                                     int64_t rows, int64_t cols,
                                                     size_t elementBytes) {
  std::string result(data.size(), '\0');
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&result[(c * rows + r) * elementBytes],
                  data.data() + (r * cols + c) * elementBytes, elementBytes);
  return result;
}

//===----------------------------------------------------------------------===//
// Names, nodes and initializers
//===----------------------------------------------------------------------===//

std::string mlir::lmopt::onnx_export::getLocName(Location loc,
                                                 StringRef fallback) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto nameLoc = dyn_cast<NameLoc>(inner)) {
      name = nameLoc.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name.empty() ? fallback.str() : name;
}

std::string mlir::lmopt::onnx_export::getConstantName(ConstantOp constant) {
  std::string fallback = "const";
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
    fallback = resource.getRawHandle().getKey().str();
  return getLocName(constant.getLoc(), fallback);
}

GraphExporter::GraphExporter(onnx::ModelProto &model, int64_t opset)
    : model(model), opset(opset) {}

std::string GraphExporter::freshName(StringRef base) {
  std::string name = base.empty() ? std::string("v") : base.str();
  if (usedNames.insert(name).second)
    return name;
  for (unsigned i = 1;; ++i) {
    std::string candidate = name + "_" + std::to_string(i);
    if (usedNames.insert(candidate).second)
      return candidate;
  }
}

void GraphExporter::setName(Value value, StringRef name) {
  usedNames.insert(name);
  names[value] = name.str();
}

std::string GraphExporter::defineResult(Value result) {
  auto it = names.find(result);
  if (it != names.end())
    return it->second;
  Operation *owner = result.getDefiningOp();
  std::string base =
      getLocName(owner->getLoc(), owner->getName().stripDialect());
  if (owner->getNumResults() > 1)
    base += "_" + std::to_string(cast<OpResult>(result).getResultNumber());
  std::string name = freshName(base);
  names[result] = name;
  return name;
}

FailureOr<std::string> GraphExporter::getName(Value value) {
  auto it = names.find(value);
  if (it != names.end())
    return it->second;
  Operation *owner = value.getDefiningOp();
  if (owner && isa<quant::StorageCastOp>(owner)) {
    FailureOr<std::string> name = nameStorageCast(*this, owner);
    if (succeeded(name))
      names[value] = *name;
    return name;
  }
  auto constant = dyn_cast_if_present<ConstantOp>(owner);
  if (!constant)
    return emitError(value.getLoc())
           << "value has no ONNX name (used before it is defined)";
  FailureOr<DataType> type =
      getDataType(constant.getType().getElementType(), constant.getLoc());
  if (failed(type))
    return failure();
  FailureOr<std::string> name = addElements(
      getConstantName(constant), constant.getValue(), *type, constant.getLoc());
  if (failed(name))
    return failure();
  names[value] = *name;
  return *name;
}

FailureOr<SmallVector<std::string>> GraphExporter::getNames(ValueRange values) {
  SmallVector<std::string> result;
  for (Value value : values) {
    if (!value) {
      result.push_back("");
      continue;
    }
    FailureOr<std::string> name = getName(value);
    if (failed(name))
      return failure();
    result.push_back(*name);
  }
  return result;
}

onnx::NodeProto &GraphExporter::addNode(StringRef opType,
                                        ArrayRef<std::string> inputs,
                                        ArrayRef<std::string> outputs,
                                        Location loc, StringRef domain) {
  onnx::NodeProto &node = *getGraph().add_node();
  std::string base = getLocName(loc, opType);
  if (!usedNodeNames.insert(base).second) {
    for (unsigned i = 1;; ++i) {
      std::string candidate =
          base + "/" + opType.str() + "_" + std::to_string(i);
      if (usedNodeNames.insert(candidate).second) {
        base = candidate;
        break;
      }
    }
  }
  node.set_name(base);
  node.set_op_type(opType.str());
  if (!domain.empty())
    node.set_domain(domain.str());
  // Trailing absent optional inputs are left out, as ONNX prefers.
  size_t numInputs = inputs.size();
  while (numInputs > 0 && inputs[numInputs - 1].empty())
    --numInputs;
  for (const std::string &input : inputs.take_front(numInputs))
    node.add_input(input);
  for (const std::string &output : outputs)
    node.add_output(output);
  return node;
}

std::string GraphExporter::emit(StringRef opType, ArrayRef<std::string> inputs,
                                Location loc,
                                function_ref<void(onnx::NodeProto &)> setAttrs,
                                StringRef domain) {
  std::string output = freshName(getLocName(loc, "t") + "/" + opType.str());
  onnx::NodeProto &node = addNode(opType, inputs, {output}, loc, domain);
  if (setAttrs)
    setAttrs(node);
  return output;
}

void GraphExporter::bindResult(Value result, StringRef produced, Location loc) {
  onnx::GraphProto &graph = getGraph();
  bool renamable = graph.node_size() > 0 &&
                   graph.node(graph.node_size() - 1).output_size() == 1 &&
                   graph.node(graph.node_size() - 1).output(0) == produced;
  if (!renamable) {
    addNode("Identity", {produced.str()}, {defineResult(result)}, loc);
    return;
  }
  // `produced` was fresh and is used by nothing yet; give the name back.
  usedNames.erase(produced);
  graph.mutable_node(graph.node_size() - 1)
      ->set_output(0, defineResult(result));
}

std::string GraphExporter::addInitializer(StringRef base, DataType type,
                                          ArrayRef<int64_t> dims,
                                          std::string bytes) {
  onnx::TensorProto &tensor = *getGraph().add_initializer();
  std::string name = freshName(base);
  tensor.set_name(name);
  tensor.set_data_type(type);
  for (int64_t dim : dims)
    tensor.add_dims(dim);
  tensor.set_raw_data(std::move(bytes));
  return name;
}

std::string GraphExporter::addInt64s(StringRef base, ArrayRef<int64_t> values,
                                     bool scalar) {
  std::string bytes(reinterpret_cast<const char *>(values.data()),
                    values.size() * sizeof(int64_t));
  SmallVector<int64_t> dims;
  if (!scalar)
    dims.push_back(values.size());
  return addInitializer(base, onnx::TensorProto::INT64, dims, std::move(bytes));
}

std::string GraphExporter::addFloat(StringRef base, float value) {
  std::string bytes(reinterpret_cast<const char *>(&value), sizeof(float));
  return addInitializer(base, onnx::TensorProto::FLOAT, {}, std::move(bytes));
}

FailureOr<std::string> GraphExporter::addFloatScalar(StringRef base, Type type,
                                                     double value,
                                                     Location loc) {
  auto floatType = dyn_cast<FloatType>(type);
  if (!floatType)
    return emitError(loc) << "expected a float type, got " << type;
  auto attr = DenseElementsAttr::get(RankedTensorType::get({}, floatType),
                                     FloatAttr::get(floatType, value));
  FailureOr<DataType> code = getDataType(type, loc);
  if (failed(code))
    return failure();
  return addElements(base, cast<ElementsAttr>(attr), *code, loc);
}

FailureOr<std::string> GraphExporter::addElements(StringRef base,
                                                  ElementsAttr attr,
                                                  DataType type, Location loc) {
  FailureOr<std::string> bytes = getRawData(attr, loc);
  if (failed(bytes))
    return failure();
  return addInitializer(base, type, cast<ShapedType>(attr.getType()).getShape(),
                        std::move(*bytes));
}

//===----------------------------------------------------------------------===//
// Attributes and one-to-one nodes
//===----------------------------------------------------------------------===//

static onnx::AttributeProto &addAttr(onnx::NodeProto &node, StringRef name,
                                     onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto &attr = *node.add_attribute();
  attr.set_name(name.str());
  attr.set_type(type);
  return attr;
}

void mlir::lmopt::onnx_export::setIntAttr(onnx::NodeProto &node, StringRef name,
                                          int64_t value) {
  addAttr(node, name, onnx::AttributeProto::INT).set_i(value);
}

void mlir::lmopt::onnx_export::setFloatAttr(onnx::NodeProto &node,
                                            StringRef name, float value) {
  addAttr(node, name, onnx::AttributeProto::FLOAT).set_f(value);
}

void mlir::lmopt::onnx_export::setIntsAttr(onnx::NodeProto &node,
                                           StringRef name,
                                           ArrayRef<int64_t> values) {
  onnx::AttributeProto &attr = addAttr(node, name, onnx::AttributeProto::INTS);
  for (int64_t value : values)
    attr.add_ints(value);
}

void mlir::lmopt::onnx_export::setStringAttr(onnx::NodeProto &node,
                                             StringRef name, StringRef value) {
  addAttr(node, name, onnx::AttributeProto::STRING).set_s(value.str());
}

void mlir::lmopt::onnx_export::setTensorAttr(onnx::NodeProto &node,
                                             StringRef name,
                                             onnx::TensorProto tensor) {
  *addAttr(node, name, onnx::AttributeProto::TENSOR).mutable_t() =
      std::move(tensor);
}

FailureOr<SmallVector<std::string>>
mlir::lmopt::onnx_export::getOperandNames(GraphExporter &ex, Operation *op) {
  return ex.getNames(op->getOperands());
}

LogicalResult mlir::lmopt::onnx_export::exportOneToOne(
    GraphExporter &ex, Operation *op, StringRef onnxType,
    function_ref<void(onnx::NodeProto &)> setAttrs) {
  FailureOr<SmallVector<std::string>> inputs = getOperandNames(ex, op);
  if (failed(inputs))
    return failure();
  SmallVector<std::string> outputs;
  for (Value result : op->getResults())
    outputs.push_back(ex.defineResult(result));
  onnx::NodeProto &node = ex.addNode(onnxType, *inputs, outputs, op->getLoc());
  if (setAttrs)
    setAttrs(node);
  return success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

ExportTable::ExportTable() {
  for (const SmallVector<ExportEntry> &family :
       {getOnnxOpExporters(), getFusedOpExporters(), getLinearExporters(),
        getQuantizedOpExporters()})
    for (const ExportEntry &entry : family)
      entries.try_emplace(entry.id, entry);
}

const ExportTable &ExportTable::get() {
  static const ExportTable table;
  return table;
}

const ExportEntry *ExportTable::lookup(Operation *op) const {
  auto it = entries.find(op->getName().getTypeID());
  return it == entries.end() ? nullptr : &it->second;
}
