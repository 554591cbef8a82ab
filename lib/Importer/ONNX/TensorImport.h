//===- TensorImport.h - ONNX tensors and types to MLIR ----------*- C++ -*-===//
//
// Private to the ONNX importer: element types, tensor types and tensor
// contents (typed fields, raw data, external data) as MLIR types and
// attributes. Every check on file content reports an error; none asserts.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_IMPORTER_ONNX_TENSORIMPORT_H
#define LMOPT_LIB_IMPORTER_ONNX_TENSORIMPORT_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"

#include "onnx/onnx.pb.h"

#include <string>

namespace mlir::lmopt::onnx_import {

/// The MLIR type of an ONNX element type code, or null when lmopt has no
/// equivalent (strings, unknown codes).
Type convertElementType(MLIRContext *ctx, int64_t code);

/// "FLOAT", "INT64", ... for diagnostics; "<unknown>" otherwise.
StringRef getElementTypeName(int64_t code);

/// Checks ONNX dims (non-negative, product fits in int64) and returns them.
FailureOr<SmallVector<int64_t>>
convertTensorDims(const google::protobuf::RepeatedField<int64_t> &dims,
                  StringRef tensorName, Location loc);

/// Turns TensorProtos into elements attributes.
class TensorReader {
public:
  /// `modelPath` locates external data; "" or "-" forbids it.
  TensorReader(StringRef modelPath, size_t inlineLimit);

  /// Converts `tensor`. Raw data is moved out of `tensor` into the result
  /// rather than copied, so `tensor` must not be read again.
  FailureOr<ElementsAttr> read(onnx::TensorProto &tensor, Location loc);

private:
  FailureOr<ElementsAttr> readPacked4Bit(onnx::TensorProto &tensor,
                                         RankedTensorType type, Location loc);
  FailureOr<ElementsAttr> readExternal(onnx::TensorProto &tensor,
                                       RankedTensorType type,
                                       int64_t expectedBytes, Location loc);

  std::string modelDir;
  bool externalDataAllowed;
  size_t inlineLimit;
};

} // namespace mlir::lmopt::onnx_import

#endif // LMOPT_LIB_IMPORTER_ONNX_TENSORIMPORT_H
