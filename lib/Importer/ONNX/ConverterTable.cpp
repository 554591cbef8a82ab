//===- ConverterTable.cpp - the table of supported ONNX operators ---------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

using namespace mlir;
using namespace mlir::lmopt::onnx_import;

ConverterTable::ConverterTable() {
  for (ArrayRef<ConverterEntry> family :
       {getElementwiseConverters(), getMatMulConverters(),
        getNormalizationConverters(), getShapeConverters(),
        getDataMovementConverters(), getQuantizedConverters(),
        getMicrosoftConverters(), getPadConverters(), getMaskConverters(),
        getCompositeConverters(), getEinsumConverters(),
        getAttentionConverters()})
    llvm::append_range(entries, family);
}

const ConverterTable &ConverterTable::get() {
  static const ConverterTable table;
  return table;
}

const ConverterEntry *ConverterTable::lookup(StringRef domain, StringRef opType,
                                             int64_t opset) const {
  for (const ConverterEntry &entry : entries)
    if (entry.domain == domain && entry.opType == opType &&
        entry.minOpset <= opset && opset <= entry.maxOpset)
      return &entry;
  return nullptr;
}
