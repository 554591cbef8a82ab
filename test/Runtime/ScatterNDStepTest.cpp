//===- ScatterNDStepTest.cpp - ScatterNDStep against ORT ------------------===//
//
// Expected values are what onnxruntime 1.32 gave for a one-node ScatterND
// model (opset 18) on the same data, indices, updates and reduction.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/ScatterStep.h"

#include "TestUtil.h"

#include <memory>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

ScatterNDStepDesc makeDesc(std::vector<int64_t> dataDims, DType dtype,
                           std::vector<int64_t> indicesDims,
                           std::vector<int64_t> updatesDims,
                           ScatterReduction reduction, bool indices64 = true) {
  ScatterNDStepDesc d;
  d.name = "write_cache";
  d.dataDims = std::move(dataDims);
  d.dtype = dtype;
  d.indicesDims = std::move(indicesDims);
  d.indices64 = indices64;
  d.updatesDims = std::move(updatesDims);
  d.reduction = reduction;
  return d;
}

std::unique_ptr<ScatterNDStep> makeStep(const ScatterNDStepDesc &desc) {
  std::unique_ptr<ScatterNDStep> step;
  Status st = ScatterNDStep::create(desc, step);
  EXPECT_TRUE(st) << st.toString();
  return step;
}

} // namespace

// data = arange(12).reshape(3, 4), indices [[2], [-3]] (rows), updates
// [[10..13], [20..23]].
TEST(ScatterNDStep, RowsWithNegativeIndex) {
  std::vector<float> data = arange(12);
  std::vector<int64_t> indices = {2, -3};
  std::vector<float> updates = {10, 11, 12, 13, 20, 21, 22, 23};
  auto step = makeStep(
      makeDesc({3, 4}, DType::F32, {2, 1}, {2, 4}, ScatterReduction::None));
  ASSERT_TRUE(step);
  std::vector<float> out(12, -1);
  ASSERT_TRUE(
      step->run(data.data(), indices.data(), updates.data(), out.data()));
  EXPECT_EQ(out,
            (std::vector<float>{20, 21, 22, 23, 4, 5, 6, 7, 10, 11, 12, 13}));
}

// Element tuples [[1, 2], [1, 2], [0, -1]] (i32), updates [5, 7, -1],
// reduction mul: the duplicate multiplies twice.
TEST(ScatterNDStep, MulOverElementsWithDuplicate) {
  std::vector<float> data = arange(12);
  std::vector<int32_t> indices = {1, 2, 1, 2, 0, -1};
  std::vector<float> updates = {5, 7, -1};
  auto step = makeStep(
      makeDesc({3, 4}, DType::F32, {3, 2}, {3}, ScatterReduction::Mul, false));
  ASSERT_TRUE(step);
  std::vector<float> out(12, -1);
  ASSERT_TRUE(
      step->run(data.data(), indices.data(), updates.data(), out.data()));
  EXPECT_EQ(out, (std::vector<float>{0, 1, 2, -3, 4, 5, 210, 7, 8, 9, 10, 11}));
}

// i32 data [[1, 2], [3, 4]], indices [[0], [0]], updates [[5, 1], [2, 9]],
// reduction max.
TEST(ScatterNDStep, MaxInt32) {
  std::vector<int32_t> data = {1, 2, 3, 4}, updates = {5, 1, 2, 9};
  std::vector<int64_t> indices = {0, 0};
  auto step = makeStep(
      makeDesc({2, 2}, DType::I32, {2, 1}, {2, 2}, ScatterReduction::Max));
  ASSERT_TRUE(step);
  std::vector<int32_t> out(4, -1);
  ASSERT_TRUE(
      step->run(data.data(), indices.data(), updates.data(), out.data()));
  EXPECT_EQ(out, (std::vector<int32_t>{5, 9, 3, 4}));
}

// Add wraps as onnxruntime's does: 3 + 2147483647 in int32.
TEST(ScatterNDStep, AddInt32Wraps) {
  std::vector<int32_t> data = {1, 2, 3, 4}, updates = {2147483647, -3};
  std::vector<int64_t> indices = {1, 0, 0, 1};
  auto step = makeStep(
      makeDesc({2, 2}, DType::I32, {2, 2}, {2}, ScatterReduction::Add));
  ASSERT_TRUE(step);
  std::vector<int32_t> out(4, -1);
  ASSERT_TRUE(
      step->run(data.data(), indices.data(), updates.data(), out.data()));
  EXPECT_EQ(out, (std::vector<int32_t>{1, -1, -2147483646, 4}));
}

