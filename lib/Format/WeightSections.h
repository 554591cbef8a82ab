//===- WeightSections.h - What the weight-range sections share --*- C++ -*-===//
//
// The `omitted-weights` and `sparse-weights` sections both describe ranges
// of a bundle's full weights layout. They choose them among the byte
// ranges that the plans' weight tensors and weight-initialized states read,
// merged where they overlap (a constant shared by several tensors), and
// they share one header: magic, version, the full layout's size and a
// count of fixed-size range records. Private to the Format library.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_FORMAT_WEIGHTSECTIONS_H
#define LMOPT_LIB_FORMAT_WEIGHTSECTIONS_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// Overlapping reads of the weights layout, as one range.
struct WeightCluster {
  uint64_t begin = 0, end = 0;
  /// The first read's dtype; `oneDType` when every read has it.
  DType dtype = DType::F32;
  bool oneDType = true;
  /// The fewest elements of a tensor that reads the range.
  uint64_t minElements = 0;
};

/// The clusters of `program`'s weight reads, sorted by offset.
std::vector<WeightCluster> clusterWeightUses(const Program &program);

/// The common header: magic (8 bytes), version (u32 major, u32 minor),
/// full size (u64), range count (u32), 28 bytes.
inline constexpr size_t kRangeSectionHeaderSize = 8 + 4 + 4 + 8 + 4;

/// What a section of `kind` (its name, for messages) is made of.
struct RangeSectionFormat {
  const char *kind;
  const char (&magic)[8];
  uint32_t major, minor;
  size_t rangeSize;
};

/// The header with `fullSize` and `count`; the records go after it.
std::vector<uint8_t> writeRangeSectionHeader(const RangeSectionFormat &format,
                                             uint64_t fullSize, uint32_t count);

/// Checks the magic, the length, the major version and that the count is
/// exactly the records the rest holds; sets `fullSize` and `count`. Errors
/// name the section and `path`.
Status readRangeSectionHeader(const RangeSectionFormat &format,
                              const uint8_t *data, size_t size,
                              const std::string &path, uint64_t &fullSize,
                              uint32_t &count);

/// An invalid-format error of a section of `format` in the bundle at
/// `path`: "<kind> section of '<path>' <what>".
Status rangeSectionError(const RangeSectionFormat &format,
                         const std::string &path, const std::string &what);

/// Why a range [offset, offset + size) that follows one ending at
/// `previousEnd` does not fit a `fullSize`-byte layout (out of order,
/// overlapping or past its end), or "".
std::string checkRangePlacement(uint64_t offset, uint64_t size,
                                uint64_t previousEnd, uint64_t fullSize);

} // namespace lmopt::runtime

#endif // LMOPT_LIB_FORMAT_WEIGHTSECTIONS_H
