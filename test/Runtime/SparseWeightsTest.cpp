//===- SparseWeightsTest.cpp - N:M-sparse weights stored compressed -------===//
//
// Which weights are stored compressed, the compressed bytes and their
// expansion (byte for byte the original, -0.0 and groups with fewer
// nonzero values included), the `sparse-weights` section's encoding (round
// trip, every truncation, every check), and sessions over such a bundle.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/SparseWeights.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/OmittedWeights.h"

#include "SessionTestUtil.h"

#include <gmock/gmock.h>

#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;
using ::testing::HasSubstr;

/// `count` f32 values where group g of 4 holds (g + 1) at position g % 4
/// and -(g + 1) at (g + 2) % 4: two nonzero per group, at every pair of
/// positions in turn.
static std::vector<float> sparse24(size_t count) {
  std::vector<float> values(count, 0.0f);
  for (size_t g = 0; g < count / 4; ++g) {
    values[4 * g + g % 4] = float(g + 1);
    values[4 * g + (g + 2) % 4] = -float(g + 1);
  }
  return values;
}

static void put(std::vector<uint8_t> &bytes, uint64_t offset,
                const std::vector<float> &values) {
  std::memcpy(bytes.data() + offset, values.data(), values.size() * 4);
}

//===----------------------------------------------------------------------===//
// Selection and compression
//===----------------------------------------------------------------------===//

TEST(SparseWeights, SelectsLargeF32WeightsThatFitThePattern) {
  Program program;
  Plan plan;
  // Selected: 2:4 sparse f32 of 1024 elements; a state initialized from the
  // weights.
  plan.addTensor(weightAt("w", DType::F32, {32, 32}, 0));
  // Kept dense: one group with three nonzero values; too small; an f16
  // view; a 2:4 f32 range an i32 tensor also reads.
  plan.addTensor(weightAt("dense", DType::F32, {1024}, 4096));
  plan.addTensor(weightAt("small", DType::F32, {1020}, 8192));
  plan.addTensor(weightAt("half", DType::F16, {2048}, 12288));
  plan.addTensor(weightAt("cast_f", DType::F32, {1024}, 16384));
  plan.addTensor(weightAt("cast_i", DType::I32, {1024}, 16384));
  program.states.push_back(weightState("table", DType::F32, {4, 256}, 20480));
  program.entries.push_back(plan);

  std::vector<uint8_t> weights(24576, 0);
  put(weights, 0, sparse24(1024));
  std::vector<float> dense = sparse24(1024);
  dense[4] = 3.0f; // group 1: three nonzero
  put(weights, 4096, dense);
  put(weights, 8192, sparse24(1020));
  put(weights, 16384, sparse24(1024));
  std::vector<float> table = sparse24(1024);
  table[0] = -0.0f; // a signed zero counts as a value: still two per group
  table[2] = 0.0f;
  put(weights, 20480, table);

  SparseWeights sparse =
      selectSparseWeights(program, weights.data(), weights.size());
  EXPECT_EQ(sparse.fullSize, 24576u);
  ASSERT_EQ(sparse.ranges.size(), 2u);
  EXPECT_EQ(sparse.ranges[0].offset, 0u);
  EXPECT_EQ(sparse.ranges[0].size, 4096u);
  EXPECT_EQ(sparse.ranges[1].offset, 20480u);
  EXPECT_EQ(sparse.ranges[1].size, 4096u);
  EXPECT_EQ(sparse.ranges[0].n, 2u);
  EXPECT_EQ(sparse.ranges[0].m, 4u);
  // 256 groups: 2 values and a byte each.
  EXPECT_EQ(sparse.ranges[0].storedSize(), 256u * 9);
  EXPECT_EQ(sparse.denseBytes(), 8192u);
  EXPECT_EQ(sparse.storedBytes(), 24576u - 2 * 4096 + 2 * 2304);
}

