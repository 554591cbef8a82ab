//===- WeightSections.cpp - What the weight-range sections share ----------===//

#include "WeightSections.h"

#include "LittleEndian.h"

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;

namespace {
struct WeightUse {
  uint64_t begin, end, elements;
  DType dtype;
};
} // namespace

std::vector<WeightCluster>
lmopt::runtime::clusterWeightUses(const Program &program) {
  std::vector<WeightUse> uses;
  auto add = [&](uint64_t offset, uint64_t bytes, uint64_t elements,
                 DType dtype) {
    if (bytes)
      uses.push_back({offset, offset + bytes, elements, dtype});
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
  std::vector<WeightCluster> clusters;
  for (size_t i = 0; i < uses.size();) {
    WeightCluster cluster{uses[i].begin, uses[i].end, uses[i].dtype, true,
                          uses[i].elements};
    size_t j = i;
    for (; j < uses.size() && uses[j].begin < cluster.end; ++j) {
      cluster.end = std::max(cluster.end, uses[j].end);
      cluster.oneDType &= uses[j].dtype == cluster.dtype;
      cluster.minElements = std::min(cluster.minElements, uses[j].elements);
    }
    i = j;
    clusters.push_back(cluster);
  }
  return clusters;
}

std::vector<uint8_t>
lmopt::runtime::writeRangeSectionHeader(const RangeSectionFormat &format,
                                        uint64_t fullSize, uint32_t count) {
  std::vector<uint8_t> out(format.magic, format.magic + 8);
  le::putU32(out, format.major);
  le::putU32(out, format.minor);
  le::putU64(out, fullSize);
  le::putU32(out, count);
  return out;
}

Status lmopt::runtime::readRangeSectionHeader(const RangeSectionFormat &format,
                                              const uint8_t *data, size_t size,
                                              const std::string &path,
                                              uint64_t &fullSize,
                                              uint32_t &count) {
  auto bad = [&](const std::string &what) {
    return rangeSectionError(format, path, what);
  };
  if (size < 8 || std::memcmp(data, format.magic, 8) != 0)
    return bad("does not start with '" + std::string(format.magic, 8) + "'");
  if (size < kRangeSectionHeaderSize)
    return bad("is truncated: " + std::to_string(size) +
               " bytes, shorter than its " +
               std::to_string(kRangeSectionHeaderSize) + "-byte header");
  uint32_t major = le::getU32(data + 8), minor = le::getU32(data + 12);
  if (major != format.major)
    return Status::error(
        StatusCode::VersionMismatch,
        std::string(format.kind) + " section of '" + path + "' has version " +
            std::to_string(major) + "." +
            std::to_string(minor) + ", not this runtime's " +
            std::to_string(format.major) + "." + std::to_string(format.minor) +
            "; recompile the model");
  fullSize = le::getU64(data + 16);
  count = le::getU32(data + 24);
  size_t records = size - kRangeSectionHeaderSize;
  if (count != records / format.rangeSize || records % format.rangeSize)
    return bad("lists " + std::to_string(count) + " ranges in " +
               std::to_string(records) + " bytes (" +
               std::to_string(format.rangeSize) + " bytes each)");
  return Status::ok();
}

Status lmopt::runtime::rangeSectionError(const RangeSectionFormat &format,
                                         const std::string &path,
                                         const std::string &what) {
  return Status::error(StatusCode::InvalidFormat, std::string(format.kind) +
                                                      " section of '" + path +
                                                      "' " + what);
}

std::string lmopt::runtime::checkRangePlacement(uint64_t offset, uint64_t size,
                                                uint64_t previousEnd,
                                                uint64_t fullSize) {
  if (offset < previousEnd)
    return "starts at " + std::to_string(offset) +
           ", before the previous range's end " + std::to_string(previousEnd) +
           " (ranges must be sorted and disjoint)";
  if (offset > fullSize || size > fullSize - offset)
    return "[" + std::to_string(offset) + ", +" + std::to_string(size) +
           ") passes the " + std::to_string(fullSize) +
           "-byte weights layout";
  return "";
}
