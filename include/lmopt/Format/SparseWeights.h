//===- SparseWeights.h - N:M-sparse weights stored compressed ---*- C++ -*-===//
//
// A weight that `lmopt-prune`'s `sparsity=N:M` left with at most N nonzero
// values in every group of M consecutive ones (2:4, the pattern sparse
// tensor cores use) is stored compressed: per group its N kept values and
// one byte of their positions. The `weights` section then holds the full
// layout with each such range replaced by its compressed form, and a
// `sparse-weights` section lists the full layout's size and the ranges; the
// plan still indexes the full layout, which a session rebuilds at load
// (docs/bundle-format.md, "The `sparse-weights` section"). The encoding is
// lossless: the rebuilt bytes are the compiler's.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_SPARSEWEIGHTS_H
#define LMOPT_FORMAT_SPARSEWEIGHTS_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// Weights with fewer f32 elements stay dense.
inline constexpr uint64_t kMinSparseElements = 1024;

/// One compressed range of the full weights layout: f32 values in groups of
/// `m` consecutive ones, each with at most `n` nonzero.
struct SparseRange {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t n = 2, m = 4;

  uint64_t groups() const { return size / (4 * uint64_t(m)); }
  /// The compressed bytes: per group `n` f32 values, then one index byte
  /// per group.
  uint64_t storedSize() const { return groups() * (4 * uint64_t(n) + 1); }
};

struct SparseWeights {
  /// Bytes of the full weights layout, which the plan's offsets index.
  uint64_t fullSize = 0;
  /// Sorted by offset, disjoint, each inside the full layout.
  std::vector<SparseRange> ranges;

  /// Bytes of the full layout the ranges cover, what those ranges are
  /// stored in, and the weights section's size (the full layout with the
  /// ranges compressed).
  uint64_t denseBytes() const;
  uint64_t compressedBytes() const;
  uint64_t storedBytes() const {
    return fullSize - denseBytes() + compressedBytes();
  }
};

/// The ranges of the `weightsSize`-byte layout `weights` to compress as
/// `n`:`m`: each range that only f32 weight tensors (or states initialized
/// from the weights) of at least kMinSparseElements elements read, whose
/// size is a whole number of groups and whose every group of `m`
/// consecutive values has at most `n` nonzero (by their bits, so -0.0
/// counts).
SparseWeights selectSparseWeights(const Program &program,
                                  const uint8_t *weights, uint64_t weightsSize,
                                  uint32_t n = 2, uint32_t m = 4);

/// What the `weights` section holds: the full layout `weights` with each of
/// `sparse`'s ranges replaced by its compressed form, in order.
std::vector<uint8_t> compressSparseWeights(const uint8_t *weights,
                                           const SparseWeights &sparse);

/// Encodes `sparse` as the `sparse-weights` section (version 1.0).
std::vector<uint8_t> serializeSparseWeights(const SparseWeights &sparse);

/// Decodes and checks a `sparse-weights` section of the bundle at `path`
/// whose `weights` section has `storedSize` bytes: ranges sorted, disjoint,
/// non-empty, whole groups, `0 < n < m`, `m` 4, 8 or 16 with `n` positions
/// fitting a byte, inside the full layout, which they must store in exactly
/// `storedSize` bytes.
Status parseSparseWeights(const uint8_t *data, size_t size, uint64_t storedSize,
                          const std::string &path, SparseWeights &out);

/// Writes the full layout to `out` (sparse.fullSize bytes) from the
/// `weights` section `stored`: the dense bytes at their offsets, and each
/// range's groups with their kept values at their positions and zeros
/// elsewhere. Fails, naming the range and group, when a group's positions
/// are not increasing inside the group.
Status expandSparseWeights(const uint8_t *stored, const SparseWeights &sparse,
                           const std::string &path, uint8_t *out);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_SPARSEWEIGHTS_H