TEST(SparseWeights, CompressesToValuesAndPositions) {
  SparseWeights sparse{64 + 32, {{64, 32, 2, 4}}};
  std::vector<uint8_t> weights(96);
  for (size_t i = 0; i < 64; ++i)
    weights[i] = uint8_t(i);
  // Group 0: 1.5 at 1, 2.5 at 3; group 1: only -4 at 2 (the lowest free
  // position, 0, is kept too, holding 0).
  put(weights, 64, {0.0f, 1.5f, 0.0f, 2.5f, 0.0f, 0.0f, -4.0f, 0.0f});
  std::vector<uint8_t> stored = compressSparseWeights(weights.data(), sparse);
  ASSERT_EQ(stored.size(), 64u + 2 * 9);
  EXPECT_EQ(std::vector<uint8_t>(stored.begin(), stored.begin() + 64),
            std::vector<uint8_t>(weights.begin(), weights.begin() + 64));
  float values[4];
  std::memcpy(values, stored.data() + 64, 16);
  EXPECT_EQ(values[0], 1.5f);
  EXPECT_EQ(values[1], 2.5f);
  EXPECT_EQ(values[2], 0.0f);
  EXPECT_EQ(values[3], -4.0f);
  // Positions, two bits each, the first in the low bits.
  EXPECT_EQ(stored[64 + 16], uint8_t(1 | 3 << 2));
  EXPECT_EQ(stored[64 + 17], uint8_t(0 | 2 << 2));

  std::vector<uint8_t> full(96, 0xee);
  ASSERT_TRUE(expandSparseWeights(stored.data(), sparse, "b", full.data()));
  EXPECT_EQ(full, weights);
}

TEST(SparseWeights, ExpandsEveryPatternByteForByte) {
  for (auto [n, m] : {std::pair<uint32_t, uint32_t>{1, 4},
                      {2, 4},
                      {3, 4},
                      {2, 8},
                      {1, 16},
                      {2, 16}}) {
    SCOPED_TRACE(std::to_string(n) + ":" + std::to_string(m));
    // 64 dense bytes, a range of 32 groups, 16 dense bytes after.
    uint64_t size = 32 * 4 * m;
    std::vector<uint8_t> weights(64 + size + 16);
    for (size_t i = 0; i < weights.size(); ++i)
      weights[i] = uint8_t(7 * i);
    std::vector<float> values(32 * m, 0.0f);
    for (uint32_t g = 0; g < 32; ++g)
      for (uint32_t j = 0; j < n; ++j)
        if ((g + j) % 5) // some groups hold fewer than n values
          values[g * m + (g * 3 + j * (m / n)) % m] = float(g) - 0.25f * j;
    put(weights, 64, values);
    SparseWeights sparse{weights.size(), {{64, size, n, m}}};
    std::vector<uint8_t> stored = compressSparseWeights(weights.data(), sparse);
    EXPECT_EQ(stored.size(), sparse.storedBytes());
    std::vector<uint8_t> full(weights.size(), 0);
    ASSERT_TRUE(expandSparseWeights(stored.data(), sparse, "b", full.data()));
    EXPECT_EQ(full, weights);
  }
}

TEST(SparseWeights, ExpansionRefusesPositionsThatDoNotIncrease) {
  SparseWeights sparse{32, {{0, 32, 2, 4}}};
  std::vector<uint8_t> stored(2 * 9, 0);
  stored[16] = uint8_t(0 | 1 << 2);
  stored[17] = uint8_t(2 | 2 << 2); // group 1 names position 2 twice
  std::vector<uint8_t> full(32);
  Status st =
      expandSparseWeights(stored.data(), sparse, "m.lmopt", full.data());
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_EQ(st.message(), "sparse-weights of 'm.lmopt' range 0 group 1: "
                          "positions byte 10 does not name increasing "
                          "positions");
}

//===----------------------------------------------------------------------===//
// The section
//===----------------------------------------------------------------------===//

