//===- WeightsBuilder.h - One weights buffer for a bundle -------*- C++ -*-===//
//
// The `weights` section: every constant a plan's steps read, stored once
// (by attribute, then by content), each at a multiple of 64 bytes. One
// builder can serve several plans (entry points) that share the buffer.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_WEIGHTSBUILDER_H
#define LMOPT_TARGET_COMMON_WEIGHTSBUILDER_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mlir::lmopt {

class WeightsBuilder {
public:
  /// The offset of `attr`'s bytes in the buffer, appending them unless the
  /// same attribute or the same bytes are there already. Fails (with a
  /// diagnostic at `loc`) when the constant's bytes cannot be read.
  FailureOr<uint64_t> add(ElementsAttr attr, Location loc);

  /// The buffer so far.
  ArrayRef<uint8_t> getBytes() const { return bytes; }
  /// Hands the buffer over; the builder is empty afterwards.
  std::vector<uint8_t> takeBytes();

private:
  std::vector<uint8_t> bytes;
  llvm::DenseMap<Attribute, uint64_t> offsetByAttr;
  /// Content hash -> (offset, size).
  std::unordered_multimap<uint64_t, std::pair<uint64_t, uint64_t>> offsetByHash;
};

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_WEIGHTSBUILDER_H
