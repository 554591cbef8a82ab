//===- NpzTest.cpp - .npz reader and writer tests -------------------------===//
//
// Archives come from np.savez and np.savez_compressed; broken ones are made by
// editing their bytes at the offsets the zip format defines (fixtures have
// no archive comment, so the end record is the last 22 bytes).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Npy.h"

#include "NpyExpect.h"
#include "TestUtil.h"

#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

uint32_t get32(const std::vector<uint8_t> &b, size_t off) {
  return uint32_t(b[off]) | uint32_t(b[off + 1]) << 8 |
         uint32_t(b[off + 2]) << 16 | uint32_t(b[off + 3]) << 24;
}
void set32(std::vector<uint8_t> &b, size_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    b[off + size_t(i)] = uint8_t(v >> (8 * i));
}

/// Offset of the first central directory entry.
size_t firstCentralEntry(const std::vector<uint8_t> &b) {
  return get32(b, b.size() - 22 + 16);
}

class NpzTest : public ::testing::Test {
protected:
  Status readEdited(const std::string &fixture,
                    void (*edit)(std::vector<uint8_t> &)) {
    std::vector<uint8_t> b = readBytes(inputPath(fixture));
    edit(b);
    writeBytes(path(), b);
    std::vector<NamedTensor> out;
    return readNpz(path(), out);
  }
  std::string path() const { return dir.file("t.npz"); }
  std::string prefix() const { return "'" + path() + "' "; }
  TempDir dir;
};

} // namespace

TEST(NpzFixtures, StoredAndCompressedMatchNumpy) {
  for (const char *name : {"stored.npz", "compressed.npz"}) {
    SCOPED_TRACE(name);
    const Json &want = expectedJson()["npz"][name];
    std::vector<NamedTensor> tensors;
    Status st = readNpz(inputPath(name), tensors);
    ASSERT_TRUE(st) << st.toString();
    ASSERT_EQ(tensors.size(), want.array.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      EXPECT_EQ(tensors[i].name, want.array[i]["name"].string);
      expectTensorMatches(tensors[i].tensor, want.array[i]);
    }
  }
}

TEST_F(NpzTest, RoundTrip) {
  std::vector<NamedTensor> in(3);
  in[0].name = "input_ids";
  in[0].tensor.dtype = DType::I64;
  in[0].tensor.shape = {2, 3};
  in[0].tensor.data.resize(48);
  for (size_t i = 0; i < 48; ++i)
    in[0].tensor.data[i] = uint8_t(i);
  in[1].name = "scale";
  in[1].tensor.dtype = DType::F16;
  in[1].tensor.data = {0x00, 0x3c};
  in[2].name = "empty";
  in[2].tensor.dtype = DType::Bool;
  in[2].tensor.shape = {0};
  ASSERT_TRUE(writeNpz(path(), in));
  std::vector<NamedTensor> out;
  Status st = readNpz(path(), out);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].name, in[i].name);
    EXPECT_EQ(out[i].tensor.dtype, in[i].tensor.dtype);
    EXPECT_EQ(out[i].tensor.shape, in[i].tensor.shape);
    EXPECT_EQ(out[i].tensor.data, in[i].tensor.data);
  }
  ASSERT_TRUE(writeNpz(path(), {}));
  ASSERT_TRUE(readNpz(path(), out));
  EXPECT_TRUE(out.empty());
}

TEST_F(NpzTest, WriterErrors) {
  std::vector<NamedTensor> in(2);
  in[0].name = "a";
  in[0].tensor.data.resize(4);
  in[1] = in[0];
  std::string file = dir.file("w.npz");
  EXPECT_STATUS(writeNpz(file, in), StatusCode::InvalidArgument,
                "cannot write '" + file + "': two tensors named 'a'");
  in[1].name = "";
  EXPECT_STATUS(writeNpz(file, in), StatusCode::InvalidArgument,
                "cannot write '" + file + "': tensor 1 has an invalid name ''");
  in[1].name = "b";
  in[1].tensor.shape = {3};
  EXPECT_STATUS(writeNpz(file, in), StatusCode::InvalidArgument,
                "tensor 'b' has shape (3,) of dtype 'f32' (12 bytes) but 4 "
                "bytes of data");
  EXPECT_TRUE(listDir(dir.path()).empty()) << "a failed write left a file";
}