TEST(SparseWeights, RoundTripsByteForByte) {
  SparseWeights sparse{8192, {{0, 4096, 2, 4}, {4096, 2048, 1, 8}}};
  std::vector<uint8_t> bytes = serializeSparseWeights(sparse);
  ASSERT_EQ(bytes.size(), 28u + 2 * 24);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "LMOPTSPW");
  SparseWeights parsed;
  ASSERT_TRUE(parseSparseWeights(bytes.data(), bytes.size(),
                                 sparse.storedBytes(), "b", parsed));
  EXPECT_EQ(serializeSparseWeights(parsed), bytes);
  EXPECT_EQ(parsed.ranges[1].n, 1u);
  EXPECT_EQ(parsed.ranges[1].m, 8u);
}

TEST(SparseWeights, EveryTruncationIsRefused) {
  SparseWeights sparse{8192, {{0, 4096, 2, 4}}};
  std::vector<uint8_t> bytes = serializeSparseWeights(sparse);
  for (size_t size = 0; size < bytes.size(); ++size) {
    SparseWeights parsed;
    Status st = parseSparseWeights(bytes.data(), size, sparse.storedBytes(),
                                   "b", parsed);
    EXPECT_EQ(st.code(), StatusCode::InvalidFormat) << size;
  }
}

