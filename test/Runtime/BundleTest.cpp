//===- BundleTest.cpp - Bundle writer and reader tests --------------------===//
//
// Corrupted bundles are made by editing the bytes of a good one at the
// offsets docs/bundle-format.md gives, then (where the test targets a check
// behind the checksums) resealing the header and table checksums.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/Checksum.h"

#include "TestUtil.h"

#include <algorithm>
#include <cstring>
#include <thread>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

uint64_t get64(const std::vector<uint8_t> &b, size_t off) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | b[off + size_t(i)];
  return v;
}
void set64(std::vector<uint8_t> &b, size_t off, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    b[off + size_t(i)] = uint8_t(v >> (8 * i));
}
void set32(std::vector<uint8_t> &b, size_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    b[off + size_t(i)] = uint8_t(v >> (8 * i));
}
void set16(std::vector<uint8_t> &b, size_t off, uint16_t v) {
  b[off] = uint8_t(v);
  b[off + 1] = uint8_t(v >> 8);
}

// Layout from docs/bundle-format.md.
constexpr size_t kTableOffset = 64;
constexpr size_t kEntry = 80;
size_t entryField(size_t index, size_t field) {
  return kTableOffset + index * kEntry + field;
}

/// Recomputes the table checksum and then the header checksum.
void reseal(std::vector<uint8_t> &b) {
  uint32_t count = uint32_t(b[16] | b[17] << 8 | b[18] << 16 | b[19] << 24);
  size_t tableBytes = std::min<size_t>(count * kEntry, b.size() - kTableOffset);
  set64(b, 40, xxh64(b.data() + kTableOffset, tableBytes));
  std::vector<uint8_t> header(b.begin(), b.begin() + 64);
  std::memset(header.data() + 56, 0, 8);
  set64(b, 56, xxh64(header.data(), header.size()));
}

class BundleTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (size_t i = 0; i < plan.size(); ++i)
      plan[i] = uint8_t(i * 7 + 1);
    for (size_t i = 0; i < kernels.size(); ++i)
      kernels[i] = uint8_t(255 - i % 251);
  }

  /// Writes a bundle with sections plan (100 B), meta (JSON), kernels
  /// (300 B, 4096-aligned unless told) and an empty "notes" section.
  std::string writeGood(const std::string &name = "good.lmopt",
                        uint64_t kernelAlignment = 4096) {
    BundleWriter w;
    EXPECT_TRUE(
        w.addSection("plan", SectionKind::Plan, plan.data(), plan.size()));
    EXPECT_TRUE(w.addSection("meta", SectionKind::Meta,
                             std::vector<uint8_t>(meta.begin(), meta.end())));
    EXPECT_TRUE(w.addSection("kernels", SectionKind::Kernels, kernels.data(),
                             kernels.size(), kernelAlignment));
    EXPECT_TRUE(w.addSection("notes", SectionKind::Unknown, nullptr, 0));
    std::string path = dir.file(name);
    Status st = w.write(path);
    EXPECT_TRUE(st) << st.toString();
    return path;
  }

  Status openBytes(const std::vector<uint8_t> &bytes,
                   std::unique_ptr<BundleReader> &reader,
                   BundleReader::Options options = {}) {
    writeBytes(path(), bytes);
    return BundleReader::open(path(), options, reader);
  }
  std::string path() const { return dir.file("edited.lmopt"); }
  std::string prefix() const { return "bundle '" + path() + "' "; }

  TempDir dir;
  std::vector<uint8_t> plan = std::vector<uint8_t>(100);
  std::vector<uint8_t> kernels = std::vector<uint8_t>(300);
  std::string meta = R"({"model": "tiny", "inputs": [], "outputs": []})";
};

} // namespace

