//===- NodeContext.cpp - a node as seen by converters ---------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "GraphImporter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

bool KnownInts::isFullyKnown() const {
  return llvm::none_of(values, ShapedType::isDynamic);
}

KnownInts KnownInts::unknown(int64_t length) {
  return {{length}, SmallVector<int64_t>(length, ShapedType::kDynamic)};
}

KnownInts KnownInts::vector(ArrayRef<int64_t> values) {
  return {{static_cast<int64_t>(values.size())}, llvm::to_vector(values)};
}

KnownInts KnownInts::scalar(int64_t value) { return {{}, {value}}; }

KnownInts KnownInts::fromAttr(DenseIntElementsAttr attr) {
  auto intType = llvm::cast<IntegerType>(attr.getElementType());
  bool zeroExtend = intType.isUnsigned() || intType.getWidth() == 1;
  KnownInts result;
  result.shape = llvm::to_vector(attr.getType().getShape());
  for (const APInt &v : attr.getValues<APInt>()) {
    int64_t value =
        zeroExtend ? static_cast<int64_t>(v.getZExtValue()) : v.getSExtValue();
    // INT64_MIN is the unknown marker; exporters use it only as a slice
    // bound, where INT64_MIN + 1 means the same.
    result.values.push_back(ShapedType::isDynamic(value) ? value + 1 : value);
  }
  return result;
}

NodeContext::NodeContext(GraphImporter &graph, const onnx::NodeProto &node,
                         StringRef domain, int64_t opset, Location loc)
    : graph(graph), node(node), domain(domain), opset(opset), loc(loc) {}

LogicalResult NodeContext::resolveInputs() {
  for (const std::string &name : node.input()) {
    FailureOr<Value> value = graph.lookup(name, loc);
    if (failed(value))
      return failure();
    inputs.push_back(*value);
  }
  return success();
}

StringRef NodeContext::getOpType() const { return node.op_type(); }

StringRef NodeContext::getName() const {
  if (node.name().empty() && node.output_size() > 0)
    return node.output(0);
  return node.name();
}

OpBuilder &NodeContext::getBuilder() { return graph.getBuilder(); }

InFlightDiagnostic NodeContext::emitError() {
  return mlir::emitError(loc)
         << "node '" << getName() << "' ('" << getOpType() << "', domain '"
         << (domain.empty() ? StringRef("ai.onnx") : domain) << "', opset "
         << opset << "): ";
}

//===----------------------------------------------------------------------===//
// Inputs and outputs
//===----------------------------------------------------------------------===//

size_t NodeContext::getNumInputs() const { return inputs.size(); }

bool NodeContext::hasInput(size_t index) const {
  return index < inputs.size() && inputs[index];
}

Value NodeContext::getInput(size_t index) const {
  return index < inputs.size() ? inputs[index] : Value();
}

RankedTensorType NodeContext::getInputType(size_t index) const {
  Value value = getInput(index);
  return value ? llvm::cast<RankedTensorType>(value.getType())
               : RankedTensorType();
}

LogicalResult NodeContext::checkInputs(size_t min, size_t max) {
  if (inputs.size() < min || inputs.size() > max) {
    InFlightDiagnostic diag = emitError() << "expects ";
    if (min == max)
      diag << min;
    else
      diag << "between " << min << " and " << max;
    return diag << " inputs, got " << inputs.size();
  }
  for (size_t i = 0; i < min; ++i)
    if (!inputs[i])
      return emitError() << "required input " << i << " is missing";
  return success();
}

const KnownInts *NodeContext::getKnown(size_t index) const {
  Value value = getInput(index);
  return value ? graph.getKnown(value) : nullptr;
}

FailureOr<SmallVector<int64_t>> NodeContext::getConstantInts(size_t index,
                                                             StringRef what) {
  const KnownInts *contents = getKnown(index);
  if (!contents || !contents->isFullyKnown())
    return emitError() << "'" << what
                       << "' must be a constant integer tensor known at "
                          "import time";
  return contents->values;
}

