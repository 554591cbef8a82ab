//===- ResourceBlob.cpp - the bytes of a dense_resource constant ----------===//

#include "lmopt/Support/ResourceBlob.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

FailureOr<ArrayRef<char>>
mlir::lmopt::getResourceBlobData(DenseResourceElementsAttr attr, Location loc) {
  AsmResourceBlob *blob = attr.getRawHandle().getBlob();
  if (!blob)
    return emitError(loc) << "constant's dense_resource blob '"
                          << attr.getRawHandle().getKey() << "' has no data";
  return blob->getData();
}
