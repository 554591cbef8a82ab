//===- Philox.h - the counter-based generator of dropout masks --*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011): a keyed bijection of a 128-bit counter, so element i of a
// mask is a pure function of (seed, stream, i) and every device and the
// reference evaluator compute the same mask in any order. The compiler's
// kernel lowering emits the same rounds as arith ops
// (lib/Conversion/LmoptToLinalg); this header is the reference.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_PHILOX_H
#define LMOPT_FORMAT_PHILOX_H

#include <array>
#include <cstdint>

namespace lmopt::philox {

inline constexpr uint32_t kMultiplier0 = 0xD2511F53u;
inline constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u;
inline constexpr uint32_t kWeyl1 = 0xBB67AE85u;
inline constexpr int kRounds = 10;

/// The four 32-bit outputs for `counter` under `key`.
inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                          std::array<uint32_t, 2> key) {
  for (int round = 0; round < kRounds; ++round) {
    uint64_t p0 = uint64_t(kMultiplier0) * counter[0];
    uint64_t p1 = uint64_t(kMultiplier1) * counter[2];
    counter = {uint32_t(p1 >> 32) ^ counter[1] ^ key[0], uint32_t(p1),
               uint32_t(p0 >> 32) ^ counter[3] ^ key[1], uint32_t(p0)};
    key = {key[0] + kWeyl0, key[1] + kWeyl1};
  }
  return counter;
}

/// A uniform float in [0, 1) for element `index` of stream `stream` under
/// `seed`: the top 24 bits of the first output, over 2^24.
inline float uniform(uint64_t seed, uint32_t stream, uint64_t index) {
  std::array<uint32_t, 4> out =
      philox4x32({uint32_t(index), uint32_t(index >> 32), stream, 0u},
                 {uint32_t(seed), uint32_t(seed >> 32)});
  return float(out[0] >> 8) * (1.0f / 16777216.0f);
}

} // namespace lmopt::philox

#endif // LMOPT_FORMAT_PHILOX_H