TEST(Checksum, MatchesReferenceXxh64) {
  const Json &vectors = expectedJson()["xxh64"];
  ASSERT_GE(vectors.array.size(), 10u);
  for (const Json &v : vectors.array) {
    std::string hex = v["data"].string;
    std::vector<uint8_t> data;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
      data.push_back(uint8_t(std::stoul(hex.substr(i, 2), nullptr, 16)));
    uint64_t seed = std::stoull(v["seed"].string, nullptr, 16);
    uint64_t want = std::stoull(v["hash"].string, nullptr, 16);
    EXPECT_EQ(xxh64(data.data(), data.size(), seed), want)
        << "input of " << data.size() << " bytes, seed " << seed;
  }
}

TEST_F(BundleTest, RoundTrip) {
  std::string file = writeGood();
  std::unique_ptr<BundleReader> r;
  Status st = BundleReader::open(file, r);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_EQ(r->versionMajor(), 1);
  EXPECT_EQ(r->versionMinor(), 0);
  ASSERT_EQ(r->sectionCount(), 4u);
  EXPECT_EQ(r->fileSize(), readBytes(file).size());

  const char *names[] = {"plan", "meta", "kernels", "notes"};
  SectionKind kinds[] = {SectionKind::Plan, SectionKind::Meta,
                         SectionKind::Kernels, SectionKind::Unknown};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r->sectionInfo(i).name, names[i]);
    EXPECT_EQ(r->sectionInfo(i).kind, kinds[i]);
    EXPECT_EQ(r->sectionInfo(i).offset % r->sectionInfo(i).alignment, 0u);
    EXPECT_EQ(r->findSection(names[i]), long(i));
  }
  EXPECT_EQ(r->sectionInfo(2).alignment, 4096u);
  EXPECT_EQ(r->findSection("weights"), -1);

  SectionView v;
  ASSERT_TRUE(r->section("plan", v));
  EXPECT_EQ(std::vector<uint8_t>(v.data, v.data + v.size), plan);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % 64, 0u);
  ASSERT_TRUE(r->section("meta", v));
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(v.data), v.size), meta);
  ASSERT_TRUE(r->section(2, v));
  EXPECT_EQ(std::vector<uint8_t>(v.data, v.data + v.size), kernels);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % 4096, 0u);
  EXPECT_EQ(v.info->checksum, xxh64(kernels.data(), kernels.size()));
  ASSERT_TRUE(r->section("notes", v));
  EXPECT_EQ(v.size, 0u);
  EXPECT_STREQ(sectionKindName(SectionKind::Weights), "weights");
}

TEST_F(BundleTest, EmptyBundle) {
  BundleWriter w;
  ASSERT_TRUE(w.write(dir.file("empty.lmopt")));
  std::unique_ptr<BundleReader> r;
  ASSERT_TRUE(BundleReader::open(dir.file("empty.lmopt"), r));
  EXPECT_EQ(r->sectionCount(), 0u);
  EXPECT_EQ(r->fileSize(), 64u);
}

TEST_F(BundleTest, LookupErrors) {
  std::unique_ptr<BundleReader> r;
  ASSERT_TRUE(BundleReader::open(writeGood(), r));
  SectionView v;
  EXPECT_STATUS(r->section("weights", v), StatusCode::NotFound,
                "bundle '" + dir.file("good.lmopt") +
                    "' has no section 'weights'");
  EXPECT_STATUS(r->section(9, v), StatusCode::InvalidArgument,
                "section index 9 is out of range; bundle '" +
                    dir.file("good.lmopt") + "' has 4 sections");
  EXPECT_EQ(v.data, nullptr);
}

