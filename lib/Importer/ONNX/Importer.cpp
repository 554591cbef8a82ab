//===- Importer.cpp - ONNX model to lmopt IR ------------------------------===//
//
// Model-level checks (file size, protobuf parse, IR version, opset imports)
// before GraphImporter walks the graph.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/Importer.h"

#include "GraphImporter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <google/protobuf/io/coded_stream.h>

#include <climits>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

/// "name:rest" split at its last ':', or an error naming `what` and `form`.
static llvm::Expected<std::pair<StringRef, StringRef>>
splitSpec(StringRef spec, StringRef what, StringRef form) {
  auto parts = spec.rsplit(':');
  if (parts.first.empty() || spec.find(':') == StringRef::npos)
    return llvm::createStringError("%s '%s' is not of the form %s",
                                   what.str().c_str(), spec.str().c_str(),
                                   form.str().c_str());
  return parts;
}

llvm::Error mlir::lmopt::parseInputShape(StringRef spec,
                                         ImportOptions &options) {
  auto split = splitSpec(spec, "input shape", "name:1x128");
  if (!split)
    return split.takeError();
  auto [name, dims] = *split;
  SmallVector<int64_t> shape;
  if (!dims.empty() && dims != "scalar") {
    SmallVector<StringRef> parts;
    dims.split(parts, 'x');
    for (StringRef part : parts) {
      if (part == "?") {
        shape.push_back(ShapedType::kDynamic);
        continue;
      }
      int64_t dim;
      if (part.getAsInteger(10, dim) || dim < 0)
        return llvm::createStringError(
            "input shape '%s' has dim '%s', which is not a non-negative "
            "integer or '?'",
            spec.str().c_str(), part.str().c_str());
      shape.push_back(dim);
    }
  }
  options.inputShapes[name] = std::move(shape);
  return llvm::Error::success();
}

llvm::Error mlir::lmopt::parseInputValue(StringRef spec,
                                         ImportOptions &options) {
  auto split = splitSpec(spec, "input value", "name:1,2");
  if (!split)
    return split.takeError();
  auto [name, list] = *split;
  // "name:" binds an empty tensor.
  SmallVector<StringRef> parts;
  if (!list.empty())
    list.split(parts, ',');
  SmallVector<std::string> numbers;
  for (StringRef part : parts)
    numbers.push_back(part.trim().str());
  if (!options.inputValues.try_emplace(name, std::move(numbers)).second)
    return llvm::createStringError("input '%s' is given two values",
                                   name.str().c_str());
  return llvm::Error::success();
}

void mlir::lmopt::registerONNXImportDialects(DialectRegistry &registry) {
  registry.insert<LmoptDialect, func::FuncDialect>();
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::lmopt::importONNXModel(MLIRContext &ctx, StringRef path,
                             const ImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(fileLoc)
           << "cannot open '" << path << "': " << buffer.getError().message();
  return importONNXModel(ctx, (*buffer)->getMemBufferRef(), path, options);
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::lmopt::importONNXModel(MLIRContext &ctx, llvm::MemoryBufferRef buffer,
                             StringRef path, const ImportOptions &options) {
  ctx.loadDialect<LmoptDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(&ctx, path.empty() ? "-" : path, 0, 0);
  size_t size = buffer.getBufferSize();
  if (size == 0)
    return emitError(fileLoc) << "file is empty, not an ONNX model";
  if (size > static_cast<size_t>(INT_MAX))
    return emitError(fileLoc)
           << "file of " << size
           << " bytes exceeds protobuf's 2 GiB message limit; store large "
              "weights as ONNX external data";

  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(buffer.getBufferStart()),
      static_cast<int>(size));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return emitError(fileLoc)
           << "file is not an ONNX model: protobuf parsing failed "
              "(truncated or not a ModelProto)";
  if (!model.has_ir_version() || model.ir_version() <= 0)
    return emitError(fileLoc)
           << "file is not an ONNX model: it has no 'ir_version'";
  if (!model.has_graph())
    return emitError(fileLoc) << "ONNX model has no graph";

  llvm::StringMap<int64_t> opsets;
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    StringRef domain = getCanonicalDomain(opset.domain());
    if (!opsets.try_emplace(domain, opset.version()).second)
      return emitError(fileLoc)
             << "ONNX model imports domain '"
             << (domain.empty() ? StringRef("ai.onnx") : domain) << "' twice";
  }
  // IR version 3 models may omit the default domain's opset; ONNX then means
  // opset 1, which lmopt does not convert, so ask for an explicit one.
  auto defaultOpset = opsets.find("");
  if (defaultOpset == opsets.end())
    return emitError(fileLoc)
           << "ONNX model does not import the default domain 'ai.onnx'";
  if (defaultOpset->second <= 0 || defaultOpset->second > kMaxSupportedOpset)
    return emitError(fileLoc)
           << "ONNX model imports opset " << defaultOpset->second
           << " of 'ai.onnx'; lmopt supports opsets up to "
           << kMaxSupportedOpset;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  GraphImporter graph(&ctx, *model.mutable_graph(), opsets, path, options);
  if (failed(graph.importInto(*module)))
    return failure();
  return module;
}
