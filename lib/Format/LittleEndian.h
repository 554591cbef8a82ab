//===- LittleEndian.h - Fixed-width integers in section encodings -*- C++
//-*-===//
//
// The little-endian u32 and u64 fields of the small section encodings
// (omitted-weights, sparse-weights, the CUDA kernel payload), written and
// read byte by byte so that the host's endianness and alignment never
// matter. Private to the Format library.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_FORMAT_LITTLEENDIAN_H
#define LMOPT_LIB_FORMAT_LITTLEENDIAN_H

#include <cstdint>
#include <vector>

namespace lmopt::runtime::le {

inline void putU32(std::vector<uint8_t> &out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(uint8_t(value >> (8 * i)));
}

inline void putU64(std::vector<uint8_t> &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(value >> (8 * i)));
}

inline uint32_t getU32(const uint8_t *p) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= uint32_t(p[i]) << (8 * i);
  return value;
}

inline uint64_t getU64(const uint8_t *p) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(p[i]) << (8 * i);
  return value;
}

} // namespace lmopt::runtime::le

#endif // LMOPT_LIB_FORMAT_LITTLEENDIAN_H