TEST_F(BundleTest, WriterRejectsBadSections) {
  BundleWriter w;
  uint8_t byte = 0;
  EXPECT_STATUS(w.addSection("", SectionKind::Plan, &byte, 1),
                StatusCode::InvalidArgument, "empty section name");
  EXPECT_STATUS(w.addSection(std::string(32, 'x'), SectionKind::Plan, &byte, 1),
                StatusCode::InvalidArgument,
                "section name '" + std::string(32, 'x') +
                    "' has 32 characters; at most 31 are allowed");
  EXPECT_STATUS(w.addSection("a b", SectionKind::Plan, &byte, 1),
                StatusCode::InvalidArgument,
                "section name 'a b' has a character other than printable "
                "ASCII without spaces or quotes");
  EXPECT_STATUS(w.addSection("w", SectionKind::Weights, &byte, 1, 32),
                StatusCode::InvalidArgument,
                "section 'w' asks for alignment 32; it must be a power of "
                "two in [64, 65536]");
  EXPECT_STATUS(w.addSection("w", SectionKind::Weights, &byte, 1, 96),
                StatusCode::InvalidArgument,
                "section 'w' asks for alignment 96; it must be a power of "
                "two in [64, 65536]");
  EXPECT_STATUS(w.addSection("w", SectionKind::Weights, &byte, 1, 1 << 17),
                StatusCode::InvalidArgument,
                "section 'w' asks for alignment 131072; it must be a power "
                "of two in [64, 65536]");
  EXPECT_STATUS(w.addSection("w", SectionKind::Weights, nullptr, 5),
                StatusCode::InvalidArgument,
                "section 'w' has 5 bytes but no data");
  ASSERT_TRUE(w.addSection("w", SectionKind::Weights, &byte, 1));
  EXPECT_STATUS(w.addSection("w", SectionKind::Plan, &byte, 1),
                StatusCode::InvalidArgument, "duplicate section name 'w'");
  EXPECT_EQ(w.sectionCount(), 1u);
}

TEST_F(BundleTest, WriteIsAtomic) {
  std::string file = writeGood();
  std::vector<uint8_t> before = readBytes(file);

  // A folder that does not exist: nothing is created.
  BundleWriter w;
  ASSERT_TRUE(w.addSection("plan", SectionKind::Plan, plan.data(), 10));
  std::string missing = dir.file("no-such-dir/out.lmopt");
  EXPECT_STATUS(w.write(missing), StatusCode::IoError,
                "cannot create a temporary file for '" + missing +
                    "': No such file or directory");

  // A folder is refused before anything is written: it stays, and no
  // temporary is left.
  std::string folder = dir.file("taken");
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  EXPECT_STATUS(w.write(folder), StatusCode::IoError,
                "cannot write '" + folder + "': it is a folder");
  EXPECT_EQ(listDir(dir.path()),
            (std::vector<std::string>{"good.lmopt", "taken"}));

  // A successful write replaces the old file whole.
  ASSERT_TRUE(w.write(file));
  EXPECT_NE(readBytes(file), before);
  std::unique_ptr<BundleReader> r;
  ASSERT_TRUE(BundleReader::open(file, r));
  EXPECT_EQ(r->sectionCount(), 1u);
  EXPECT_EQ(listDir(dir.path()),
            (std::vector<std::string>{"good.lmopt", "taken"}));
}

TEST_F(BundleTest, OpenErrorsFromTheFileSystem) {
  std::unique_ptr<BundleReader> r;
  std::string missing = dir.file("missing.lmopt");
  EXPECT_STATUS(BundleReader::open(missing, r), StatusCode::IoError,
                "cannot open '" + missing + "': No such file or directory");
  EXPECT_STATUS(BundleReader::open(dir.path(), r), StatusCode::IoError,
                "cannot read '" + dir.path() + "': not a regular file");
  EXPECT_EQ(r, nullptr);
}

TEST_F(BundleTest, EmptyFile) {
  std::unique_ptr<BundleReader> r;
  EXPECT_STATUS(openBytes({}, r), StatusCode::InvalidFormat,
                prefix() + "is empty (0 bytes)");
  EXPECT_EQ(r, nullptr);
}

TEST_F(BundleTest, BadMagic) {
  std::vector<uint8_t> b = readBytes(writeGood());
  std::memcpy(b.data(), "NOTABNDL", 8);
  std::unique_ptr<BundleReader> r;
  EXPECT_STATUS(openBytes(b, r), StatusCode::InvalidFormat,
                prefix() + "is not an lmopt bundle: it starts with "
                           "'NOTABNDL', not 'LMOPTBND'");
  EXPECT_STATUS(openBytes({'P', 'K', 3, 4}, r), StatusCode::InvalidFormat,
                prefix() + "is not an lmopt bundle: it starts with "
                           "'PK\\x03\\x04', not 'LMOPTBND'");
}