TEST_F(NpzTest, RefusedArchives) {
  std::vector<NamedTensor> out;
  std::string f = inputPath("bad_crc.npz");
  Status st = readNpz(f, out);
  EXPECT_EQ(st.code(), StatusCode::ChecksumMismatch);
  EXPECT_EQ(st.message().rfind("'" + f +
                                   "' has corrupt member 'ids.npy': "
                                   "CRC-32 0x",
                               0),
            0u)
      << st.message();
  f = inputPath("truncated.npz");
  EXPECT_STATUS(readNpz(f, out), StatusCode::InvalidFormat,
                "'" + f +
                    "' is truncated or corrupt: no zip end-of-central-"
                    "directory record");
  f = inputPath("not_npy_member.npz");
  EXPECT_STATUS(readNpz(f, out), StatusCode::InvalidFormat,
                "'" + f +
                    "' has member 'readme.txt', which is not a named .npy "
                    "file");
  f = inputPath("f32.npy");
  EXPECT_STATUS(readNpz(f, out), StatusCode::InvalidFormat,
                "'" + f +
                    "' is not a .npz (zip) archive: it does not start with a "
                    "zip local header");
  writeBytes(path(), {});
  EXPECT_STATUS(readNpz(path(), out), StatusCode::InvalidFormat,
                prefix() + "is empty (0 bytes), not a .npz archive");
  EXPECT_TRUE(out.empty());
}

TEST_F(NpzTest, CentralDirectoryErrors) {
  EXPECT_STATUS(readEdited("stored.npz",
                           [](auto &b) {
                             b[firstCentralEntry(b) + 10] = 12; // bzip2
                           }),
                StatusCode::Unsupported,
                prefix() + "has member 'ids.npy' compressed with zip method "
                           "12; lmopt reads stored (0) and deflate (8)");
  EXPECT_STATUS(readEdited("stored.npz",
                           [](auto &b) { b[firstCentralEntry(b) + 8] |= 1; }),
                StatusCode::Unsupported,
                prefix() + "has encrypted member 'ids.npy'");
  EXPECT_STATUS(
      readEdited("stored.npz",
                 [](auto &b) { set32(b, firstCentralEntry(b) + 42, 5); }),
      StatusCode::InvalidFormat,
      prefix() + "has member 'ids.npy' whose local header at offset 5 is "
                 "missing");
  EXPECT_STATUS(
      readEdited("stored.npz", [](auto &b) { b[30] = 'x'; }), // local name
      StatusCode::InvalidFormat,
      prefix() + "has member 'ids.npy' whose local header names a "
                 "different file");
  EXPECT_STATUS(
      readEdited("stored.npz",
                 [](auto &b) { set32(b, firstCentralEntry(b) + 20, 100000); }),
      StatusCode::InvalidFormat,
      prefix() + "has member 'ids.npy' whose 100000 bytes of data at offset "
                 "57 run past the central directory at 748");
  EXPECT_STATUS(
      readEdited("stored.npz",
                 [](auto &b) { set32(b, firstCentralEntry(b) + 24, 225); }),
      StatusCode::InvalidFormat,
      prefix() + "has stored member 'ids.npy' with size 225 but 224 bytes "
                 "stored");
  EXPECT_STATUS(readEdited("stored.npz",
                           [](auto &b) { set32(b, b.size() - 22 + 16, 9999); }),
                StatusCode::InvalidFormat,
                prefix() + "has its central directory at [9999, +158), past "
                           "the end record at 906");
  EXPECT_STATUS(
      readEdited("stored.npz", [](auto &b) { b[b.size() - 22 + 10] = 200; }),
      StatusCode::InvalidFormat,
      prefix() + "declares 200 members in a central directory of "
                 "158 bytes");
}

