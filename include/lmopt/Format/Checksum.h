//===- Checksum.h - 64-bit content checksum ---------------------*- C++ -*-===//
//
// Bundles checksum their header, section table and every section with XXH64
// (xxHash's 64-bit variant, seed 0). It runs at memory speed (several GB/s),
// so validating gigabytes of weights stays cheap, and it is bit-for-bit the
// reference algorithm: `xxh64sum` and the `xxhash` Python package give the
// same values, which lets tools outside lmopt check a bundle.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_CHECKSUM_H
#define LMOPT_FORMAT_CHECKSUM_H

#include <cstddef>
#include <cstdint>

namespace lmopt::runtime {

/// XXH64 of `size` bytes at `data` with `seed`.
uint64_t xxh64(const void *data, size_t size, uint64_t seed = 0);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_CHECKSUM_H
