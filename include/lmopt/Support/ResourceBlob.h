//===- ResourceBlob.h - the bytes of a dense_resource constant --*- C++ -*-===//
//
// The plan builder, the quantized-step lowering and the reference evaluator
// read constants stored as `dense` or `dense_resource`; a missing blob is a
// bad model, reported the same way.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_SUPPORT_RESOURCEBLOB_H
#define LMOPT_SUPPORT_RESOURCEBLOB_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <vector>

namespace mlir::lmopt {

/// The raw bytes of `attr`'s blob; a diagnostic at `loc` if it has none.
FailureOr<ArrayRef<char>> getResourceBlobData(DenseResourceElementsAttr attr,
                                              Location loc);

/// Bytes per element of a constant in memory: sub-byte integers (i1, i2,
/// i4) take one byte each, wider types their width rounded up to bytes.
size_t getConstantElementBytes(Type type);

/// A dense or dense_resource constant's elements, dense and little-endian,
/// `getConstantElementBytes` each. `storage` holds them unless they can be
/// used in place (a non-splat dense attribute, a blob).
FailureOr<ArrayRef<uint8_t>> getConstantBytes(ElementsAttr attr, Location loc,
                                              std::vector<uint8_t> &storage);

/// The constant as a dense attribute (what `arith.constant` can hold).
FailureOr<DenseElementsAttr> getDenseAttr(ElementsAttr attr, Location loc);

} // namespace mlir::lmopt

#endif // LMOPT_SUPPORT_RESOURCEBLOB_H
