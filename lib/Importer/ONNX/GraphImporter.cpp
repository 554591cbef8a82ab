//===- GraphImporter.cpp - ONNX graph walking -----------------------------===//

#include "GraphImporter.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"

#include <queue>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

StringRef mlir::lmopt::onnx_import::getCanonicalDomain(StringRef domain) {
  return domain == "ai.onnx" ? StringRef() : domain;
}

static StringRef getDisplayDomain(StringRef domain) {
  return domain.empty() ? StringRef("ai.onnx") : domain;
}

GraphImporter::GraphImporter(MLIRContext *ctx, onnx::GraphProto &graph,
                             const llvm::StringMap<int64_t> &opsets,
                             StringRef modelPath, const ImportOptions &options)
    : ctx(ctx), graph(graph), opsets(opsets), options(options),
      fileLoc(
          FileLineColLoc::get(ctx, modelPath.empty() ? "-" : modelPath, 0, 0)),
      builder(ctx), tensorReader(modelPath, options.inlineConstantLimit) {}

Location GraphImporter::getNodeLoc(const onnx::NodeProto &node) const {
  StringRef name = node.name();
  if (name.empty() && node.output_size() > 0)
    name = node.output(0);
  return NameLoc::get(StringAttr::get(ctx, name), fileLoc);
}

FailureOr<Value> GraphImporter::lookup(StringRef name, Location useLoc) {
  if (name.empty())
    return Value();
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = initializers.find(name);
  if (init == initializers.end())
    return emitError(useLoc) << "value '" << name << "' is not defined";
  Location loc = NameLoc::get(StringAttr::get(ctx, name), fileLoc);
  FailureOr<ElementsAttr> attr = tensorReader.read(*init->second, loc);
  if (failed(attr))
    return failure();
  Value value = createConstant(*attr, loc);
  values[name] = value;
  return value;
}

const KnownInts *GraphImporter::getKnown(Value value) const {
  auto it = known.find(value);
  return it == known.end() ? nullptr : &it->second;
}

void GraphImporter::define(StringRef name, Value value,
                           std::optional<KnownInts> contents) {
  values[name] = value;
  if (contents &&
      static_cast<int64_t>(contents->values.size()) <= kMaxKnownElements)
    known[value] = std::move(*contents);
}

Value GraphImporter::createConstant(ElementsAttr value, Location loc) {
  auto op = ConstantOp::create(builder, loc, value);
  auto dense = llvm::dyn_cast<DenseIntElementsAttr>(value);
  if (dense && value.getNumElements() <= kMaxKnownElements)
    known[op.getOutput()] = KnownInts::fromAttr(dense);
  return op.getOutput();
}

/// Checks that every value name is defined once.
LogicalResult GraphImporter::checkNames() {
  llvm::StringSet<> inputNames;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!inputNames.insert(input.name()).second)
      return emitError(fileLoc)
             << "graph input '" << input.name() << "' is declared twice";
  for (onnx::TensorProto &init : *graph.mutable_initializer()) {
    if (init.name().empty())
      return emitError(fileLoc) << "graph has an initializer without a name";
    if (!initializers.try_emplace(init.name(), &init).second)
      return emitError(fileLoc)
             << "initializer '" << init.name() << "' is defined twice";
  }
  return success();
}

