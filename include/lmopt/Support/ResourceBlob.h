//===- ResourceBlob.h - the bytes of a dense_resource constant --*- C++ -*-===//
//
// The plan builder and the reference evaluator both read constants stored
// as `dense_resource`; a missing blob is a bad model, reported the same way.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_SUPPORT_RESOURCEBLOB_H
#define LMOPT_SUPPORT_RESOURCEBLOB_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

namespace mlir::lmopt {

/// The raw bytes of `attr`'s blob; a diagnostic at `loc` if it has none.
FailureOr<ArrayRef<char>> getResourceBlobData(DenseResourceElementsAttr attr,
                                              Location loc);

} // namespace mlir::lmopt

#endif // LMOPT_SUPPORT_RESOURCEBLOB_H
