//===- OmittedWeights.cpp - Bundles without their large weights -----------===//

#include "lmopt/Format/OmittedWeights.h"

#include "LittleEndian.h"
#include "WeightSections.h"

#include "lmopt/Format/Float16.h"

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::le;

static constexpr char kMagic[8] = {'L', 'M', 'O', 'P', 'T', 'O', 'M', 'W'};
/// Version 1.0; a range is offset, size, dtype.
static constexpr RangeSectionFormat kFormat{"omitted-weights", kMagic, 1, 0,
                                            8 + 8 + 4};

static bool isRandomizable(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

uint64_t OmittedWeights::omittedBytes() const {
  uint64_t bytes = 0;
  for (const OmittedRange &range : ranges)
    bytes += range.size;
  return bytes;
}

OmittedWeights lmopt::runtime::selectOmittedWeights(const Program &program,
                                                    uint64_t weightsSize) {
  // A cluster (a constant shared by several tensors) is omitted only when
  // every read may be randomized as the same dtype.
  OmittedWeights omitted;
  omitted.fullSize = weightsSize;
  for (const WeightCluster &cluster : clusterWeightUses(program))
    if (cluster.oneDType && isRandomizable(cluster.dtype) &&
        cluster.minElements >= kMinOmittedElements)
      omitted.ranges.push_back(
          {cluster.begin, cluster.end - cluster.begin, cluster.dtype});
  return omitted;
}

std::vector<uint8_t>
lmopt::runtime::keptWeights(const uint8_t *weights,
                            const OmittedWeights &omitted) {
  std::vector<uint8_t> kept;
  kept.reserve(omitted.fullSize - omitted.omittedBytes());
  uint64_t pos = 0;
  for (const OmittedRange &range : omitted.ranges) {
    kept.insert(kept.end(), weights + pos, weights + range.offset);
    pos = range.offset + range.size;
  }
  kept.insert(kept.end(), weights + pos, weights + omitted.fullSize);
  return kept;
}

std::vector<uint8_t>
lmopt::runtime::serializeOmittedWeights(const OmittedWeights &omitted) {
  std::vector<uint8_t> out = writeRangeSectionHeader(
      kFormat, omitted.fullSize, uint32_t(omitted.ranges.size()));
  for (const OmittedRange &range : omitted.ranges) {
    putU64(out, range.offset);
    putU64(out, range.size);
    putU32(out, uint32_t(range.dtype));
  }
  return out;
}

/// Checks one decoded range against the previous one's end and the layout.
static std::string checkRange(const OmittedRange &range, uint64_t previousEnd,
                              uint64_t fullSize) {
  if (!isRandomizable(range.dtype))
    return "has dtype " + std::to_string(int(range.dtype)) +
           "; only f32, f16 and bf16 weights are omitted";
  if (range.size == 0)
    return "is empty";
  if (range.size % dtypeSize(range.dtype))
    return "has " + std::to_string(range.size) + " bytes, not a whole number " +
           "of " + dtypeName(range.dtype) + " values";
  return checkRangePlacement(range.offset, range.size, previousEnd, fullSize);
}

Status lmopt::runtime::parseOmittedWeights(const uint8_t *data, size_t size,
                                           uint64_t keptSize,
                                           const std::string &path,
                                           OmittedWeights &out) {
  auto bad = [&](const std::string &what) {
    return rangeSectionError(kFormat, path, what);
  };
  OmittedWeights parsed;
  uint32_t count = 0;
  if (Status st = readRangeSectionHeader(kFormat, data, size, path,
                                         parsed.fullSize, count);
      !st)
    return st;
  uint64_t previousEnd = 0, omittedBytes = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *p =
        data + kRangeSectionHeaderSize + size_t(i) * kFormat.rangeSize;
    OmittedRange range{getU64(p), getU64(p + 8), DType(getU32(p + 16))};
    if (std::string why = checkRange(range, previousEnd, parsed.fullSize);
        !why.empty())
      return bad("range " + std::to_string(i) + " " + why);
    previousEnd = range.offset + range.size;
    omittedBytes += range.size;
    parsed.ranges.push_back(range);
  }
  // Disjoint ranges inside the layout: the sum cannot pass fullSize.
  if (parsed.fullSize - omittedBytes != keptSize)
    return bad("leaves " + std::to_string(parsed.fullSize - omittedBytes) +
               " of the " + std::to_string(parsed.fullSize) +
               "-byte weights layout, but the weights section has " +
               std::to_string(keptSize) + " bytes");
  out = std::move(parsed);
  return Status::ok();
}

/// splitmix64 (Steele, Lea and Flood): a tiny, well-mixed stream that is the
/// same everywhere.
static uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T, typename Convert>
static void fillRange(uint8_t *out, uint64_t count, uint64_t state,
                      Convert convert) {
  // 24 random bits: uniform steps of 2^-24 across [-bound, bound).
  constexpr float kStep = 2.0f * kRandomWeightBound / float(1 << 24);
  for (uint64_t i = 0; i < count; ++i) {
    float value = float(nextRandom(state) >> 40) * kStep - kRandomWeightBound;
    T stored = convert(value);
    std::memcpy(out + i * sizeof(T), &stored, sizeof(T));
  }
}

void lmopt::runtime::fillRandomWeights(const uint8_t *kept,
                                       const OmittedWeights &omitted,
                                       uint64_t seed, uint8_t *out) {
  uint64_t pos = 0, keptPos = 0;
  auto copyKept = [&](uint64_t end) {
    if (end > pos)
      std::memcpy(out + pos, kept + keptPos, end - pos);
    keptPos += end - pos;
  };
  for (const OmittedRange &range : omitted.ranges) {
    copyKept(range.offset);
    uint8_t *dest = out + range.offset;
    uint64_t state = seed ^ range.offset;
    uint64_t count = range.size / dtypeSize(range.dtype);
    switch (range.dtype) {
    case DType::F16:
      fillRange<uint16_t>(dest, count, state, floatToHalf);
      break;
    case DType::BF16:
      fillRange<uint16_t>(dest, count, state, floatToBFloat16);
      break;
    default:
      fillRange<float>(dest, count, state, [](float v) { return v; });
      break;
    }
    pos = range.offset + range.size;
  }
  copyKept(omitted.fullSize);
}
