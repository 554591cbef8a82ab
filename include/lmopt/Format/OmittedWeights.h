//===- OmittedWeights.h - Bundles without their large weights ---*- C++ -*-===//
//
// `lmopt-compile --omit-weights` leaves the large floating-point weights out
// of a bundle so that a full-size model fits through a narrow transfer to a
// machine that times it. The `weights` section then holds only the kept
// bytes, compacted, and an `omitted-weights` section lists the full layout's
// size and each omitted range; the plan still indexes the full layout. A
// session refuses such a bundle unless it is given a seed, and then fills the
// omitted ranges with seeded pseudo-random values: they time like trained
// weights and mean nothing (docs/bundle-format.md, "The `omitted-weights`
// section").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_OMITTEDWEIGHTS_H
#define LMOPT_FORMAT_OMITTEDWEIGHTS_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// Floating-point weights with fewer elements are kept: biases of small
/// layers, norms' scales, scalars.
inline constexpr uint64_t kMinOmittedElements = 1024;
/// The largest magnitude of a random weight.
inline constexpr float kRandomWeightBound = 0.05f;

/// One left-out range of the full weights layout.
struct OmittedRange {
  uint64_t offset = 0;
  uint64_t size = 0;
  /// F32, F16 or BF16: what the random values are written as.
  DType dtype = DType::F32;
};

struct OmittedWeights {
  /// Bytes of the full weights layout, which the plan's offsets index.
  uint64_t fullSize = 0;
  /// Sorted by offset, disjoint, each inside the full layout.
  std::vector<OmittedRange> ranges;

  uint64_t omittedBytes() const;
};

/// The ranges of the `weightsSize`-byte weights layout that --omit-weights
/// leaves out: every range that only f32, f16 or bf16 weight tensors (or
/// states initialized from the weights) of at least kMinOmittedElements
/// elements and one dtype read. Bytes any other tensor reads (integer
/// constants, small tensors, a different dtype's view) stay exact.
OmittedWeights selectOmittedWeights(const Program &program,
                                    uint64_t weightsSize);

/// The bytes of the full layout `weights` outside `omitted`'s ranges, in
/// order: what the `weights` section holds.
std::vector<uint8_t> keptWeights(const uint8_t *weights,
                                 const OmittedWeights &omitted);

/// Encodes `omitted` as the `omitted-weights` section (version 1.0).
std::vector<uint8_t> serializeOmittedWeights(const OmittedWeights &omitted);

/// Decodes and checks an `omitted-weights` section of the bundle at `path`
/// whose `weights` section has `keptSize` bytes: ranges sorted, disjoint,
/// non-empty, of a floating-point dtype and a whole number of its elements,
/// inside the full layout, which they must reduce to exactly `keptSize`.
Status parseOmittedWeights(const uint8_t *data, size_t size, uint64_t keptSize,
                           const std::string &path, OmittedWeights &out);

/// Writes the full layout to `out` (omitted.fullSize bytes): the kept bytes
/// at their offsets, and in each omitted range values uniform in
/// [-kRandomWeightBound, kRandomWeightBound] of its dtype from a splitmix64
/// stream seeded with `seed ^ range.offset`. The same seed gives the same
/// bytes on every machine.
void fillRandomWeights(const uint8_t *kept, const OmittedWeights &omitted,
                       uint64_t seed, uint8_t *out);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_OMITTEDWEIGHTS_H
