//===- FuzzOmittedWeights.cpp - libFuzzer target for omitted-weights ------===//
//
// The `omitted-weights` section of a bundle compiled with --omit-weights.
// The first 8 bytes of an input are the kept weights' size the section is
// checked against, the rest the section. What parses is filled with random
// weights as a session does (full layouts up to 16 MiB) and serialized
// back, which must give the same bytes but for the minor version (a newer
// minor is read, this runtime's is written).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/OmittedWeights.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace lmopt::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 8)
    return 0;
  uint64_t keptSize;
  std::memcpy(&keptSize, data, 8);
  OmittedWeights omitted;
  if (!parseOmittedWeights(data + 8, size - 8, keptSize, "input", omitted))
    return 0;
  std::vector<uint8_t> bytes = serializeOmittedWeights(omitted);
  // Bytes 12-15: the minor version.
  if (bytes.size() >= 16 && size - 8 >= 16)
    std::memcpy(bytes.data() + 12, data + 8 + 12, 4);
  if (bytes.size() != size - 8 ||
      std::memcmp(bytes.data(), data + 8, bytes.size()) != 0) {
    std::fprintf(stderr, "lmopt-fuzz-omitted-weights: reserialized section "
                         "differs from the input\n");
    std::abort();
  }
  if (omitted.fullSize > (uint64_t(16) << 20))
    return 0;
  std::vector<uint8_t> kept(keptSize, 0x5a);
  std::vector<uint8_t> full(omitted.fullSize);
  fillRandomWeights(kept.data(), omitted, 42, full.data());
  return 0;
}
