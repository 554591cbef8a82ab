//===- WeightsBuilder.cpp - One weights buffer for a bundle ---------------===//

#include "lmopt/Target/Common/WeightsBuilder.h"

#include "lmopt/Support/ResourceBlob.h"

#include "llvm/Support/xxhash.h"

#include <cstring>

using namespace mlir;
using namespace mlir::lmopt;

static constexpr uint64_t kWeightAlignment = 64;

FailureOr<uint64_t> WeightsBuilder::add(ElementsAttr attr, Location loc) {
  auto known = offsetByAttr.find(attr);
  if (known != offsetByAttr.end())
    return known->second;
  std::vector<uint8_t> storage;
  FailureOr<ArrayRef<uint8_t>> data = getConstantBytes(attr, loc, storage);
  if (failed(data))
    return failure();
  uint64_t hash = llvm::xxh3_64bits(*data);
  auto [begin, end] = offsetByHash.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    auto [offset, size] = it->second;
    if (size == data->size() &&
        std::memcmp(bytes.data() + offset, data->data(), size) == 0) {
      offsetByAttr[attr] = offset;
      return offset;
    }
  }
  uint64_t offset = (bytes.size() + kWeightAlignment - 1) / kWeightAlignment *
                    kWeightAlignment;
  bytes.resize(offset);
  bytes.insert(bytes.end(), data->begin(), data->end());
  offsetByHash.emplace(hash, std::make_pair(offset, uint64_t(data->size())));
  offsetByAttr[attr] = offset;
  return offset;
}

std::vector<uint8_t> WeightsBuilder::takeBytes() {
  std::vector<uint8_t> taken = std::move(bytes);
  *this = WeightsBuilder();
  return taken;
}