/// Orders nodes so that producers come first (Kahn's algorithm, preferring
/// file order), reporting dangling inputs, values defined twice and cycles.
FailureOr<SmallVector<size_t>> GraphImporter::sortNodes() {
  size_t numNodes = graph.node_size();
  llvm::StringMap<size_t> producer;
  for (size_t i = 0; i < numNodes; ++i) {
    const onnx::NodeProto &node = graph.node(i);
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      if (values.count(output) || initializers.count(output))
        return emitError(getNodeLoc(node))
               << "node '" << node.name() << "' redefines graph input or "
               << "initializer '" << output << "'";
      auto [it, inserted] = producer.try_emplace(output, i);
      if (!inserted)
        return emitError(getNodeLoc(node))
               << "value '" << output << "' is defined by node '"
               << graph.node(it->second).name() << "' and again by node '"
               << node.name() << "'";
    }
  }
  SmallVector<SmallVector<size_t>> users(numNodes);
  SmallVector<size_t> pending(numNodes, 0);
  for (size_t i = 0; i < numNodes; ++i) {
    const onnx::NodeProto &node = graph.node(i);
    for (const std::string &input : node.input()) {
      if (input.empty() || values.count(input) || initializers.count(input))
        continue;
      auto it = producer.find(input);
      if (it == producer.end())
        return emitError(getNodeLoc(node))
               << "node '" << node.name() << "' (" << node.op_type()
               << ") uses value '" << input
               << "', which no node, graph input or initializer defines";
      users[it->second].push_back(i);
      ++pending[i];
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < numNodes; ++i)
    if (pending[i] == 0)
      ready.push(i);
  SmallVector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t user : users[i])
      if (--pending[user] == 0)
        ready.push(user);
  }
  if (order.size() == numNodes)
    return order;
  for (size_t i = 0; i < numNodes; ++i)
    if (pending[i] != 0)
      return emitError(getNodeLoc(graph.node(i)))
             << "graph has a cycle through node '" << graph.node(i).name()
             << "' (" << graph.node(i).op_type() << ")";
  return failure();
}

FailureOr<RankedTensorType>
GraphImporter::getInputType(const onnx::ValueInfoProto &info) {
  StringRef name = info.name();
  if (!info.type().has_tensor_type())
    return emitError(fileLoc)
           << "graph input '" << name
           << "' is not a tensor; lmopt imports tensors only";
  const onnx::TypeProto::Tensor &tensorType = info.type().tensor_type();
  Type elementType = convertElementType(ctx, tensorType.elem_type());
  if (!elementType)
    return emitError(fileLoc)
           << "graph input '" << name << "' has unsupported element type "
           << getElementTypeName(tensorType.elem_type()) << " ("
           << tensorType.elem_type() << ")";
  std::optional<SmallVector<int64_t>> declared;
  if (tensorType.has_shape()) {
    declared.emplace();
    for (const onnx::TensorShapeProto::Dimension &dim :
         tensorType.shape().dim()) {
      if (!dim.has_dim_value()) {
        declared->push_back(ShapedType::kDynamic);
        continue;
      }
      if (dim.dim_value() < 0)
        return emitError(fileLoc) << "graph input '" << name
                                  << "' has negative dim " << dim.dim_value();
      declared->push_back(dim.dim_value());
    }
  }
  auto pinned = options.inputShapes.find(name);
  if (pinned == options.inputShapes.end()) {
    if (!declared)
      return emitError(fileLoc)
             << "graph input '" << name
             << "' has no shape; pin one with --input-shape=" << name << ":...";
    return RankedTensorType::get(*declared, elementType);
  }
  ArrayRef<int64_t> shape = pinned->second;
  if (declared && !isCompatibleShape(shape, *declared))
    return emitError(fileLoc)
           << "pinned shape " << formatShape(shape) << " of graph input '"
           << name << "' does not match its declared shape "
           << formatShape(*declared);
  return RankedTensorType::get(shape, elementType);
}