TEST_F(NpzTest, DeflateErrors) {
  // Member sizes in the directory that disagree with the deflate stream.
  EXPECT_STATUS(readEdited("compressed.npz",
                           [](auto &b) {
                             size_t e = firstCentralEntry(b);
                             set32(b, e + 24, get32(b, e + 24) + 1);
                           }),
                StatusCode::InvalidFormat,
                prefix() + "has compressed member 'ids.npy' that inflates to "
                           "224 bytes, not the 225 declared");
  EXPECT_STATUS(readEdited("compressed.npz",
                           [](auto &b) {
                             size_t e = firstCentralEntry(b);
                             set32(b, e + 24, get32(b, e + 24) - 1);
                           }),
                StatusCode::InvalidFormat,
                prefix() + "has corrupt compressed member 'ids.npy': the "
                           "deflate stream ends early or holds more than its "
                           "declared 223 bytes");
  EXPECT_STATUS(readEdited("compressed.npz",
                           [](auto &b) {
                             size_t e = firstCentralEntry(b);
                             set32(b, e + 24, 0x7fffffff);
                           }),
                StatusCode::InvalidFormat,
                prefix() + "has member 'ids.npy' claiming 2147483647 bytes "
                           "from 101 compressed bytes, beyond deflate's ratio");
  // 0xff starts a final block of the reserved type 3.
  EXPECT_STATUS(readEdited("compressed.npz", [](auto &b) { b[57] = 0xff; }),
                StatusCode::InvalidFormat,
                prefix() + "has corrupt compressed member 'ids.npy': zlib "
                           "error -3 (invalid block type)");
}

TEST_F(NpzTest, EveryTruncationFailsCleanly) {
  for (const char *name : {"stored.npz", "compressed.npz"}) {
    std::vector<uint8_t> good = readBytes(inputPath(name));
    std::vector<NamedTensor> out;
    for (size_t cut = 0; cut < good.size(); ++cut) {
      writeBytes(path(), {good.begin(), good.begin() + long(cut)});
      EXPECT_FALSE(readNpz(path(), out)) << name << " cut at " << cut;
    }
  }
}

TEST_F(NpzTest, EveryByteFlipFailsOrReadsTheSameValues) {
  // Flips in timestamps or attributes are harmless; every other flip must be
  // refused: a corrupt archive never yields different values.
  for (const char *name : {"stored.npz", "compressed.npz"}) {
    std::vector<NamedTensor> want;
    ASSERT_TRUE(readNpz(inputPath(name), want));
    std::vector<uint8_t> good = readBytes(inputPath(name));
    // The first member's stored or compressed bytes.
    size_t dataBegin = 30 + size_t(good[26] | good[27] << 8) +
                       size_t(good[28] | good[29] << 8);
    size_t dataEnd = dataBegin + get32(good, firstCentralEntry(good) + 20);
    for (size_t i = 0; i < good.size(); ++i) {
      std::vector<uint8_t> b = good;
      b[i] ^= 0x5a;
      writeBytes(path(), b);
      std::vector<NamedTensor> got;
      if (!readNpz(path(), got))
        continue;
      EXPECT_FALSE(i >= dataBegin && i < dataEnd)
          << name << ": a flip of data byte " << i << " went unseen";
      ASSERT_EQ(got.size(), want.size()) << name << " byte " << i;
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_EQ(got[k].name, want[k].name) << name << " byte " << i;
        EXPECT_EQ(got[k].tensor.shape, want[k].tensor.shape);
        EXPECT_EQ(got[k].tensor.data, want[k].tensor.data)
            << name << " byte " << i;
      }
    }
  }
}
