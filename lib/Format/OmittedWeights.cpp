//===- OmittedWeights.cpp - Bundles without their large weights -----------===//

#include "lmopt/Format/OmittedWeights.h"

#include "lmopt/Format/Float16.h"

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;

static constexpr char kMagic[8] = {'L', 'M', 'O', 'P', 'T', 'O', 'M', 'W'};
static constexpr uint32_t kVersionMajor = 1;
static constexpr uint32_t kVersionMinor = 0;
/// magic, version, full size, count.
static constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 4;
/// offset, size, dtype.
static constexpr size_t kRangeSize = 8 + 8 + 4;

static bool isRandomizable(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

uint64_t OmittedWeights::omittedBytes() const {
  uint64_t bytes = 0;
  for (const OmittedRange &range : ranges)
    bytes += range.size;
  return bytes;
}

namespace {
/// A byte range of the weights layout that something reads, as what.
struct WeightUse {
  uint64_t begin, end;
  DType dtype;
  bool omittable;
};
} // namespace

OmittedWeights lmopt::runtime::selectOmittedWeights(const Program &program,
                                                    uint64_t weightsSize) {
  std::vector<WeightUse> uses;
  auto add = [&](uint64_t offset, uint64_t bytes, uint64_t elements,
                 DType dtype) {
    if (bytes)
      uses.push_back(
          {offset, offset + bytes, dtype,
           isRandomizable(dtype) && elements >= kMinOmittedElements});
  };
  for (const Plan &plan : program.entries)
    for (const PlanTensor &t : plan.tensors)
      if (t.storage == TensorStorage::Weight)
        add(t.offset, t.byteSize(), t.elementCount(), t.dtype);
  for (const PlanState &state : program.states)
    if (state.init == PlanState::Init::Weight)
      add(state.offset, state.byteSize(), state.elementCount(), state.dtype);
  std::sort(
      uses.begin(), uses.end(),
      [](const WeightUse &a, const WeightUse &b) { return a.begin < b.begin; });
  // Overlapping uses form one cluster (a constant shared by several
  // tensors); it is omitted only when every use may be randomized as the
  // same dtype.
  OmittedWeights omitted;
  omitted.fullSize = weightsSize;
  for (size_t i = 0; i < uses.size();) {
    OmittedRange range{uses[i].begin, 0, uses[i].dtype};
    uint64_t end = uses[i].end;
    bool omittable = true;
    size_t j = i;
    for (; j < uses.size() && uses[j].begin < end; ++j) {
      end = std::max(end, uses[j].end);
      omittable &= uses[j].omittable && uses[j].dtype == range.dtype;
    }
    i = j;
    range.size = end - range.offset;
    if (omittable)
      omitted.ranges.push_back(range);
  }
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

static void putU32(std::vector<uint8_t> &out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(uint8_t(value >> (8 * i)));
}

static void putU64(std::vector<uint8_t> &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(value >> (8 * i)));
}

std::vector<uint8_t>
lmopt::runtime::serializeOmittedWeights(const OmittedWeights &omitted) {
  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  putU32(out, kVersionMajor);
  putU32(out, kVersionMinor);
  putU64(out, omitted.fullSize);
  putU32(out, uint32_t(omitted.ranges.size()));
  for (const OmittedRange &range : omitted.ranges) {
    putU64(out, range.offset);
    putU64(out, range.size);
    putU32(out, uint32_t(range.dtype));
  }
  return out;
}

static uint32_t getU32(const uint8_t *p) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= uint32_t(p[i]) << (8 * i);
  return value;
}

static uint64_t getU64(const uint8_t *p) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(p[i]) << (8 * i);
  return value;
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
  if (range.offset < previousEnd)
    return "starts at " + std::to_string(range.offset) +
           ", before the previous range's end " + std::to_string(previousEnd) +
           " (ranges must be sorted and disjoint)";
  if (range.offset > fullSize || range.size > fullSize - range.offset)
    return "[" + std::to_string(range.offset) + ", +" +
           std::to_string(range.size) + ") passes the " +
           std::to_string(fullSize) + "-byte weights layout";
  return "";
}

Status lmopt::runtime::parseOmittedWeights(const uint8_t *data, size_t size,
                                           uint64_t keptSize,
                                           const std::string &path,
                                           OmittedWeights &out) {
  auto bad = [&](const std::string &what) {
    return Status::error(StatusCode::InvalidFormat,
                         "omitted-weights section of '" + path + "' " + what);
  };
  if (size < sizeof(kMagic) || std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
    return bad("does not start with 'LMOPTOMW'");
  if (size < kHeaderSize)
    return bad("is truncated: " + std::to_string(size) +
               " bytes, shorter than its " + std::to_string(kHeaderSize) +
               "-byte header");
  uint32_t major = getU32(data + 8), minor = getU32(data + 12);
  if (major != kVersionMajor)
    return Status::error(
        StatusCode::VersionMismatch,
        "omitted-weights section of '" + path + "' has version " +
            std::to_string(major) + "." + std::to_string(minor) +
            ", not this runtime's " + std::to_string(kVersionMajor) + "." +
            std::to_string(kVersionMinor) + "; recompile the model");
  OmittedWeights parsed;
  parsed.fullSize = getU64(data + 16);
  uint32_t count = getU32(data + 24);
  if (count != (size - kHeaderSize) / kRangeSize ||
      (size - kHeaderSize) % kRangeSize)
    return bad("lists " + std::to_string(count) + " ranges in " +
               std::to_string(size - kHeaderSize) + " bytes (" +
               std::to_string(kRangeSize) + " bytes each)");
  uint64_t previousEnd = 0, omittedBytes = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *p = data + kHeaderSize + size_t(i) * kRangeSize;
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