TEST(SparseWeights, MalformedSectionsNameWhatIsWrong) {
  auto parse = [](const SparseWeights &sparse, uint64_t stored) {
    std::vector<uint8_t> bytes = serializeSparseWeights(sparse);
    SparseWeights parsed;
    return parseSparseWeights(bytes.data(), bytes.size(), stored, "m.lmopt",
                              parsed);
  };
  const std::string prefix = "sparse-weights section of 'm.lmopt' ";
  struct Case {
    SparseWeights sparse;
    uint64_t stored;
    std::string message;
  };
  std::vector<Case> cases = {
      {{4096, {{0, 4096, 2, 5}}},
       2304,
       "range 0 has pattern groups of 5 (4, 8 or 16 are encoded)"},
      {{4096, {{0, 4096, 4, 4}}},
       2304,
       "range 0 has pattern 4:4 (0 < n < m values are kept)"},
      {{4096, {{0, 4096, 3, 8}}},
       2304,
       "range 0 has pattern 3:8 (the positions of a group must fit one "
       "byte)"},
      {{4096, {{0, 0, 2, 4}}}, 4096, "range 0 is empty"},
      {{4096, {{0, 40, 2, 4}}},
       4096,
       "range 0 has 40 bytes, not a whole number of groups of 4 f32 values"},
      {{8192, {{0, 4096, 2, 4}, {2048, 2048, 2, 4}}},
       0,
       "range 1 starts at 2048, before the previous range's end 4096 (ranges "
       "must be sorted and disjoint)"},
      {{4096, {{2048, 4096, 2, 4}}},
       0,
       "range 0 [2048, +4096) passes the 4096-byte weights layout"},
      {{4096, {{0, 4096, 2, 4}}},
       4096,
       "stores the 4096-byte weights layout in 2304 bytes, but the weights "
       "section has 4096 bytes"},
  };
  for (const Case &c : cases) {
    Status st = parse(c.sparse, c.stored);
    EXPECT_EQ(st.code(), StatusCode::InvalidFormat) << c.message;
    EXPECT_EQ(st.message(), prefix + c.message);
  }
  std::vector<uint8_t> bytes = serializeSparseWeights({4096, {}});
  SparseWeights parsed;
  bytes[0] = 'X';
  EXPECT_EQ(
      parseSparseWeights(bytes.data(), bytes.size(), 4096, "m.lmopt", parsed)
          .message(),
      prefix + "does not start with 'LMOPTSPW'");
  bytes[0] = 'L';
  bytes[8] = 2;
  Status st =
      parseSparseWeights(bytes.data(), bytes.size(), 4096, "m.lmopt", parsed);
  EXPECT_EQ(st.code(), StatusCode::VersionMismatch);
  EXPECT_EQ(st.message(), "sparse-weights section of 'm.lmopt' has version "
                          "2.0, not this runtime's 1.0; recompile the model");
  bytes[8] = 1;
  bytes.push_back(0);
  EXPECT_THAT(
      parseSparseWeights(bytes.data(), bytes.size(), 4096, "m.lmopt", parsed)
          .message(),
      HasSubstr("lists 0 ranges in 1 bytes (24 bytes each)"));
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

namespace {
/// A bundle whose outputs are its weights: `w` (f32 [1024], 2:4 sparse)
/// and `ids` (i64 [4], dense), written with its sparse weights compressed.
class SparseWeightsSessionTest : public SessionTest {
protected:
  SparseWeightsSessionTest() {
    uint32_t x = b.input("x", DType::F32, {2});
    b.output("x_out", x);
    b.output("w", b.weight("w", DType::F32, {1024}, sparse24(1024)));
    b.output("ids", b.weight<int64_t>("ids", DType::I64, {4}, {7, -1, 3, 9}));
  }

  std::string writeSparse(const std::vector<uint8_t> *stored = nullptr,
                          bool omittedToo = false) {
    Program program;
    program.entries.push_back(b.plan);
    SparseWeights sparse =
        selectSparseWeights(program, b.weights.data(), b.weights.size());
    EXPECT_EQ(sparse.ranges.size(), 1u);
    std::vector<uint8_t> weights =
        stored ? *stored : compressSparseWeights(b.weights.data(), sparse);
    BundleWriter writer;
    std::string path = dir.file("sparse.lmopt");
    std::vector<Status> statuses = {
        writer.addSection("plan", SectionKind::Plan, b.planBytes()),
        writer.addSection("weights", SectionKind::Weights, std::move(weights)),
        writer.addSection("sparse-weights", SectionKind::SparseWeights,
                          serializeSparseWeights(sparse))};
    if (omittedToo)
      statuses.push_back(
          writer.addSection("omitted-weights", SectionKind::OmittedWeights,
                            serializeOmittedWeights({b.weights.size(), {}})));
    statuses.push_back(writer.write(path));
    for (const Status &st : statuses)
      EXPECT_TRUE(st) << st.toString();
    return path;
  }

  Status runOnce(const std::string &path, std::vector<NamedTensor> &outputs) {
    std::unique_ptr<Session> session;
    if (Status st = Session::create(path, SessionOptions(), session); !st)
      return st;
    return session->run({{"x", f32({2}, {1, 2})}}, outputs);
  }

  BundleBuilder b;
};
} // namespace

TEST_F(SparseWeightsSessionTest, RunsWithTheOriginalWeights) {
  std::string path = writeSparse();
  std::vector<NamedTensor> outputs;
  Status st = runOnce(path, outputs);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(values<float>(outputs[1].tensor), sparse24(1024));
  EXPECT_EQ(values<int64_t>(outputs[2].tensor),
            (std::vector<int64_t>{7, -1, 3, 9}));
}

TEST_F(SparseWeightsSessionTest, BadPositionsAreRefusedByName) {
  Program program;
  program.entries.push_back(b.plan);
  SparseWeights sparse =
      selectSparseWeights(program, b.weights.data(), b.weights.size());
  std::vector<uint8_t> stored = compressSparseWeights(b.weights.data(), sparse);
  // The first range's third group: its index byte, after 256 groups' values.
  stored[sparse.ranges[0].offset + 256 * 8 + 2] = 0;
  std::string path = writeSparse(&stored);
  std::vector<NamedTensor> outputs;
  Status st = runOnce(path, outputs);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_EQ(st.message(), "sparse-weights of '" + path +
                              "' range 0 group 2: positions byte 0 does not "
                              "name increasing positions");
}

TEST_F(SparseWeightsSessionTest, OmittedAndSparseTogetherAreRefused) {
  std::string path = writeSparse(nullptr, true);
  std::vector<NamedTensor> outputs;
  Status st = runOnce(path, outputs);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_THAT(st.message(), HasSubstr("has both an omitted-weights and a "
                                      "sparse-weights section"));
}