TEST_F(BundleTest, VersionChecks) {
  std::vector<uint8_t> good = readBytes(writeGood());
  std::unique_ptr<BundleReader> r;
  std::vector<uint8_t> b = good;
  set16(b, 8, 2);
  set16(b, 10, 3);
  EXPECT_STATUS(openBytes(b, r), StatusCode::VersionMismatch,
                prefix() + "has format version 2.3, newer than this "
                           "runtime's 1.0; use a runtime that reads version "
                           "2 or recompile the model");
  b = good;
  set16(b, 8, 0);
  reseal(b);
  EXPECT_STATUS(openBytes(b, r), StatusCode::VersionMismatch,
                prefix() + "has format version 0.0, which no lmopt release "
                           "wrote; this runtime reads version 1.0");
  // A newer minor version only adds: this runtime reads it.
  b = good;
  set16(b, 10, 7);
  reseal(b);
  ASSERT_TRUE(openBytes(b, r));
  EXPECT_EQ(r->versionMinor(), 7);
}

TEST_F(BundleTest, TruncatedInEachRegion) {
  std::vector<uint8_t> good = readBytes(writeGood());
  std::unique_ptr<BundleReader> r;
  size_t total = good.size();
  EXPECT_STATUS(openBytes({good.begin(), good.begin() + 5}, r),
                StatusCode::InvalidFormat,
                prefix() + "is truncated: 5 bytes, shorter than the 64-byte "
                           "header");
  EXPECT_STATUS(openBytes({good.begin(), good.begin() + 40}, r),
                StatusCode::InvalidFormat,
                prefix() + "is truncated: 40 bytes, shorter than the 64-byte "
                           "header");
  for (size_t cut : {size_t(64 + 100), size_t(64 + 4 * 80 + 10), total - 1}) {
    EXPECT_STATUS(openBytes({good.begin(), good.begin() + long(cut)}, r),
                  StatusCode::InvalidFormat,
                  prefix() + "is truncated: the header says " +
                      std::to_string(total) + " bytes, the file has " +
                      std::to_string(cut));
  }
  // Every possible length fails cleanly (run under the sanitizers too).
  std::vector<uint8_t> small = readBytes(writeGood("small.lmopt", 64));
  for (size_t cut = 0; cut < small.size(); ++cut)
    EXPECT_FALSE(openBytes({small.begin(), small.begin() + long(cut)}, r))
        << cut;
  std::vector<uint8_t> longer = good;
  longer.insert(longer.end(), 3, 0);
  EXPECT_STATUS(openBytes(longer, r), StatusCode::InvalidFormat,
                prefix() + "has 3 bytes after the " + std::to_string(total) +
                    " that the header declares");
}

TEST_F(BundleTest, HeaderAndTableChecksums) {
  std::vector<uint8_t> good = readBytes(writeGood());
  std::unique_ptr<BundleReader> r;
  std::vector<uint8_t> b = good;
  b[48] ^= 1; // reserved header field
  std::string want = prefix() + "has a corrupt header: checksum ";
  Status st = openBytes(b, r);
  EXPECT_EQ(st.code(), StatusCode::ChecksumMismatch);
  EXPECT_EQ(st.message().rfind(want, 0), 0u) << st.message();
  EXPECT_NE(st.message().find(", header says 0x"), std::string::npos);

  b = good;
  b[entryField(0, 0)] = 'q'; // the first section's name
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%016llx",
                (unsigned long long)get64(good, 40));
  st = openBytes(b, r);
  EXPECT_EQ(st.code(), StatusCode::ChecksumMismatch);
  EXPECT_EQ(st.message().rfind(prefix() + "has a corrupt section table: "
                                          "checksum 0x",
                               0),
            0u)
      << st.message();
  EXPECT_NE(st.message().find(std::string(", header says ") + buf),
            std::string::npos)
      << st.message();
}

