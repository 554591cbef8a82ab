//===- Exporter.cpp - lmopt IR to an ONNX model ---------------------------===//
//
// Model-level work: pick the function, check that every op has an ONNX form
// (naming all that do not), choose the opset, name graph inputs and outputs,
// export op by op through ExportTable, then move large initializers to
// external data if asked and write the files atomically.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Exporter/ONNX/Exporter.h"

#include "GraphExporter.h"

#include "mlir/IR/TypeUtilities.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_export;

LogicalResult mlir::lmopt::verifyExternalDataName(StringRef name,
                                                  Location loc) {
  bool plain = !name.empty() && name != "." && name != ".." &&
               !name.contains('/') && !name.contains('\\') &&
               !name.contains('\0') && !llvm::sys::path::is_absolute(name);
  if (plain)
    return success();
  return emitError(loc) << "external data file '" << name
                        << "' must be a plain file name in the output's "
                           "folder (no folder, no '..')";
}

static FailureOr<func::FuncOp> findFunction(ModuleOp module, StringRef name) {
  SmallVector<func::FuncOp> functions =
      llvm::to_vector(module.getOps<func::FuncOp>());
  StringRef wanted = name.empty() ? StringRef("main") : name;
  for (func::FuncOp func : functions)
    if (func.getSymName() == wanted && !func.isExternal())
      return func;
  if (name.empty() && functions.size() == 1 && !functions[0].isExternal())
    return functions[0];
  return emitError(module.getLoc())
         << "module has no function '" << wanted << "' to export"
         << (name.empty() ? " (and not exactly one function)" : "");
}

/// The newest default-domain opset whose operator versions the mappings
/// were checked against (docs/exporter.md); raise it only after reviewing
/// every exported operator's newer versions.
static constexpr int64_t kMaxOpset = 21;

/// 4-bit integers and block-wise parameters exist from opset 21 on.
static bool needsOpset21(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (isa<quant::UniformQuantizedSubChannelType>(element))
    return true;
  if (auto quantized = dyn_cast<quant::QuantizedType>(element))
    return quantized.getStorageTypeIntegralWidth() == 4;
  return element.isInteger(4);
}

/// Checks that every op can be exported, reporting each that cannot, and
/// returns the opset the model needs.
static FailureOr<int64_t> checkOps(func::FuncOp func, int64_t minOpset) {
  int64_t opset = std::max<int64_t>(17, minOpset);
  bool ok = true;
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "cannot export function '" << func.getSymName()
                            << "' with more than one block";
  const ExportTable &table = ExportTable::get();
  for (Operation &op : func.getBody().front()) {
    // Constants become initializers where they are used.
    if (isa<func::ReturnOp, ConstantOp>(op))
      continue;
    const ExportEntry *entry = table.lookup(&op);
    if (!entry || op.getNumRegions() != 0) {
      op.emitError() << "cannot export op '" << op.getName() << "' in node '"
                     << getLocName(op.getLoc(), "<unnamed>")
                     << "' to ONNX: it has no ONNX form";
      ok = false;
      continue;
    }
    opset = std::max(opset, entry->minOpset);
    for (Type type :
         llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()))
      if (needsOpset21(type))
        opset = std::max<int64_t>(opset, 21);
  }
  if (!ok)
    return failure();
  return opset;
}

/// The IR version that goes with an opset of the default domain.
static int64_t getIRVersion(int64_t opset) {
  if (opset <= 18)
    return 8;
  if (opset <= 20)
    return 9;
  if (opset <= 22)
    return 10;
  return 11;
}

static LogicalResult setValueInfo(onnx::ValueInfoProto &info, StringRef name,
                                  Type type, bool symbolicDims, Location loc) {
  info.set_name(name.str());
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return emitError(loc) << "cannot export value '" << name << "' of type "
                          << type << ": ONNX graph values are tensors";
  FailureOr<DataType> code = getDataType(tensorType.getElementType(), loc);
  if (failed(code))
    return failure();
  onnx::TypeProto_Tensor &tensor = *info.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(*code);
  onnx::TensorShapeProto &shape = *tensor.mutable_shape();
  for (auto [i, dim] : llvm::enumerate(tensorType.getShape())) {
    onnx::TensorShapeProto_Dimension &entry = *shape.add_dim();
    if (!ShapedType::isDynamic(dim))
      entry.set_dim_value(dim);
    else if (symbolicDims)
      entry.set_dim_param(name.str() + "_dim" + std::to_string(i));
  }
  return success();
}

