//===- OmittedWeightsTest.cpp - Bundles without their large weights -------===//
//
// Which weights --omit-weights leaves out, the `omitted-weights` section's
// encoding (round trip, every truncation, every check), the random fill,
// and sessions over such a bundle: refused without a seed, deterministic
// with one, a normal bundle refusing a seed.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/OmittedWeights.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/Float16.h"

#include "SessionTestUtil.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;
using ::testing::HasSubstr;

static bool sameRanges(const OmittedWeights &a, const OmittedWeights &b) {
  if (a.fullSize != b.fullSize || a.ranges.size() != b.ranges.size())
    return false;
  for (size_t i = 0; i < a.ranges.size(); ++i)
    if (a.ranges[i].offset != b.ranges[i].offset ||
        a.ranges[i].size != b.ranges[i].size ||
        a.ranges[i].dtype != b.ranges[i].dtype)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

TEST(OmittedWeights, SelectsLargeFloatWeightsOnly) {
  Program program;
  Plan plan;
  // Omitted: f32 and f16 of 1024 elements, bf16 of 2048.
  plan.addTensor(weightAt("w32", DType::F32, {32, 32}, 0));
  plan.addTensor(weightAt("w16", DType::F16, {1024}, 4096));
  plan.addTensor(weightAt("wbf", DType::BF16, {2, 1024}, 6144));
  // Kept: 1023 f32 elements, integers, a bool mask.
  plan.addTensor(weightAt("small", DType::F32, {1023}, 10240));
  plan.addTensor(weightAt("ids", DType::I64, {2048}, 14336));
  plan.addTensor(weightAt("mask", DType::Bool, {4096}, 30720));
  // Kept: a large f32 constant an i32 tensor also reads (a storage cast).
  plan.addTensor(weightAt("cast_f", DType::F32, {1024}, 34816));
  plan.addTensor(weightAt("cast_i", DType::I32, {1024}, 34816));
  // One range for two f32 views of the same bytes, one nested in the other.
  plan.addTensor(weightAt("shared", DType::F32, {2048}, 38912));
  plan.addTensor(weightAt("shared_tail", DType::F32, {1024}, 43008));
  // A state initialized from the weights is omitted like a weight.
  program.states.push_back(weightState("cache", DType::F32, {4, 256}, 47104));
  program.entries.push_back(plan);

  OmittedWeights omitted = selectOmittedWeights(program, 51200);
  EXPECT_EQ(omitted.fullSize, 51200u);
  OmittedWeights expected{51200,
                          {{0, 4096, DType::F32},
                           {4096, 2048, DType::F16},
                           {6144, 4096, DType::BF16},
                           {38912, 8192, DType::F32},
                           {47104, 4096, DType::F32}}};
  EXPECT_TRUE(sameRanges(omitted, expected));
  EXPECT_EQ(omitted.omittedBytes(), 4096u + 2048 + 4096 + 8192 + 4096);
}

TEST(OmittedWeights, KeptWeightsAreTheBytesOutsideTheRanges) {
  std::vector<uint8_t> full(100);
  for (size_t i = 0; i < full.size(); ++i)
    full[i] = uint8_t(i);
  OmittedWeights omitted{100, {{0, 8, DType::F32}, {40, 20, DType::F32}}};
  std::vector<uint8_t> kept = keptWeights(full.data(), omitted);
  std::vector<uint8_t> expected;
  for (size_t i = 8; i < 40; ++i)
    expected.push_back(uint8_t(i));
  for (size_t i = 60; i < 100; ++i)
    expected.push_back(uint8_t(i));
  EXPECT_EQ(kept, expected);
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

static const OmittedWeights kSample{10000,
                                    {{64, 4096, DType::F32},
                                     {4160, 2048, DType::F16},
                                     {8192, 512, DType::BF16}}};
static constexpr uint64_t kSampleKept = 10000 - 4096 - 2048 - 512;

TEST(OmittedWeights, RoundTripsByteForByte) {
  std::vector<uint8_t> bytes = serializeOmittedWeights(kSample);
  ASSERT_EQ(bytes.size(), 28u + 3 * 20);
  // Magic, version 1.0, full size, count, then the first range.
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "LMOPTOMW");
  const uint8_t head[] = {1, 0, 0, 0, 0, 0, 0,  0, 0x10, 0x27, 0, 0, 0, 0,
                          0, 0, 3, 0, 0, 0, 64, 0, 0,    0,    0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(bytes.data() + 8, head, sizeof(head)), 0);
  OmittedWeights parsed;
  Status st = parseOmittedWeights(bytes.data(), bytes.size(), kSampleKept,
                                  "m.lmopt", parsed);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_TRUE(sameRanges(parsed, kSample));
}

TEST(OmittedWeights, EveryTruncationIsRefused) {
  std::vector<uint8_t> bytes = serializeOmittedWeights(kSample);
  for (size_t size = 0; size < bytes.size(); ++size) {
    OmittedWeights parsed;
    Status st =
        parseOmittedWeights(bytes.data(), size, kSampleKept, "m.lmopt", parsed);
    EXPECT_EQ(st.code(), StatusCode::InvalidFormat) << size;
  }
}

/// The message of parsing `bytes` (kSample's kept size), or "ok".
static std::string parseError(const std::vector<uint8_t> &bytes,
                              uint64_t keptSize = kSampleKept) {
  OmittedWeights parsed;
  Status st = parseOmittedWeights(bytes.data(), bytes.size(), keptSize,
                                  "m.lmopt", parsed);
  return st ? "ok" : st.toString();
}

static void putU64At(std::vector<uint8_t> &bytes, size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    bytes[at + i] = uint8_t(value >> (8 * i));
}

/// Byte offset of range `i`'s field (0 offset, 8 size, 16 dtype).
static size_t rangeField(size_t i, size_t field) { return 28 + 20 * i + field; }

TEST(OmittedWeights, MalformedSectionsNameWhatIsWrong) {
  const std::vector<uint8_t> good = serializeOmittedWeights(kSample);
  const std::string prefix =
      "invalid format: omitted-weights section of 'm.lmopt' ";
  std::vector<uint8_t> bytes = good;
  bytes[0] = 'X';
  EXPECT_EQ(parseError(bytes), prefix + "does not start with 'LMOPTOMW'");

  bytes = good;
  bytes[8] = 2;
  EXPECT_EQ(parseError(bytes),
            "version mismatch: omitted-weights section of 'm.lmopt' has "
            "version 2.0, not this runtime's 1.0; recompile the model");

  bytes = good;
  bytes.push_back(0);
  EXPECT_EQ(parseError(bytes),
            prefix + "lists 3 ranges in 61 bytes (20 bytes each)");
  bytes = good;
  bytes[24] = 4;
  EXPECT_EQ(parseError(bytes),
            prefix + "lists 4 ranges in 60 bytes (20 bytes each)");

  bytes = good;
  bytes[rangeField(1, 16)] = uint8_t(DType::I32);
  EXPECT_EQ(parseError(bytes),
            prefix + "range 1 has dtype 9; only f32, f16 and bf16 weights "
                     "are omitted");

  bytes = good;
  putU64At(bytes, rangeField(0, 8), 0);
  EXPECT_EQ(parseError(bytes), prefix + "range 0 is empty");

  bytes = good;
  putU64At(bytes, rangeField(0, 8), 4094);
  EXPECT_EQ(parseError(bytes), prefix + "range 0 has 4094 bytes, not a whole "
                                        "number of f32 values");

  // Overlapping, then out of order.
  bytes = good;
  putU64At(bytes, rangeField(1, 0), 4096);
  EXPECT_EQ(parseError(bytes),
            prefix + "range 1 starts at 4096, before the previous range's "
                     "end 4160 (ranges must be sorted and disjoint)");
  bytes = good;
  putU64At(bytes, rangeField(1, 0), 0);
  EXPECT_EQ(parseError(bytes),
            prefix + "range 1 starts at 0, before the previous range's end "
                     "4160 (ranges must be sorted and disjoint)");

  // Past the layout, and past 2^64.
  bytes = good;
  putU64At(bytes, rangeField(2, 0), 9728);
  EXPECT_EQ(parseError(bytes), prefix + "range 2 [9728, +512) passes the "
                                        "10000-byte weights layout");
  bytes = good;
  putU64At(bytes, rangeField(2, 0), ~uint64_t(0) - 255);
  EXPECT_THAT(parseError(bytes),
              HasSubstr("range 2 [18446744073709551360, +512) passes the "
                        "10000-byte weights layout"));

  // A weights section of another size.
  EXPECT_EQ(parseError(good, kSampleKept + 1),
            prefix + "leaves 3344 of the 10000-byte weights layout, but the "
                     "weights section has 3345 bytes");
}

//===----------------------------------------------------------------------===//
// Random fill
//===----------------------------------------------------------------------===//

TEST(OmittedWeights, FillKeepsKeptBytesAndWritesBoundedValues) {
  std::vector<uint8_t> kept(kSampleKept);
  for (size_t i = 0; i < kept.size(); ++i)
    kept[i] = uint8_t(i * 7 + 1);
  std::vector<uint8_t> full(kSample.fullSize), again(kSample.fullSize),
      other(kSample.fullSize);
  fillRandomWeights(kept.data(), kSample, 42, full.data());
  fillRandomWeights(kept.data(), kSample, 42, again.data());
  fillRandomWeights(kept.data(), kSample, 43, other.data());
  EXPECT_EQ(full, again);
  EXPECT_EQ(keptWeights(full.data(), kSample), kept);
  EXPECT_EQ(keptWeights(other.data(), kSample), kept);

  for (const OmittedRange &range : kSample.ranges) {
    size_t count = range.size / dtypeSize(range.dtype);
    float lo = 1, hi = -1;
    bool differs = false;
    for (size_t i = 0; i < count; ++i) {
      const uint8_t *p =
          full.data() + range.offset + i * dtypeSize(range.dtype);
      float value = 0;
      if (range.dtype == DType::F32) {
        std::memcpy(&value, p, 4);
      } else {
        uint16_t bits = 0;
        std::memcpy(&bits, p, 2);
        value = range.dtype == DType::F16 ? halfToFloat(bits)
                                          : bfloat16ToFloat(bits);
      }
      ASSERT_TRUE(std::isfinite(value));
      lo = std::min(lo, value);
      hi = std::max(hi, value);
      differs |= std::memcmp(p, other.data() + (p - full.data()),
                             dtypeSize(range.dtype)) != 0;
    }
    SCOPED_TRACE(dtypeName(range.dtype));
    // Rounding to 16 bits may reach the bound itself.
    EXPECT_GE(lo, -kRandomWeightBound);
    EXPECT_LE(hi, kRandomWeightBound);
    // Spread over the interval, not a constant.
    EXPECT_LT(lo, -0.04f);
    EXPECT_GT(hi, 0.04f);
    EXPECT_TRUE(differs);
  }
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

namespace {
/// A bundle whose outputs are its weights: `w` (f32 [1024], omitted) and
/// `ids` (i64 [4], kept), written with or without its omitted weights.
class RandomWeightsSessionTest : public SessionTest {
protected:
  RandomWeightsSessionTest() {
    std::vector<float> w(1024, 0.5f);
    uint32_t x = b.input("x", DType::F32, {2});
    b.output("x_out", x);
    b.output("w", b.weight("w", DType::F32, {1024}, w));
    b.output("ids", b.weight<int64_t>("ids", DType::I64, {4}, {7, -1, 3, 9}));
  }

  /// Writes the bundle without its large weights, with `omittedSection`
  /// instead of the encoded selection when given.
  std::string
  writeOmitted(const std::vector<uint8_t> *omittedSection = nullptr) {
    Program program;
    program.entries.push_back(b.plan);
    OmittedWeights omitted = selectOmittedWeights(program, b.weights.size());
    EXPECT_EQ(omitted.ranges.size(), 1u);
    std::vector<uint8_t> kept = keptWeights(b.weights.data(), omitted);
    std::vector<uint8_t> section =
        omittedSection ? *omittedSection : serializeOmittedWeights(omitted);
    BundleWriter writer;
    std::string path = dir.file("omitted.lmopt");
    for (Status st :
         {writer.addSection("plan", SectionKind::Plan, b.planBytes()),
          writer.addSection("weights", SectionKind::Weights, std::move(kept)),
          writer.addSection("omitted-weights", SectionKind::OmittedWeights,
                            std::move(section)),
          writer.write(path)})
      EXPECT_TRUE(st) << st.toString();
    return path;
  }

  Status runOnce(const std::string &path, std::optional<uint64_t> seed,
                 std::vector<NamedTensor> &outputs,
                 bool *randomWeights = nullptr) {
    SessionOptions options;
    options.randomWeightsSeed = seed;
    std::unique_ptr<Session> session;
    if (Status st = Session::create(path, options, session); !st)
      return st;
    if (randomWeights)
      *randomWeights = session->hasRandomWeights();
    return session->run({{"x", f32({2}, {1, 2})}}, outputs);
  }

  BundleBuilder b;
};
} // namespace

TEST_F(RandomWeightsSessionTest, RefusedWithoutASeed) {
  std::string path = writeOmitted();
  std::vector<NamedTensor> outputs;
  Status st = runOnce(path, std::nullopt, outputs);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(),
            "bundle '" + path +
                "' was compiled with --omit-weights: its weights are random "
                "placeholders for speed measurements; run it with "
                "--random-weights=SEED (lmopt-run) to time it, never to use "
                "its outputs");
}

TEST_F(RandomWeightsSessionTest, RunsWithASeedKeepingSmallWeightsExact) {
  std::string path = writeOmitted();
  std::vector<NamedTensor> first, again, other;
  bool randomWeights = false;
  Status st = runOnce(path, 5, first, &randomWeights);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_TRUE(randomWeights);
  ASSERT_TRUE(runOnce(path, 5, again));
  ASSERT_TRUE(runOnce(path, 6, other));
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[2].name, "ids");
  EXPECT_EQ(values<int64_t>(first[2].tensor),
            (std::vector<int64_t>{7, -1, 3, 9}));
  std::vector<float> w = values<float>(first[1].tensor);
  ASSERT_EQ(w.size(), 1024u);
  for (float value : w)
    ASSERT_TRUE(value >= -kRandomWeightBound && value <= kRandomWeightBound)
        << value;
  EXPECT_EQ(first[1].tensor.data, again[1].tensor.data);
  EXPECT_NE(first[1].tensor.data, other[1].tensor.data);
}

TEST_F(RandomWeightsSessionTest, ABundleWithItsWeightsRefusesASeed) {
  std::string path = write(b);
  std::vector<NamedTensor> outputs;
  bool randomWeights = true;
  ASSERT_TRUE(runOnce(path, std::nullopt, outputs, &randomWeights));
  EXPECT_FALSE(randomWeights);
  Status st = runOnce(path, 1, outputs);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(), "bundle '" + path +
                              "' has its weights; random weights are for "
                              "bundles compiled with --omit-weights");
}

TEST_F(RandomWeightsSessionTest, AMalformedSectionIsRefusedByName) {
  OmittedWeights wrong{b.weights.size(), {{0, 4096, DType::F32}}};
  std::vector<uint8_t> section = serializeOmittedWeights(wrong);
  section[28 + 16] = uint8_t(DType::I8);
  std::string path = writeOmitted(&section);
  std::vector<NamedTensor> outputs;
  Status st = runOnce(path, 1, outputs);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_THAT(st.message(),
              HasSubstr("omitted-weights section of '" + path +
                        "' range 0 has dtype 5; only f32, f16 and bf16"));
}
