//===- QuantizedOps.cpp - ONNX quantized ops and com.microsoft ops --------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getQuantizedConverters() {
  return {};
}
