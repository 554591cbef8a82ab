//===- Checksum.cpp - XXH64 -----------------------------------------------===//
//
// The bundle's and token datasets' checksums are XXH64 (docs/bundle-format.md),
// from Debian's libxxhash-dev compiled inline (XXH_INLINE_ALL): no library
// to link or ship, the reference implementation's result on every host.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Checksum.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t lmopt::runtime::xxh64(const void *data, size_t size, uint64_t seed) {
  return XXH64(data, size, seed);
}
