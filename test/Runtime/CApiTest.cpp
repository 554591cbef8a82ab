//===- CApiTest.cpp - C API tests -----------------------------------------===//

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Runtime/lmopt_runtime.h"

#include "NpyExpect.h"
#include "TestUtil.h"

#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {
/// Takes ownership of a C status and returns its code and message.
std::pair<lmoptStatusCode, std::string> take(lmoptStatus st) {
  std::pair<lmoptStatusCode, std::string> r{lmoptStatusGetCode(st),
                                            lmoptStatusGetMessage(st)};
  lmoptStatusDestroy(st);
  return r;
}
using Result = std::pair<lmoptStatusCode, std::string>;
} // namespace

TEST(CApi, NullStatusIsSuccess) {
  EXPECT_EQ(lmoptStatusGetCode(nullptr), LMOPT_STATUS_OK);
  EXPECT_STREQ(lmoptStatusGetMessage(nullptr), "");
  lmoptStatusDestroy(nullptr);
  EXPECT_EQ(lmoptDTypeSize(LMOPT_DTYPE_F16), 2u);
  EXPECT_STREQ(lmoptDTypeName(LMOPT_DTYPE_BOOL), "bool");
  EXPECT_STREQ(lmoptDTypeName(0), "invalid");
  EXPECT_STREQ(lmoptDTypeName(1000), "invalid");
  EXPECT_EQ(lmoptDTypeSize(0), 0u);
}