size_t NodeContext::getNumOutputs() const { return node.output_size(); }

StringRef NodeContext::getOutputName(size_t index) const {
  return hasOutput(index) ? StringRef(node.output(int(index))) : StringRef();
}

bool NodeContext::untiesInitializerAliases() const {
  return graph.getOptions().untieInitializerAliases;
}

bool NodeContext::hasOutput(size_t index) const {
  return index < static_cast<size_t>(node.output_size()) &&
         !node.output(index).empty();
}

void NodeContext::setOutput(size_t index, Value value,
                            std::optional<KnownInts> known) {
  if (!hasOutput(index))
    return;
  if (known && !known->isFullyKnown() && known->values.empty())
    known.reset();
  graph.define(node.output(index), value, std::move(known));
}

Value NodeContext::createConstant(const KnownInts &known, Type elementType) {
  auto type = RankedTensorType::get(known.shape, elementType);
  DenseElementsAttr attr;
  if (auto intType = llvm::dyn_cast<IntegerType>(elementType)) {
    SmallVector<APInt> values;
    for (int64_t v : known.values)
      values.push_back(APInt(intType.getWidth(), v, /*isSigned=*/true,
                             /*implicitTrunc=*/true));
    attr = DenseElementsAttr::get(type, values);
  } else {
    auto floatType = llvm::cast<FloatType>(elementType);
    SmallVector<APFloat> values;
    for (int64_t v : known.values) {
      APFloat f(static_cast<double>(v));
      bool lostInfo;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lostInfo);
      values.push_back(f);
    }
    attr = DenseElementsAttr::get(type, values);
  }
  return graph.createConstant(attr, loc);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

static const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                            StringRef name) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

/// The attribute's kind; files from old exporters may leave `type` unset.
static onnx::AttributeProto::AttributeType
getKind(const onnx::AttributeProto &attr) {
  if (attr.type() != onnx::AttributeProto::UNDEFINED)
    return attr.type();
  if (attr.has_i())
    return onnx::AttributeProto::INT;
  if (attr.has_f())
    return onnx::AttributeProto::FLOAT;
  if (attr.has_s())
    return onnx::AttributeProto::STRING;
  if (attr.has_t())
    return onnx::AttributeProto::TENSOR;
  if (attr.ints_size())
    return onnx::AttributeProto::INTS;
  if (attr.floats_size())
    return onnx::AttributeProto::FLOATS;
  return onnx::AttributeProto::UNDEFINED;
}

static StringRef getKindName(onnx::AttributeProto::AttributeType kind) {
  switch (kind) {
  case onnx::AttributeProto::INT:
    return "int";
  case onnx::AttributeProto::FLOAT:
    return "float";
  case onnx::AttributeProto::STRING:
    return "string";
  case onnx::AttributeProto::TENSOR:
    return "tensor";
  case onnx::AttributeProto::INTS:
    return "ints";
  case onnx::AttributeProto::FLOATS:
    return "floats";
  case onnx::AttributeProto::GRAPH:
    return "graph";
  default:
    return "other";
  }
}

bool NodeContext::hasAttr(StringRef name) const {
  return findAttr(node, name) != nullptr;
}

/// Finds attribute `name` of `kind`; null with no diagnostic when it is
/// absent and `optional`, null with a diagnostic otherwise.
static const onnx::AttributeProto *
getAttrOfKind(NodeContext &context, const onnx::NodeProto &node, StringRef name,
              onnx::AttributeProto::AttributeType kind, bool optional,
              bool &failedOut) {
  failedOut = false;
  const onnx::AttributeProto *attr = findAttr(node, name);
  if (!attr) {
    if (optional)
      return nullptr;
    failedOut = true;
    context.emitError() << "missing required attribute '" << name << "'";
    return nullptr;
  }
  if (getKind(*attr) != kind) {
    failedOut = true;
    context.emitError() << "attribute '" << name << "' must be of kind "
                        << getKindName(kind) << ", got "
                        << getKindName(getKind(*attr));
    return nullptr;
  }
  return attr;
}