// In place: output and data are one buffer (a state updated where it is).
TEST(ScatterNDStep, InPlace) {
  std::vector<float> data = arange(12);
  std::vector<int64_t> indices = {2, -3};
  std::vector<float> updates = {10, 11, 12, 13, 20, 21, 22, 23};
  auto step = makeStep(
      makeDesc({3, 4}, DType::F32, {2, 1}, {2, 4}, ScatterReduction::None));
  ASSERT_TRUE(step);
  ASSERT_TRUE(
      step->run(data.data(), indices.data(), updates.data(), data.data()));
  EXPECT_EQ(data,
            (std::vector<float>{20, 21, 22, 23, 4, 5, 6, 7, 10, 11, 12, 13}));
}

TEST(ScatterNDStep, IndexOutOfRangeWritesNothing) {
  std::vector<float> data = arange(12);
  std::vector<int64_t> indices = {1, 0, 0, 4};
  std::vector<float> updates = {5, 7};
  auto step = makeStep(
      makeDesc({3, 4}, DType::F32, {2, 2}, {2}, ScatterReduction::None));
  ASSERT_TRUE(step);
  std::vector<float> out(12, -1);
  Status st =
      step->run(data.data(), indices.data(), updates.data(), out.data());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(),
            "scatter_nd step 'write_cache': index 4 at position [1] (entry 1 "
            "of its tuple) is out of range for data dim 1 of size 4 (valid "
            "range [-4, 3])");
  EXPECT_EQ(out, std::vector<float>(12, -1));
}

TEST(ScatterNDStep, UpdatesOfOtherDimsRefused) {
  std::vector<float> data = arange(12), updates(8, 0);
  std::vector<int64_t> indices = {0, 1};
  auto step = makeStep(
      makeDesc({3, 4}, DType::F32, {2, 1}, {2, 3}, ScatterReduction::None));
  ASSERT_TRUE(step);
  std::vector<float> out(12, -1);
  Status st =
      step->run(data.data(), indices.data(), updates.data(), out.data());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(),
            "scatter_nd step 'write_cache': updates [2, 3] do not match "
            "indices.shape[:-1] + data.shape[1:] = [2, 4]");
  EXPECT_EQ(out, std::vector<float>(12, -1));
}

TEST(ScatterNDStep, TupleLongerThanRankRefused) {
  std::vector<float> data = arange(12), updates(1, 0);
  std::vector<int64_t> indices = {0, 1, 2};
  auto step = makeStep(
      makeDesc({3, 4}, DType::F32, {1, 3}, {1}, ScatterReduction::None));
  ASSERT_TRUE(step);
  std::vector<float> out(12, -1);
  Status st =
      step->run(data.data(), indices.data(), updates.data(), out.data());
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("must end in a tuple length from 1 to data's "
                              "rank 2"),
            std::string::npos)
      << st.message();
}

TEST(ScatterNDStep, ReductionOverUnsupportedDTypeRefused) {
  std::unique_ptr<ScatterNDStep> step;
  Status st = ScatterNDStep::create(
      makeDesc({4}, DType::F16, {2, 1}, {2}, ScatterReduction::Add), step);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.code(), StatusCode::Unsupported);
  EXPECT_EQ(st.message(), "scatter_nd step 'write_cache': reduction 'add' "
                          "over f16 data; it runs over f32, f64, i32 and i64");
  // Without a reduction any dtype is copied.
  std::vector<uint16_t> data = {1, 2, 3, 4}, updates = {9, 8};
  std::vector<int64_t> indices = {3, 0};
  step =
      makeStep(makeDesc({4}, DType::F16, {2, 1}, {2}, ScatterReduction::None));
  ASSERT_TRUE(step);
  std::vector<uint16_t> out(4, 0);
  ASSERT_TRUE(
      step->run(data.data(), indices.data(), updates.data(), out.data()));
  EXPECT_EQ(out, (std::vector<uint16_t>{8, 2, 3, 9}));
}