static LogicalResult buildGraph(func::FuncOp func, GraphExporter &ex) {
  onnx::GraphProto &graph = ex.getGraph();
  graph.set_name(func.getSymName().str());
  Location loc = func.getLoc();

  for (BlockArgument argument : func.getArguments()) {
    std::string name = getGraphInputName(func, argument.getArgNumber());
    ex.setName(argument, name);
    if (failed(setValueInfo(*graph.add_input(), name, argument.getType(),
                            /*symbolicDims=*/true, loc)))
      return failure();
  }

  // Results computed by a node get their graph output name directly; the
  // rest (inputs, constants, values returned twice) go through Identity.
  auto returnOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<std::string> outputNames;
  llvm::DenseSet<Value> named;
  for (auto [index, value] : llvm::enumerate(returnOp.getOperands())) {
    outputNames.push_back(getGraphOutputName(func, index));
    Operation *owner = value.getDefiningOp();
    if (owner && !isa<ConstantOp, quant::StorageCastOp>(owner) &&
        named.insert(value).second)
      ex.setName(value, outputNames.back());
  }

  const ExportTable &table = ExportTable::get();
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp, ConstantOp>(op))
      continue;
    const ExportEntry *entry = table.lookup(&op);
    if (failed(entry->fn(ex, &op, *entry)))
      return failure();
  }

  for (auto [value, outputName] :
       llvm::zip(returnOp.getOperands(), outputNames)) {
    FailureOr<std::string> name = ex.getName(value);
    if (failed(name))
      return failure();
    if (*name != outputName)
      ex.addNode("Identity", {*name}, {outputName}, returnOp.getLoc());
    if (failed(setValueInfo(*graph.add_output(), outputName, value.getType(),
                            /*symbolicDims=*/false, returnOp.getLoc())))
      return failure();
  }
  return success();
}

/// Moves initializers of at least `threshold` bytes into one buffer that
/// will be written to `fileName`.
static std::string moveToExternalData(onnx::GraphProto &graph,
                                      StringRef fileName, size_t threshold) {
  std::string data;
  for (onnx::TensorProto &tensor : *graph.mutable_initializer()) {
    if (tensor.raw_data().size() < threshold)
      continue;
    // Offsets aligned for memory mapping.
    data.resize(llvm::alignTo(data.size(), 4096), '\0');
    size_t offset = data.size();
    data += tensor.raw_data();
    tensor.clear_raw_data();
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    auto addEntry = [&](StringRef key, StringRef value) {
      onnx::StringStringEntryProto &entry = *tensor.add_external_data();
      entry.set_key(key.str());
      entry.set_value(value.str());
    };
    addEntry("location", fileName);
    addEntry("offset", std::to_string(offset));
    addEntry("length", std::to_string(data.size() - offset));
  }
  return data;
}

static LogicalResult writeFile(StringRef path, StringRef bytes, Location loc) {
  if (llvm::Error error = llvm::writeToOutput(path, [&](raw_ostream &os) {
        os << bytes;
        return llvm::Error::success();
      }))
    return emitError(loc) << "cannot write '" << path
                          << "': " << llvm::toString(std::move(error));
  return success();
}

LogicalResult mlir::lmopt::exportONNXModel(ModuleOp module,
                                           StringRef outputPath,
                                           const ExportOptions &options) {
  Location loc = module.getLoc();
  bool external = !options.externalDataFile.empty();
  if (external) {
    if (failed(verifyExternalDataName(options.externalDataFile, loc)))
      return failure();
    if (outputPath == "-")
      return emitError(loc) << "external data needs an output file; the "
                               "model cannot go to standard output";
  }
  if (options.minOpset > kMaxOpset)
    return emitError(loc) << "cannot write opset " << options.minOpset
                          << ": the exporter writes opsets 17 to " << kMaxOpset;
  FailureOr<func::FuncOp> func = findFunction(module, options.functionName);
  if (failed(func))
    return failure();
  FailureOr<int64_t> opset = checkOps(*func, options.minOpset);
  if (failed(opset))
    return failure();

  onnx::ModelProto model;
  model.set_ir_version(getIRVersion(*opset));
  model.set_producer_name("lmopt");
  GraphExporter ex(model, *opset);
  if (failed(buildGraph(*func, ex)))
    return failure();
  onnx::OperatorSetIdProto &defaultDomain = *model.add_opset_import();
  defaultDomain.set_domain("");
  defaultDomain.set_version(*opset);

  std::string data;
  if (external)
    data = moveToExternalData(*model.mutable_graph(), options.externalDataFile,
                              options.externalDataThreshold);
  size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX))
    return emitError(loc)
           << "the model is " << size
           << " bytes, over protobuf's 2 GiB limit; write its weights to a "
              "separate file with --external-data";
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return emitError(loc) << "protobuf could not serialize the model";

  if (!external)
    return writeFile(outputPath, bytes, loc);
  SmallString<256> dataPath = llvm::sys::path::parent_path(outputPath);
  llvm::sys::path::append(dataPath, options.externalDataFile);
  if (failed(writeFile(dataPath, data, loc)))
    return failure();
  if (failed(writeFile(outputPath, bytes, loc))) {
    // The data file alone is of no use; leave nothing behind.
    llvm::sys::fs::remove(dataPath);
    return failure();
  }
  return success();
}