TEST_F(BundleTest, EveryByteIsCovered) {
  std::vector<uint8_t> good = readBytes(writeGood("small.lmopt", 64));
  std::unique_ptr<BundleReader> r;
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> b = good;
    b[i] ^= 0x20;
    EXPECT_FALSE(openBytes(b, r)) << "flipping byte " << i << " went unseen";
  }
}

TEST_F(BundleTest, HeaderFieldsOutOfRange) {
  std::vector<uint8_t> good = readBytes(writeGood());
  std::unique_ptr<BundleReader> r;
  std::vector<uint8_t> b = good;
  set32(b, 12, 60);
  reseal(b);
  EXPECT_STATUS(openBytes(b, r), StatusCode::InvalidFormat,
                prefix() + "declares a header size of 60 bytes; it must be a "
                           "multiple of 8 in [64, 4096]");
  b = good;
  set32(b, 16, 70000);
  reseal(b);
  EXPECT_STATUS(openBytes(b, r), StatusCode::InvalidFormat,
                prefix() + "declares 70000 sections; at most 65536 are "
                           "allowed");
  b = good;
  set32(b, 20, 72);
  reseal(b);
  EXPECT_STATUS(openBytes(b, r), StatusCode::InvalidFormat,
                prefix() + "declares a section entry size of 72 bytes; it "
                           "must be a multiple of 8 in [80, 4096]");
  b = good;
  set32(b, 16, 1000);
  reseal(b);
  EXPECT_STATUS(openBytes(b, r), StatusCode::InvalidFormat,
                prefix() +
                    "has its section table at [64, 80064), outside "
                    "the bytes after the header [64, " +
                    std::to_string(good.size()) + ")");
}

TEST_F(BundleTest, SectionEntryChecks) {
  std::vector<uint8_t> good = readBytes(writeGood());
  uint64_t planOffset = get64(good, entryField(0, 40));
  uint64_t metaOffset = get64(good, entryField(1, 40));
  uint64_t size = good.size();
  std::unique_ptr<BundleReader> r;
  auto edited = [&](auto edit) {
    std::vector<uint8_t> b = good;
    edit(b);
    reseal(b);
    return openBytes(b, r);
  };

  EXPECT_STATUS(
      edited([&](auto &b) { set64(b, entryField(1, 48), size); }),
      StatusCode::InvalidFormat,
      prefix() + "has section 'meta' at [" + std::to_string(metaOffset) + ", " +
          std::to_string(metaOffset + size) +
          "), outside the data area [384, " + std::to_string(size) + ")");
  EXPECT_STATUS(
      edited([&](auto &b) { set64(b, entryField(1, 48), UINT64_MAX); }),
      StatusCode::InvalidFormat,
      prefix() + "has section 'meta' at offset " + std::to_string(metaOffset) +
          " with size 18446744073709551615, outside the data area [384, " +
          std::to_string(size) + ")");
  EXPECT_STATUS(edited([&](auto &b) { set64(b, entryField(0, 40), 320); }),
                StatusCode::InvalidFormat,
                prefix() +
                    "has section 'plan' at [320, 420), outside the "
                    "data area [384, " +
                    std::to_string(size) + ")");
  EXPECT_STATUS(
      edited([&](auto &b) { set64(b, entryField(1, 40), planOffset); }),
      StatusCode::InvalidFormat,
      prefix() + "has overlapping sections 'plan' [" +
          std::to_string(planOffset) + ", " + std::to_string(planOffset + 100) +
          ") and 'meta' [" + std::to_string(planOffset) + ", " +
          std::to_string(planOffset + meta.size()) + ")");
  EXPECT_STATUS(
      edited([&](auto &b) { set64(b, entryField(1, 40), metaOffset + 8); }),
      StatusCode::InvalidFormat,
      prefix() + "has section 'meta' at offset " +
          std::to_string(metaOffset + 8) +
          ", not a multiple of its alignment 64");
  EXPECT_STATUS(edited([&](auto &b) { set64(b, entryField(1, 56), 48); }),
                StatusCode::InvalidFormat,
                prefix() + "has section 'meta' with alignment 48; it must be "
                           "a power of two in [64, 65536]");
  EXPECT_STATUS(
      edited([&](auto &b) { std::memset(&b[entryField(1, 0)], 'm', 32); }),
      StatusCode::InvalidFormat,
      prefix() + "has a section 1 name without a terminating NUL: '" +
          std::string(32, 'm') + "'");
  EXPECT_STATUS(edited([&](auto &b) { b[entryField(1, 0)] = 0; }),
                StatusCode::InvalidFormat,
                prefix() + "has an invalid section 1 name: empty section "
                           "name");
  EXPECT_STATUS(
      edited([&](auto &b) { std::memcpy(&b[entryField(1, 0)], "plan", 5); }),
      StatusCode::InvalidFormat, prefix() + "has two sections named 'plan'");
  EXPECT_STATUS(edited([&](auto &b) { b[planOffset + 100] = 7; }),
                StatusCode::InvalidFormat,
                prefix() + "has non-zero padding byte 7 at offset " +
                    std::to_string(planOffset + 100));
}