FailureOr<ElementsAttr> GraphImporter::getBoundValue(StringRef name,
                                                     RankedTensorType type) {
  ArrayRef<std::string> numbers = options.inputValues.find(name)->second;
  if (!type.hasStaticShape() ||
      type.getNumElements() != static_cast<int64_t>(numbers.size()))
    return emitError(fileLoc)
           << "--input-value gives " << numbers.size()
           << " numbers for graph input '" << name << "' of type " << type
           << "; it needs a static shape (--input-shape) of as many elements";
  Type elementType = type.getElementType();
  auto bad = [&](StringRef number) {
    return emitError(fileLoc)
           << "--input-value '" << number << "' for graph input '" << name
           << "' is not a " << elementType << " number";
  };
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> elements;
    for (StringRef number : numbers) {
      APFloat value(floatType.getFloatSemantics());
      auto status =
          value.convertFromString(number, APFloat::rmNearestTiesToEven);
      if (!status || number.empty()) {
        llvm::consumeError(status.takeError());
        return bad(number);
      }
      elements.push_back(value);
    }
    return ElementsAttr(DenseElementsAttr::get(type, elements));
  }
  auto intType = llvm::dyn_cast<IntegerType>(elementType);
  if (!intType)
    return emitError(fileLoc) << "--input-value cannot bind graph input '"
                              << name << "' of element type " << elementType;
  SmallVector<APInt> elements;
  unsigned width = intType.getWidth();
  for (StringRef number : numbers) {
    int64_t value;
    uint64_t unsignedValue;
    bool fits;
    if (!number.getAsInteger(10, value)) {
      APInt bits(64, value, /*isSigned=*/true);
      fits = width == 1 ? (value == 0 || value == 1)
             : intType.isUnsigned()
                 ? value >= 0 && bits.getActiveBits() <= width
                 : bits.getSignificantBits() <= width;
      unsignedValue = static_cast<uint64_t>(value);
    } else if (!number.getAsInteger(10, unsignedValue)) {
      fits = intType.isUnsigned() && width == 64;
    } else {
      fits = false;
    }
    if (!fits)
      return bad(number);
    elements.push_back(APInt(64, unsignedValue).trunc(width));
  }
  return ElementsAttr(DenseElementsAttr::get(type, elements));
}

LogicalResult GraphImporter::reportUnsupportedNodes() {
  bool ok = true;
  const ConverterTable &table = ConverterTable::get();
  for (const onnx::NodeProto &node : graph.node()) {
    StringRef domain = getCanonicalDomain(node.domain());
    auto opset = opsets.find(domain);
    if (opset == opsets.end()) {
      emitError(getNodeLoc(node))
          << "node '" << node.name() << "' (" << node.op_type()
          << ") uses domain '" << getDisplayDomain(domain)
          << "', which the model does not import";
      ok = false;
      continue;
    }
    if (!table.lookup(domain, node.op_type(), opset->second)) {
      emitError(getNodeLoc(node))
          << "unsupported ONNX operator '" << node.op_type() << "' (domain '"
          << getDisplayDomain(domain) << "', opset " << opset->second
          << ") in node '" << node.name() << "'";
      ok = false;
    }
  }
  return success(ok);
}

LogicalResult GraphImporter::convertNode(onnx::NodeProto &node) {
  StringRef domain = getCanonicalDomain(node.domain());
  int64_t opset = opsets.lookup(domain);
  const ConverterEntry *entry =
      ConverterTable::get().lookup(domain, node.op_type(), opset);
  Location loc = getNodeLoc(node);
  NodeContext context(*this, node, domain, opset, loc);
  if (failed(context.resolveInputs()))
    return failure();
  Block *block = builder.getInsertionBlock();
  Operation *last = block->empty() ? nullptr : &block->back();
  if (failed(entry->convert(context)))
    return failure();
  for (int i = 0, e = node.output_size(); i < e; ++i)
    if (!node.output(i).empty() && !values.count(node.output(i)))
      return context.emitError()
             << "produced no value for output '" << node.output(i) << "'";
  // The verifiers restate ONNX's rules; a failure here means the model breaks
  // one that the converter did not check itself.
  Block::iterator begin =
      last ? std::next(last->getIterator()) : block->begin();
  for (Operation &op : llvm::make_range(begin, block->end()))
    if (failed(mlir::verify(&op)))
      return context.emitError() << "produced an invalid '" << op.getName()
                                 << "' op (see the previous error)";
  return success();
}

