//===- SparseWeights.cpp - N:M-sparse weights stored compressed -----------===//

#include "lmopt/Format/SparseWeights.h"

#include "LittleEndian.h"
#include "WeightSections.h"

#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::le;

static constexpr char kMagic[8] = {'L', 'M', 'O', 'P', 'T', 'S', 'P', 'W'};
/// Version 1.0; a range is offset, size, n, m.
static constexpr RangeSectionFormat kFormat{"sparse-weights", kMagic, 1, 0,
                                            8 + 8 + 4 + 4};

/// Bits of one position in a group of `m` (a power of two).
static uint32_t positionBits(uint32_t m) {
  uint32_t bits = 0;
  while ((1u << bits) < m)
    ++bits;
  return bits;
}

/// Why `n`:`m` is not a pattern the encoding holds, or "".
static std::string checkPattern(uint32_t n, uint32_t m) {
  if (m != 4 && m != 8 && m != 16)
    return "groups of " + std::to_string(m) + " (4, 8 or 16 are encoded)";
  if (n == 0 || n >= m)
    return std::to_string(n) + ":" + std::to_string(m) +
           " (0 < n < m values are kept)";
  if (n * positionBits(m) > 8)
    return std::to_string(n) + ":" + std::to_string(m) +
           " (the positions of a group must fit one byte)";
  return "";
}

uint64_t SparseWeights::denseBytes() const {
  uint64_t bytes = 0;
  for (const SparseRange &range : ranges)
    bytes += range.size;
  return bytes;
}

uint64_t SparseWeights::compressedBytes() const {
  uint64_t bytes = 0;
  for (const SparseRange &range : ranges)
    bytes += range.storedSize();
  return bytes;
}

/// Whether every group of `m` f32 values in [p, p + size) has at most `n`
/// with bits set.
static bool fitsPattern(const uint8_t *p, uint64_t size, uint32_t n,
                        uint32_t m) {
  for (uint64_t group = 0; group < size; group += 4 * uint64_t(m)) {
    uint32_t nonzero = 0;
    for (uint32_t i = 0; i < m; ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + group + 4 * i, 4);
      nonzero += bits != 0;
    }
    if (nonzero > n)
      return false;
  }
  return true;
}

SparseWeights lmopt::runtime::selectSparseWeights(const Program &program,
                                                  const uint8_t *weights,
                                                  uint64_t weightsSize,
                                                  uint32_t n, uint32_t m) {
  SparseWeights sparse;
  sparse.fullSize = weightsSize;
  if (!checkPattern(n, m).empty())
    return sparse;
  for (const WeightCluster &cluster : clusterWeightUses(program)) {
    uint64_t size = cluster.end - cluster.begin;
    if (cluster.oneDType && cluster.dtype == DType::F32 &&
        cluster.minElements >= kMinSparseElements &&
        size % (4 * uint64_t(m)) == 0 && cluster.end <= weightsSize &&
        fitsPattern(weights + cluster.begin, size, n, m))
      sparse.ranges.push_back({cluster.begin, size, n, m});
  }
  return sparse;
}

std::vector<uint8_t>
lmopt::runtime::compressSparseWeights(const uint8_t *weights,
                                      const SparseWeights &sparse) {
  std::vector<uint8_t> out;
  out.reserve(sparse.storedBytes());
  uint64_t pos = 0;
  for (const SparseRange &range : sparse.ranges) {
    out.insert(out.end(), weights + pos, weights + range.offset);
    uint32_t bits = positionBits(range.m);
    uint64_t groups = range.groups();
    size_t values = out.size();
    out.resize(values + range.storedSize(), 0);
    uint8_t *value = out.data() + values;
    uint8_t *index = value + groups * 4 * range.n;
    for (uint64_t g = 0; g < groups; ++g) {
      const uint8_t *group = weights + range.offset + g * 4 * range.m;
      // The nonzero positions first, then the lowest zero ones, so that
      // the kept positions increase and a group with fewer than n
      // nonzero values still names n distinct ones.
      uint32_t kept[16], count = 0;
      for (uint32_t i = 0; i < range.m; ++i) {
        uint32_t word;
        std::memcpy(&word, group + 4 * i, 4);
        if (word)
          kept[count++] = i;
      }
      for (uint32_t i = 0; i < range.m && count < range.n; ++i) {
        bool taken = false;
        for (uint32_t j = 0; j < count; ++j)
          taken |= kept[j] == i;
        if (!taken)
          kept[count++] = i;
      }
      // Sort the n positions (insertion; n <= 4).
      for (uint32_t a = 1; a < range.n; ++a)
        for (uint32_t b = a; b > 0 && kept[b - 1] > kept[b]; --b)
          std::swap(kept[b - 1], kept[b]);
      uint8_t byte = 0;
      for (uint32_t j = 0; j < range.n; ++j) {
        std::memcpy(value + (g * range.n + j) * 4, group + 4 * kept[j], 4);
        byte |= uint8_t(kept[j] << (j * bits));
      }
      index[g] = byte;
    }
    pos = range.offset + range.size;
  }
  out.insert(out.end(), weights + pos, weights + sparse.fullSize);
  return out;
}