TEST_F(BundleTest, SectionChecksumIsEagerForSmallSections) {
  std::vector<uint8_t> b = readBytes(writeGood());
  uint64_t metaOffset = get64(b, entryField(1, 40));
  uint64_t stored = get64(b, entryField(1, 64));
  b[metaOffset + 3] ^= 1;
  uint64_t actual = xxh64(&b[metaOffset], meta.size());
  char buf[128];
  std::snprintf(buf, sizeof(buf), "checksum 0x%016llx, table says 0x%016llx",
                (unsigned long long)actual, (unsigned long long)stored);
  std::unique_ptr<BundleReader> r;
  EXPECT_STATUS(openBytes(b, r), StatusCode::ChecksumMismatch,
                prefix() + "has corrupt section 'meta' [" +
                    std::to_string(metaOffset) + ", " +
                    std::to_string(metaOffset + meta.size()) + "): " + buf);
}

TEST_F(BundleTest, SectionChecksumIsLazyForLargeSections) {
  std::vector<uint8_t> weights(bundle_format::kEagerVerifyLimit + 1);
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = uint8_t(i * 31);
  BundleWriter w;
  ASSERT_TRUE(w.addSection("plan", SectionKind::Plan, plan.data(), 10));
  ASSERT_TRUE(w.addSection("weights", SectionKind::Weights, weights));
  ASSERT_TRUE(w.write(dir.file("big.lmopt")));
  std::vector<uint8_t> b = readBytes(dir.file("big.lmopt"));
  uint64_t offset = get64(b, entryField(1, 40));
  b[offset + 12345] ^= 0x80;

  std::unique_ptr<BundleReader> r;
  ASSERT_TRUE(openBytes(b, r));
  SectionView v;
  EXPECT_TRUE(r->section("plan", v));
  Status st = r->section("weights", v);
  EXPECT_EQ(st.code(), StatusCode::ChecksumMismatch);
  EXPECT_EQ(st.message().rfind(prefix() + "has corrupt section 'weights'", 0),
            0u)
      << st.message();
  EXPECT_EQ(v.data, nullptr);
  // The failure is reported again on every call.
  EXPECT_EQ(r->section(1, v).code(), StatusCode::ChecksumMismatch);

  BundleReader::Options all;
  all.verifyAll = true;
  EXPECT_EQ(openBytes(b, r, all).code(), StatusCode::ChecksumMismatch);

  // Intact, the large section verifies once and reads back.
  ASSERT_TRUE(BundleReader::open(dir.file("big.lmopt"), r));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      SectionView tv;
      if (r->section("weights", tv) && tv.size == weights.size() &&
          std::memcmp(tv.data, weights.data(), tv.size) == 0)
        ++ok;
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(ok.load(), 4);
}