LogicalResult GraphImporter::importInto(ModuleOp module) {
  if (failed(checkNames()))
    return failure();

  SmallVector<Type> argumentTypes;
  SmallVector<const onnx::ValueInfoProto *> arguments;
  SmallVector<std::pair<StringRef, ElementsAttr>> bound;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    // Inputs with an initializer are defaults (IR version < 4); they import
    // as constants.
    if (initializers.count(input.name()))
      continue;
    FailureOr<RankedTensorType> type = getInputType(input);
    if (failed(type))
      return failure();
    if (options.inputValues.count(input.name())) {
      FailureOr<ElementsAttr> value = getBoundValue(input.name(), *type);
      if (failed(value))
        return failure();
      bound.emplace_back(input.name(), *value);
      continue;
    }
    argumentTypes.push_back(*type);
    arguments.push_back(&input);
  }
  auto isInput = [&](StringRef name) {
    return llvm::any_of(arguments,
                        [&](const onnx::ValueInfoProto *info) {
                          return info->name() == name;
                        }) ||
           llvm::any_of(bound,
                        [&](auto &value) { return value.first == name; });
  };
  for (const auto &pinned : options.inputShapes)
    if (!options.ignoreUnknownInputs && !isInput(pinned.getKey()))
      return emitError(fileLoc) << "--input-shape names '" << pinned.getKey()
                                << "', which is not a graph input";
  for (const auto &value : options.inputValues)
    if (!options.ignoreUnknownInputs && !isInput(value.getKey()))
      return emitError(fileLoc) << "--input-value names '" << value.getKey()
                                << "', which is not a graph input";

  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(builder, fileLoc, options.functionName,
                                   builder.getFunctionType(argumentTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [info, argument] : llvm::zip(arguments, entry->getArguments())) {
    argument.setLoc(NameLoc::get(StringAttr::get(ctx, info->name()), fileLoc));
    values[info->name()] = argument;
  }
  builder.setInsertionPointToEnd(entry);
  for (auto [name, value] : bound)
    values[name] = createConstant(
        value, NameLoc::get(StringAttr::get(ctx, name), fileLoc));

  FailureOr<SmallVector<size_t>> order = sortNodes();
  if (failed(order) || failed(reportUnsupportedNodes()))
    return failure();
  for (size_t index : *order)
    if (failed(convertNode(*graph.mutable_node(index))))
      return failure();

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (output.name().empty() ||
        (!values.count(output.name()) && !initializers.count(output.name())))
      return emitError(fileLoc)
             << "graph output '" << output.name()
             << "' is not defined by any node, graph input or initializer";
    FailureOr<Value> value = lookup(output.name(), fileLoc);
    if (failed(value))
      return failure();
    results.push_back(*value);
  }
  // Constants were created where first used; gather them at the top.
  Operation *anchor = nullptr;
  for (Operation &op : llvm::make_early_inc_range(*entry)) {
    if (!isa<ConstantOp>(op))
      continue;
    if (anchor)
      op.moveAfter(anchor);
    else
      op.moveBefore(entry, entry->begin());
    anchor = &op;
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setFunctionType(
      builder.getFunctionType(argumentTypes, ValueRange(results).getTypes()));
  // Tools bind values by graph name (lmopt-interpret's .npz inputs and
  // outputs), and printed IR keeps no argument locations.
  SmallVector<StringRef> inputNames, outputNames;
  for (const onnx::ValueInfoProto *info : arguments)
    inputNames.push_back(info->name());
  for (const onnx::ValueInfoProto &output : graph.output())
    outputNames.push_back(output.name());
  func->setAttr(kGraphInputNamesAttr, builder.getStrArrayAttr(inputNames));
  func->setAttr(kGraphOutputNamesAttr, builder.getStrArrayAttr(outputNames));
  return success();
}
