//===- ExportOnnx.cpp - trained weights into the source ONNX model --------===//
//
// The trained model is the exported one with new initializer values: its
// graph, names and opset stay as the exporter wrote them, so anything that
// ran the original (onnxruntime, lmopt-compile) runs the trained model.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Training/ExportOnnx.h"

#include "lmopt/Format/AtomicWrite.h"

#include "onnx/onnx.pb.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/io/coded_stream.h>

#include <climits>

using lmopt::runtime::DType;
using lmopt::runtime::NamedTensor;
using namespace lmopt::training;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

llvm::Error lmopt::training::exportTrainedOnnx(
    const std::string &sourcePath, const std::string &outPath,
    const std::vector<NamedTensor> &parameters, bool newShapes) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(sourcePath);
  if (!buffer)
    return error("cannot read the source model '" + sourcePath +
                 "': " + buffer.getError().message());
  size_t size = (*buffer)->getBufferSize();
  if (size == 0 || size > size_t(INT_MAX))
    return error("'" + sourcePath + "' is not an ONNX model of under 2 GiB");
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
      int(size));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&stream) || !model.has_graph())
    return error("'" + sourcePath + "' is not an ONNX model");

  llvm::StringMap<onnx::TensorProto *> initializers;
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer())
    initializers[t.name()] = &t;
  bool reshaped = false;
  for (const NamedTensor &param : parameters) {
    auto it = initializers.find(param.name);
    if (it == initializers.end())
      return error("parameter '" + param.name + "' is no initializer of '" +
                   sourcePath + "'");
    onnx::TensorProto &t = *it->second;
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    if (t.data_type() != onnx::TensorProto::FLOAT ||
        param.tensor.dtype != DType::F32 ||
        (!newShapes && dims != param.tensor.shape) ||
        dims.size() != param.tensor.shape.size())
      return error("initializer '" + param.name + "' of '" + sourcePath +
                   "' is not f32 " +
                   lmopt::runtime::formatDims(param.tensor.shape) +
                   " like the trained parameter");
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return error("initializer '" + param.name + "' of '" + sourcePath +
                   "' is stored as external data, which the export does "
                   "not rewrite yet");
    t.clear_float_data();
    t.set_raw_data(param.tensor.data.data(), param.tensor.data.size());
    if (dims != param.tensor.shape) {
      t.clear_dims();
      for (int64_t dim : param.tensor.shape)
        t.add_dims(dim);
      reshaped = true;
    }
  }
  // The exporter's intermediate shapes no longer hold where a matrix
  // shrank; onnxruntime infers them again.
  if (reshaped)
    model.mutable_graph()->clear_value_info();

  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return error("cannot serialize the trained model");
  if (lmopt::runtime::Status st =
          lmopt::runtime::writeFileAtomically(outPath, bytes);
      !st)
    return error(st.message());
  return llvm::Error::success();
}

llvm::Error lmopt::training::compileInferenceBundle(const std::string &compiler,
                                   const std::string &onnxPath,
                                   const std::string &outPath,
                                   const std::vector<BundleInput> &inputs) {
  std::vector<std::string> args = {compiler, onnxPath, "-o", outPath};
  for (const BundleInput &input : inputs) {
    bool symbolic = llvm::is_contained(input.dims, int64_t(-1));
    std::string shape;
    for (int64_t dim : input.maxDims)
      shape += (shape.empty() ? "" : "x") + std::to_string(dim);
    args.push_back((symbolic ? "--max-shape=" : "--input-shape=") +
                   input.name + ":" + shape);
  }
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(compiler, argRefs, std::nullopt, {},
                                         0, 0, &message);
  if (status != 0)
    return error("'" + compiler + "' " +
                 (status < 0 ? "did not run: " + message
                             : "failed with status " + std::to_string(status)) +
                 " compiling '" + onnxPath + "'");
  return llvm::Error::success();
}
