//===- CudaKernels.cpp - The CUDA target's kernel payload -----------------===//

#include "lmopt/Format/CudaKernels.h"

#include "LittleEndian.h"

#include <cstring>
#include <set>

using namespace lmopt::runtime;
using namespace lmopt::runtime::le;

static constexpr char kMagic[4] = {'L', 'M', 'C', 'K'};
static constexpr uint32_t kVersion = 1;

std::vector<uint8_t>
lmopt::runtime::serializeCudaKernels(const CudaKernelPayload &payload) {
  std::vector<uint8_t> out(kMagic, kMagic + 4);
  putU32(out, kVersion);
  putU32(out, payload.smVersion);
  putU32(out, uint32_t(payload.kernels.size()));
  for (const CudaKernelInfo &k : payload.kernels) {
    putU32(out, uint32_t(k.name.size()));
    out.insert(out.end(), k.name.begin(), k.name.end());
    for (uint32_t value :
         {k.numOperands, k.numResults, k.numDynamicSizes, k.blockSize,
          k.gridTensor, k.gridAxes, k.unitsPerBlock, k.sharedBytes})
      putU32(out, value);
  }
  putU64(out, payload.image.size());
  out.insert(out.end(), payload.image.begin(), payload.image.end());
  return out;
}

namespace {
/// Reads little-endian integers from a byte range, never past its end.
struct Reader {
  const uint8_t *data;
  size_t size;
  size_t pos = 0;

  bool u32(uint32_t &value) {
    if (size - pos < 4)
      return false;
    value = 0;
    for (int i = 0; i < 4; ++i)
      value |= uint32_t(data[pos + i]) << (8 * i);
    pos += 4;
    return true;
  }
  bool u64(uint64_t &value) {
    if (size - pos < 8)
      return false;
    value = 0;
    for (int i = 0; i < 8; ++i)
      value |= uint64_t(data[pos + i]) << (8 * i);
    pos += 8;
    return true;
  }
};
} // namespace

static bool isIdentifier(const std::string &name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

Status lmopt::runtime::parseCudaKernels(const uint8_t *data, size_t size,
                                        const std::string &source,
                                        CudaKernelPayload &out) {
  auto bad = [&](const std::string &what) {
    return Status::error(StatusCode::InvalidFormat,
                         source + ": CUDA kernel payload: " + what);
  };
  if (size < 4 || std::memcmp(data, kMagic, 4) != 0)
    return bad("bad magic (expected 'LMCK')");
  Reader in{data, size, 4};
  uint32_t version = 0, count = 0;
  if (!in.u32(version) || !in.u32(out.smVersion) || !in.u32(count))
    return bad("truncated header");
  if (version != kVersion)
    return Status::error(StatusCode::VersionMismatch,
                         source + ": CUDA kernel payload version " +
                             std::to_string(version) + ", this runtime reads " +
                             std::to_string(kVersion));
  // Each kernel takes at least 40 bytes: a count past that is a lie.
  if (count > (size - in.pos) / 40)
    return bad("kernel count " + std::to_string(count) + " past the end");
  out.kernels.clear();
  std::set<std::string> names;
  for (uint32_t i = 0; i < count; ++i) {
    CudaKernelInfo k;
    uint32_t length = 0;
    if (!in.u32(length) || length > size - in.pos)
      return bad("kernel #" + std::to_string(i) + ": name past the end");
    k.name.assign(reinterpret_cast<const char *>(data + in.pos), length);
    in.pos += length;
    std::string which = "kernel #" + std::to_string(i) + " ('" + k.name + "')";
    if (!isIdentifier(k.name))
      return bad(which + ": name is not a C identifier");
    if (!names.insert(k.name).second)
      return bad(which + ": duplicate name");
    for (uint32_t *field :
         {&k.numOperands, &k.numResults, &k.numDynamicSizes, &k.blockSize,
          &k.gridTensor, &k.gridAxes, &k.unitsPerBlock, &k.sharedBytes})
      if (!in.u32(*field))
        return bad(which + ": truncated");
    if (k.blockSize == 0 || k.blockSize > 1024)
      return bad(which + ": block size " + std::to_string(k.blockSize) +
                 " outside [1, 1024]");
    if (k.unitsPerBlock == 0)
      return bad(which + ": units per block is 0");
    if (uint64_t(k.gridTensor) >= uint64_t(k.numOperands) + k.numResults)
      return bad(which + ": grid tensor " + std::to_string(k.gridTensor) +
                 " is not one of its " +
                 std::to_string(uint64_t(k.numOperands) + k.numResults) +
                 " tensors");
    out.kernels.push_back(std::move(k));
  }
  uint64_t imageSize = 0;
  if (!in.u64(imageSize))
    return bad("truncated before the image size");
  if (imageSize != size - in.pos)
    return bad("image of " + std::to_string(imageSize) + " bytes where " +
               std::to_string(size - in.pos) + " remain");
  out.image.assign(data + in.pos, data + size);
  return Status::ok();
}
