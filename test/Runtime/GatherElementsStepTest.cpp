//===- GatherElementsStepTest.cpp - GatherElementsStep against ORT --------===//
//
// Expected values are what onnxruntime 1.32 gave for a one-node
// GatherElements model (opset 17) on the same data, indices and axis.
// Indices smaller than data off the axis read its leading positions.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/GatherStep.h"

#include "TestUtil.h"

#include <memory>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

GatherElementsStepDesc makeDesc(std::vector<int64_t> dataDims,
                                int64_t elementSize, int64_t axis,
                                std::vector<int64_t> indicesDims,
                                bool indices64) {
  GatherElementsStepDesc d;
  d.name = "token_types";
  d.dataDims = std::move(dataDims);
  d.elementSize = elementSize;
  d.axis = axis;
  d.indicesDims = std::move(indicesDims);
  d.indices64 = indices64;
  return d;
}

std::unique_ptr<GatherElementsStep>
makeStep(const GatherElementsStepDesc &desc) {
  std::unique_ptr<GatherElementsStep> step;
  Status st = GatherElementsStep::create(desc, step);
  EXPECT_TRUE(st) << st.toString();
  return step;
}

} // namespace

// data = arange(24).reshape(2, 3, 4) (f32), axis 1,
// indices [[[2, -1], [0, 1]], [[-3, 2], [1, 0]]] (i64): the last dim of the
// indices (2) is smaller than data's (4).
TEST(GatherElementsStep, MiddleAxisSmallerIndices) {
  std::vector<float> data = arange(24);
  std::vector<int64_t> indices = {2, -1, 0, 1, -3, 2, 1, 0};
  auto step = makeStep(makeDesc({2, 3, 4}, 4, 1, {2, 2, 2}, true));
  ASSERT_TRUE(step);
  std::vector<float> out(8, -1);
  ASSERT_TRUE(step->run(data.data(), indices.data(), out.data()));
  EXPECT_EQ(out, (std::vector<float>{8, 9, 0, 5, 12, 21, 16, 13}));
}

// data = (arange(6) * 100).reshape(2, 3) (i16), axis 0, indices [[1], [-2]]
// (i32).
TEST(GatherElementsStep, FirstAxisInt32TwoByteElements) {
  std::vector<int16_t> data = {0, 100, 200, 300, 400, 500};
  std::vector<int32_t> indices = {1, -2};
  auto step = makeStep(makeDesc({2, 3}, 2, 0, {2, 1}, false));
  ASSERT_TRUE(step);
  std::vector<int16_t> out(2, -1);
  ASSERT_TRUE(step->run(data.data(), indices.data(), out.data()));
  EXPECT_EQ(out, (std::vector<int16_t>{300, 0}));
}

TEST(GatherElementsStep, IndexOutOfRangeWritesNothing) {
  std::vector<float> data = arange(24);
  std::vector<int64_t> indices = {2, -1, 0, 1, -3, 3, 1, 0};
  auto step = makeStep(makeDesc({2, 3, 4}, 4, 1, {2, 2, 2}, true));
  ASSERT_TRUE(step);
  std::vector<float> out(8, -1);
  Status st = step->run(data.data(), indices.data(), out.data());
  EXPECT_FALSE(st);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(),
            "gather_elements step 'token_types': index 3 at position "
            "[1, 0, 1] is out of range for axis 1 of size 3 (valid range "
            "[-3, 2])");
  EXPECT_EQ(out, std::vector<float>(8, -1));
}

TEST(GatherElementsStep, NegativeIndexOutOfRange) {
  std::vector<float> data = arange(6);
  std::vector<int32_t> indices = {-4};
  auto step = makeStep(makeDesc({2, 3}, 4, 1, {1, 1}, false));
  ASSERT_TRUE(step);
  float out = -1;
  Status st = step->run(data.data(), indices.data(), &out);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("index -4 at position [0, 0] is out of range "
                              "for axis 1 of size 3 (valid range [-3, 2])"),
            std::string::npos)
      << st.message();
}

TEST(GatherElementsStep, IndicesLargerThanDataOffTheAxis) {
  std::vector<float> data = arange(6);
  std::vector<int64_t> indices(6, 0);
  auto step = makeStep(makeDesc({2, 3}, 4, 1, {3, 2}, true));
  ASSERT_TRUE(step);
  std::vector<float> out(6, -1);
  Status st = step->run(data.data(), indices.data(), out.data());
  EXPECT_FALSE(st);
  EXPECT_EQ(st.message(), "gather_elements step 'token_types': indices "
                          "[3, 2] exceed data [2, 3] in dim 0 (off the axis, "
                          "indices may not be larger than data)");
}

TEST(GatherElementsStep, EmptyAxisRefusesAnyIndex) {
  std::vector<float> data;
  std::vector<int64_t> indices = {0};
  auto step = makeStep(makeDesc({1, 0}, 4, 1, {1, 1}, true));
  ASSERT_TRUE(step);
  float out = -1;
  Status st = step->run(data.data(), indices.data(), &out);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("axis 1 has size 0, no index is valid"),
            std::string::npos)
      << st.message();
}

TEST(GatherElementsStep, NoIndicesNoWork) {
  auto step = makeStep(makeDesc({2, 3}, 4, 1, {2, 0}, true));
  ASSERT_TRUE(step);
  EXPECT_TRUE(step->run(nullptr, nullptr, nullptr));
}

TEST(GatherElementsStep, RankMismatchAndBadAxis) {
  std::vector<float> data = arange(6);
  std::vector<int64_t> indices = {0, 0};
  float out[2];
  auto rank = makeStep(makeDesc({2, 3}, 4, 1, {2}, true));
  ASSERT_TRUE(rank);
  EXPECT_FALSE(rank->run(data.data(), indices.data(), out));
  auto axis = makeStep(makeDesc({2, 3}, 4, 2, {1, 2}, true));
  ASSERT_TRUE(axis);
  EXPECT_FALSE(axis->run(data.data(), indices.data(), out));
}