FailureOr<int64_t> NodeContext::getInt(StringRef name,
                                       std::optional<int64_t> defaultValue) {
  bool error;
  const onnx::AttributeProto *attr =
      getAttrOfKind(*this, node, name, onnx::AttributeProto::INT,
                    defaultValue.has_value(), error);
  if (error)
    return failure();
  return attr ? attr->i() : *defaultValue;
}

FailureOr<float> NodeContext::getFloat(StringRef name,
                                       std::optional<float> defaultValue) {
  bool error;
  const onnx::AttributeProto *attr =
      getAttrOfKind(*this, node, name, onnx::AttributeProto::FLOAT,
                    defaultValue.has_value(), error);
  if (error)
    return failure();
  return attr ? attr->f() : *defaultValue;
}

FailureOr<SmallVector<int64_t>>
NodeContext::getInts(StringRef name,
                     std::optional<ArrayRef<int64_t>> defaultValue) {
  bool error;
  const onnx::AttributeProto *attr =
      getAttrOfKind(*this, node, name, onnx::AttributeProto::INTS,
                    defaultValue.has_value(), error);
  if (error)
    return failure();
  if (!attr)
    return llvm::to_vector(*defaultValue);
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

FailureOr<SmallVector<float>> NodeContext::getFloats(StringRef name) {
  bool error;
  const onnx::AttributeProto *attr = getAttrOfKind(
      *this, node, name, onnx::AttributeProto::FLOATS, false, error);
  if (error)
    return failure();
  return SmallVector<float>(attr->floats().begin(), attr->floats().end());
}

FailureOr<std::string>
NodeContext::getString(StringRef name, std::optional<StringRef> defaultValue) {
  bool error;
  const onnx::AttributeProto *attr =
      getAttrOfKind(*this, node, name, onnx::AttributeProto::STRING,
                    defaultValue.has_value(), error);
  if (error)
    return failure();
  return attr ? attr->s() : defaultValue->str();
}

FailureOr<ElementsAttr> NodeContext::getTensor(StringRef name) {
  bool error;
  const onnx::AttributeProto *attr = getAttrOfKind(
      *this, node, name, onnx::AttributeProto::TENSOR, false, error);
  if (error)
    return failure();
  // The reader moves raw data out of the tensor; it is read once.
  onnx::TensorProto tensor = attr->t();
  if (tensor.name().empty())
    tensor.set_name(getName().str());
  return graph.readTensor(tensor, loc);
}

FailureOr<Type> NodeContext::getElementType(StringRef name) {
  FailureOr<int64_t> code = getInt(name);
  if (failed(code))
    return failure();
  Type type = convertElementType(getContext(), *code);
  if (!type)
    return emitError() << "attribute '" << name
                       << "' names unsupported element type "
                       << getElementTypeName(*code) << " (" << *code << ")";
  return type;
}

FailureOr<SmallVector<int64_t>>
NodeContext::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return emitError() << "axis " << axis << " is out of range for rank "
                         << rank;
    if (!seen.insert(*normalized).second)
      return emitError() << "axis " << axis << " appears more than once";
    result.push_back(*normalized);
  }
  return result;
}

FailureOr<Type> NodeContext::getStashType() {
  FailureOr<int64_t> stash = getInt("stash_type", 1);
  if (failed(stash))
    return failure();
  if (*stash == 1)
    return Type(getBuilder().getF32Type());
  if (*stash == 11)
    return Type(getBuilder().getF64Type());
  return emitError() << "attribute 'stash_type' = " << *stash
                     << " is not supported (1 for float or 11 for double)";
}