TEST(CApi, BundleInspection) {
  TempDir dir;
  std::string path = dir.file("m.lmopt");
  BundleWriter w;
  std::vector<uint8_t> weights(1000, 7);
  std::string meta = "{\"model\": \"tiny\"}";
  ASSERT_TRUE(
      w.addSection("meta", SectionKind::Meta, meta.data(), meta.size()));
  ASSERT_TRUE(w.addSection("weights", SectionKind::Weights, weights.data(),
                           weights.size(), 4096));
  ASSERT_TRUE(w.write(path));

  lmoptBundle bundle = nullptr;
  ASSERT_EQ(lmoptBundleOpen(path.c_str(), &bundle), nullptr);
  uint32_t major = 0, minor = 9;
  ASSERT_EQ(lmoptBundleFormatVersion(bundle, &major, &minor), nullptr);
  EXPECT_EQ(major, 1u);
  EXPECT_EQ(minor, 0u);
  size_t count = 0;
  ASSERT_EQ(lmoptBundleSectionCount(bundle, &count), nullptr);
  ASSERT_EQ(count, 2u);
  lmoptSectionInfo info;
  ASSERT_EQ(lmoptBundleSectionInfo(bundle, 1, &info), nullptr);
  EXPECT_STREQ(info.name, "weights");
  EXPECT_EQ(info.kind, uint32_t(LMOPT_SECTION_WEIGHTS));
  EXPECT_EQ(info.size, 1000u);
  EXPECT_EQ(info.alignment, 4096u);
  EXPECT_EQ(info.offset % 4096, 0u);
  const void *data = nullptr;
  uint64_t size = 0;
  ASSERT_EQ(lmoptBundleSectionData(bundle, 0, &data, &size), nullptr);
  EXPECT_EQ(std::string(static_cast<const char *>(data), size), meta);

  EXPECT_EQ(take(lmoptBundleSectionInfo(bundle, 2, &info)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptBundleSectionInfo: section index 2 is out of range; "
                   "the bundle has 2 sections"));
  EXPECT_EQ(take(lmoptBundleSectionData(bundle, 5, &data, &size)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptBundleSectionData: section index 5 is out of range; "
                   "the bundle has 2 sections"));
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(take(lmoptBundleSectionCount(bundle, nullptr)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptBundleSectionCount: a pointer argument is null"));
  EXPECT_EQ(lmoptBundleClose(bundle), nullptr);
  EXPECT_EQ(lmoptBundleClose(nullptr), nullptr);
}

TEST(CApi, BundleOpenErrors) {
  TempDir dir;
  std::string path = dir.file("bad.lmopt");
  writeBytes(path, std::vector<uint8_t>(100, 'x'));
  lmoptBundle bundle = reinterpret_cast<lmoptBundle>(&dir);
  EXPECT_EQ(take(lmoptBundleOpen(path.c_str(), &bundle)),
            Result(LMOPT_STATUS_INVALID_FORMAT,
                   "bundle '" + path +
                       "' is not an lmopt bundle: it starts with 'xxxxxxxx', "
                       "not 'LMOPTBND'"));
  EXPECT_EQ(bundle, nullptr);
  EXPECT_EQ(
      take(lmoptBundleOpen(nullptr, &bundle)),
      Result(LMOPT_STATUS_INVALID_ARGUMENT, "lmoptBundleOpen: 'path' is null"));
  EXPECT_EQ(take(lmoptBundleOpen(path.c_str(), nullptr)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptBundleOpen: 'outBundle' is null"));
}

TEST(CApi, TensorNpyRoundTrip) {
  TempDir dir;
  lmoptTensor *t = nullptr;
  ASSERT_EQ(lmoptTensorReadNpy(inputPath("i16.npy").c_str(), &t), nullptr);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype, LMOPT_DTYPE_I16);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % 64, 0u);
  Tensor cpp;
  cpp.dtype = DType(t->dtype);
  cpp.shape.assign(t->dims, t->dims + t->rank);
  const auto *bytes = static_cast<const uint8_t *>(t->data);
  cpp.data.assign(bytes, bytes + t->byteSize);
  expectTensorMatches(cpp, expectedJson()["npy"]["i16.npy"]);

  std::string out = dir.file("out.npy");
  ASSERT_EQ(lmoptTensorWriteNpy(out.c_str(), t), nullptr);
  lmoptTensorDestroy(t);
  ASSERT_EQ(lmoptTensorReadNpy(out.c_str(), &t), nullptr);
  cpp.data.assign(static_cast<const uint8_t *>(t->data),
                  static_cast<const uint8_t *>(t->data) + t->byteSize);
  expectTensorMatches(cpp, expectedJson()["npy"]["i16.npy"]);
  lmoptTensorDestroy(t);
  lmoptTensorDestroy(nullptr);

  // A scalar.
  ASSERT_EQ(lmoptTensorReadNpy(inputPath("scalar_f64.npy").c_str(), &t),
            nullptr);
  EXPECT_EQ(t->rank, 0);
  EXPECT_EQ(t->byteSize, 8u);
  lmoptTensorDestroy(t);
}

TEST(CApi, TensorErrors) {
  TempDir dir;
  std::string out = dir.file("out.npy");
  lmoptTensor *t = reinterpret_cast<lmoptTensor *>(&dir);
  std::string f = inputPath("bigendian_f32.npy");
  Result r = take(lmoptTensorReadNpy(f.c_str(), &t));
  EXPECT_EQ(r.first, LMOPT_STATUS_UNSUPPORTED);
  EXPECT_EQ(
      r.second.rfind("'" + f + "' has dtype '>f4', which is big-endian", 0), 0u)
      << r.second;
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(take(lmoptTensorReadNpy(nullptr, &t)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorReadNpy: 'path' is null"));

  int64_t dims[2] = {2, 3};
  float data[6] = {};
  lmoptTensor in{LMOPT_DTYPE_F32, 2, dims, data, 20};
  EXPECT_EQ(take(lmoptTensorWriteNpy(out.c_str(), &in)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorWriteNpy: a tensor of dtype 'f32' and rank 2 "
                   "needs 24 bytes; 'byteSize' is 20"));
  in.byteSize = 24;
  in.dtype = 42;
  EXPECT_EQ(take(lmoptTensorWriteNpy(out.c_str(), &in)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorWriteNpy: invalid dtype 42"));
  in.dtype = LMOPT_DTYPE_F32;
  in.rank = -1;
  EXPECT_EQ(take(lmoptTensorWriteNpy(out.c_str(), &in)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorWriteNpy: rank -1 is outside [0, 64]"));
  in.rank = 2;
  dims[1] = -3;
  EXPECT_EQ(take(lmoptTensorWriteNpy(out.c_str(), &in)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorWriteNpy: negative dim -3 at index 1"));
  dims[0] = int64_t(1) << 40;
  dims[1] = int64_t(1) << 40;
  EXPECT_EQ(take(lmoptTensorWriteNpy(out.c_str(), &in)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorWriteNpy: the byte size of the shape "
                   "overflows 64 bits"));
  in.dims = nullptr;
  EXPECT_EQ(take(lmoptTensorWriteNpy(out.c_str(), &in)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorWriteNpy: 'dims' is null for rank 2"));
  in.dims = dims;
  in.data = nullptr;
  EXPECT_EQ(take(lmoptTensorWriteNpy(out.c_str(), &in)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorWriteNpy: 'data' is null for 24 bytes"));
  EXPECT_EQ(take(lmoptTensorWriteNpy(nullptr, &in)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptTensorWriteNpy: a pointer argument is null"));
  EXPECT_TRUE(listDir(dir.path()).empty());
}
