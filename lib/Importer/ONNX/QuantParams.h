//===- QuantParams.h - constant quantization parameters ---------*- C++ -*-===//
//
// Private to the ONNX importer: reads the constant scales, zero points and
// integer weights of quantized ONNX forms, and builds the `quant` types and
// storage casts that carry them. Shared by the default-domain QDQ converters
// and the com.microsoft ones (MatMulNBits).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_IMPORTER_ONNX_QUANTPARAMS_H
#define LMOPT_LIB_IMPORTER_ONNX_QUANTPARAMS_H

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"

#include <optional>
#include <vector>

namespace mlir::lmopt::onnx_import {

/// The attribute of an `lmopt.constant` defining `value`, or null.
ElementsAttr getConstantAttr(Value value);

/// Every element of a constant as a double / int64 (integers sign- or
/// zero-extended by their signedness); nullopt for other element types.
std::optional<SmallVector<double>> readFloats(ElementsAttr attr);
std::optional<SmallVector<int64_t>> readInts(ElementsAttr attr);
/// Row-major bytes of a constant of a byte-sized element type.
std::optional<std::vector<char>> readBytes(ElementsAttr attr);

/// Where the scales of a quantized tensor apply.
struct QuantLayout {
  /// Per tensor when false.
  bool perAxis = false;
  int64_t axis = 0;
  /// Block size along `axis` (ONNX opset 21 `block_size`); 0 when not blocked.
  int64_t blockSize = 0;
  /// Shape of the scale and zero point tensors.
  SmallVector<int64_t> paramShape;
};

/// Builds the `quant` element type for storage `storage` (an integer type
/// whose signedness gives the quantized range), expressed type `expressed`,
/// for a tensor of shape `dataShape`. Reports a node error and returns null
/// when the parameters are inconsistent or not expressible.
quant::QuantizedType
buildQuantType(NodeContext &ctx, IntegerType storage, FloatType expressed,
               ArrayRef<int64_t> dataShape, const QuantLayout &layout,
               ArrayRef<double> scales, ArrayRef<int64_t> zeroPoints);

/// Gives the integer tensor `value` the quantized element type `type` with
/// `quant.scast`. Unsigned constants are first re-created with the signless
/// type of the same width, which `quant.scast` requires; returns null for an
/// unsigned value that is not a constant.
Value castToQuantized(NodeContext &ctx, Value value, quant::QuantizedType type);

/// The signless type `quant.scast` and `quant` types use for `type`.
IntegerType getSignlessStorage(IntegerType type);

} // namespace mlir::lmopt::onnx_import

#endif // LMOPT_LIB_IMPORTER_ONNX_QUANTPARAMS_H
