//===- CudaKernelsTest.cpp - The CUDA kernel payload's reader ------------===//
//
// The payload a CUDA bundle's kernels section holds
// (lmopt/Format/CudaKernels.h): what the serializer writes is read back, and
// every malformed payload is refused with what is wrong. No GPU involved.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/CudaKernels.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace lmopt::runtime;

namespace {

CudaKernelPayload twoKernels() {
  CudaKernelPayload payload;
  payload.smVersion = 90;
  CudaKernelInfo add;
  add.name = "fused_add_0";
  add.numOperands = 2;
  add.numResults = 1;
  add.numDynamicSizes = 3;
  add.blockSize = 128;
  add.gridTensor = 2;
  add.gridAxes = 2;
  add.unitsPerBlock = 4;
  add.sharedBytes = 0;
  CudaKernelInfo norm = add;
  norm.name = "layer_norm_1";
  norm.numOperands = 3;
  norm.numDynamicSizes = 0;
  norm.blockSize = 1024;
  norm.gridTensor = 0;
  norm.gridAxes = 1;
  norm.unitsPerBlock = 1;
  norm.sharedBytes = 64 * 1024;
  payload.kernels = {add, norm};
  payload.image = {0x7f, 'E', 'L', 'F', 1, 2, 3, 4, 5};
  return payload;
}

Status parse(const std::vector<uint8_t> &bytes, CudaKernelPayload &out) {
  return parseCudaKernels(bytes.data(), bytes.size(), "k.lmopt", out);
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  CudaKernelPayload out;
  Status st = parse(bytes, out);
  EXPECT_FALSE(st.isOk());
  return st.message();
}

void putU32(std::vector<uint8_t> &bytes, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    bytes[at + i] = uint8_t(value >> (8 * i));
}

// Byte offsets in twoKernels()'s encoding: header (16), then the first
// kernel: name length (4), name (11), eight u32 fields.
constexpr size_t kFirstName = 16 + 4;
constexpr size_t kFirstFields = kFirstName + 11;
constexpr size_t kBlockSize = kFirstFields + 3 * 4;
constexpr size_t kGridTensor = kFirstFields + 4 * 4;
constexpr size_t kUnitsPerBlock = kFirstFields + 6 * 4;

TEST(CudaKernels, RoundTrip) {
  CudaKernelPayload in = twoKernels();
  std::vector<uint8_t> bytes = serializeCudaKernels(in);
  CudaKernelPayload out;
  ASSERT_TRUE(parse(bytes, out).isOk());
  EXPECT_EQ(out.smVersion, 90u);
  ASSERT_EQ(out.kernels.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const CudaKernelInfo &a = in.kernels[i], &b = out.kernels[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.numOperands, b.numOperands);
    EXPECT_EQ(a.numResults, b.numResults);
    EXPECT_EQ(a.numDynamicSizes, b.numDynamicSizes);
    EXPECT_EQ(a.blockSize, b.blockSize);
    EXPECT_EQ(a.gridTensor, b.gridTensor);
    EXPECT_EQ(a.gridAxes, b.gridAxes);
    EXPECT_EQ(a.unitsPerBlock, b.unitsPerBlock);
    EXPECT_EQ(a.sharedBytes, b.sharedBytes);
  }
  EXPECT_EQ(out.image, in.image);
  // An empty payload (no kernels, no image) is well-formed too.
  CudaKernelPayload empty;
  ASSERT_TRUE(parse(serializeCudaKernels(empty), out).isOk());
  EXPECT_TRUE(out.kernels.empty());
  EXPECT_TRUE(out.image.empty());
}

TEST(CudaKernels, BadMagicAndVersion) {
  std::vector<uint8_t> bytes = serializeCudaKernels(twoKernels());
  bytes[0] = 'X';
  EXPECT_EQ(parseError(bytes),
            "k.lmopt: CUDA kernel payload: bad magic (expected 'LMCK')");
  EXPECT_EQ(parseError({'L', 'M'}),
            "k.lmopt: CUDA kernel payload: bad magic (expected 'LMCK')");
  bytes = serializeCudaKernels(twoKernels());
  putU32(bytes, 4, 2);
  CudaKernelPayload out;
  EXPECT_STATUS(parse(bytes, out), StatusCode::VersionMismatch,
                "k.lmopt: CUDA kernel payload version 2, this runtime reads 1");
}

TEST(CudaKernels, EveryTruncationIsRefused) {
  std::vector<uint8_t> bytes = serializeCudaKernels(twoKernels());
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + size);
    CudaKernelPayload out;
    Status st = parse(prefix, out);
    EXPECT_EQ(st.code(), StatusCode::InvalidFormat) << "size " << size;
  }
  EXPECT_EQ(parseError(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 12)),
            "k.lmopt: CUDA kernel payload: truncated header");
}

TEST(CudaKernels, CountsAndSizesPastTheEnd) {
  std::vector<uint8_t> bytes = serializeCudaKernels(twoKernels());
  putU32(bytes, 12, 1000);
  EXPECT_EQ(parseError(bytes),
            "k.lmopt: CUDA kernel payload: kernel count 1000 past the end");
  bytes = serializeCudaKernels(twoKernels());
  putU32(bytes, 16, 1u << 30);
  EXPECT_EQ(parseError(bytes),
            "k.lmopt: CUDA kernel payload: kernel #0: name past the end");
  // The image size must be exactly what remains: bytes after the image.
  bytes = serializeCudaKernels(twoKernels());
  bytes.push_back(0);
  EXPECT_EQ(parseError(bytes), "k.lmopt: CUDA kernel payload: image of 9 "
                               "bytes where 10 remain");
}

TEST(CudaKernels, BadKernelFields) {
  std::vector<uint8_t> bytes = serializeCudaKernels(twoKernels());
  putU32(bytes, kBlockSize, 0);
  EXPECT_EQ(parseError(bytes), "k.lmopt: CUDA kernel payload: kernel #0 "
                               "('fused_add_0'): block size 0 outside "
                               "[1, 1024]");
  putU32(bytes, kBlockSize, 1025);
  EXPECT_EQ(parseError(bytes), "k.lmopt: CUDA kernel payload: kernel #0 "
                               "('fused_add_0'): block size 1025 outside "
                               "[1, 1024]");
  bytes = serializeCudaKernels(twoKernels());
  putU32(bytes, kUnitsPerBlock, 0);
  EXPECT_EQ(parseError(bytes), "k.lmopt: CUDA kernel payload: kernel #0 "
                               "('fused_add_0'): units per block is 0");
  bytes = serializeCudaKernels(twoKernels());
  putU32(bytes, kGridTensor, 3);
  EXPECT_EQ(parseError(bytes), "k.lmopt: CUDA kernel payload: kernel #0 "
                               "('fused_add_0'): grid tensor 3 is not one of "
                               "its 3 tensors");
}

TEST(CudaKernels, BadAndDuplicateNames) {
  CudaKernelPayload payload = twoKernels();
  payload.kernels[1].name = payload.kernels[0].name;
  EXPECT_EQ(parseError(serializeCudaKernels(payload)),
            "k.lmopt: CUDA kernel payload: kernel #1 ('fused_add_0'): "
            "duplicate name");
  for (const char *name : {"", "0abc", "a-b", "a b"}) {
    payload = twoKernels();
    payload.kernels[0].name = name;
    EXPECT_EQ(parseError(serializeCudaKernels(payload)),
              "k.lmopt: CUDA kernel payload: kernel #0 ('" + std::string(name) +
                  "'): name is not a C identifier")
        << name;
  }
}

} // namespace