std::vector<uint8_t>
lmopt::runtime::serializeSparseWeights(const SparseWeights &sparse) {
  std::vector<uint8_t> out = writeRangeSectionHeader(
      kFormat, sparse.fullSize, uint32_t(sparse.ranges.size()));
  for (const SparseRange &range : sparse.ranges) {
    putU64(out, range.offset);
    putU64(out, range.size);
    putU32(out, range.n);
    putU32(out, range.m);
  }
  return out;
}

/// Checks one decoded range against the previous one's end and the layout.
static std::string checkRange(const SparseRange &range, uint64_t previousEnd,
                              uint64_t fullSize) {
  if (std::string why = checkPattern(range.n, range.m); !why.empty())
    return "has pattern " + why;
  if (range.size == 0)
    return "is empty";
  if (range.size % (4 * uint64_t(range.m)))
    return "has " + std::to_string(range.size) +
           " bytes, not a whole number of groups of " +
           std::to_string(range.m) + " f32 values";
  return checkRangePlacement(range.offset, range.size, previousEnd, fullSize);
}

Status lmopt::runtime::parseSparseWeights(const uint8_t *data, size_t size,
                                          uint64_t storedSize,
                                          const std::string &path,
                                          SparseWeights &out) {
  auto bad = [&](const std::string &what) {
    return rangeSectionError(kFormat, path, what);
  };
  SparseWeights parsed;
  uint32_t count = 0;
  if (Status st = readRangeSectionHeader(kFormat, data, size, path,
                                         parsed.fullSize, count);
      !st)
    return st;
  uint64_t previousEnd = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *p =
        data + kRangeSectionHeaderSize + size_t(i) * kFormat.rangeSize;
    SparseRange range{getU64(p), getU64(p + 8), getU32(p + 16), getU32(p + 20)};
    if (std::string why = checkRange(range, previousEnd, parsed.fullSize);
        !why.empty())
      return bad("range " + std::to_string(i) + " " + why);
    previousEnd = range.offset + range.size;
    parsed.ranges.push_back(range);
  }
  // Disjoint ranges inside the layout, each stored in fewer bytes than it
  // covers: no overflow or underflow.
  uint64_t stored = parsed.storedBytes();
  if (stored != storedSize)
    return bad("stores the " + std::to_string(parsed.fullSize) +
               "-byte weights layout in " + std::to_string(stored) +
               " bytes, but the weights section has " +
               std::to_string(storedSize) + " bytes");
  out = std::move(parsed);
  return Status::ok();
}

Status lmopt::runtime::expandSparseWeights(const uint8_t *stored,
                                           const SparseWeights &sparse,
                                           const std::string &path,
                                           uint8_t *out) {
  uint64_t pos = 0, storedPos = 0;
  auto copyDense = [&](uint64_t end) {
    if (end > pos)
      std::memcpy(out + pos, stored + storedPos, end - pos);
    storedPos += end - pos;
  };
  for (size_t r = 0; r < sparse.ranges.size(); ++r) {
    const SparseRange &range = sparse.ranges[r];
    copyDense(range.offset);
    uint32_t bits = positionBits(range.m);
    uint64_t groups = range.groups();
    const uint8_t *value = stored + storedPos;
    const uint8_t *index = value + groups * 4 * range.n;
    uint8_t *dest = out + range.offset;
    std::memset(dest, 0, range.size);
    for (uint64_t g = 0; g < groups; ++g) {
      uint8_t byte = index[g];
      int previous = -1;
      for (uint32_t j = 0; j < range.n; ++j) {
        uint32_t at = (byte >> (j * bits)) & (range.m - 1);
        if (int(at) <= previous)
          return Status::error(
              StatusCode::InvalidFormat,
              "sparse-weights of '" + path + "' range " + std::to_string(r) +
                  " group " + std::to_string(g) + ": positions byte " +
                  std::to_string(byte) + " does not name increasing positions");
        previous = int(at);
        std::memcpy(dest + (g * range.m + at) * 4,
                    value + (g * range.n + j) * 4, 4);
      }
    }
    storedPos += range.storedSize();
    pos = range.offset + range.size;
  }
  copyDense(sparse.fullSize);
  return Status::ok();
}
