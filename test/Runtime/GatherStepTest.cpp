//===- GatherStepTest.cpp - GatherStep against numpy.take -----------------===//
//
// Expected values are what NumPy printed for np.take(data, indices, axis)
// (the command is above each case); ONNX Gather has the same meaning,
// negative indices included.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/GatherStep.h"

#include "TestUtil.h"

#include <memory>
#include <numeric>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

GatherStepDesc makeDesc(std::vector<int64_t> dataDims, int64_t elementSize,
                        int64_t axis, std::vector<int64_t> indicesDims,
                        bool indices64) {
  GatherStepDesc d;
  d.name = "embed_0";
  d.dataDims = std::move(dataDims);
  d.elementSize = elementSize;
  d.axis = axis;
  d.indicesDims = std::move(indicesDims);
  d.indices64 = indices64;
  return d;
}

std::unique_ptr<GatherStep> makeStep(const GatherStepDesc &desc) {
  std::unique_ptr<GatherStep> step;
  Status st = GatherStep::create(desc, step);
  EXPECT_TRUE(st) << st.toString();
  return step;
}

} // namespace

// np.take(np.arange(24, dtype=np.float32).reshape(2, 3, 4),
//         [[2, 0], [-1, 1]], axis=1)
TEST(GatherStep, MiddleAxisMatrixIndices) {
  std::vector<float> data(24);
  std::iota(data.begin(), data.end(), 0.0f);
  std::vector<int64_t> indices = {2, 0, -1, 1};
  auto step = makeStep(makeDesc({2, 3, 4}, 4, 1, {2, 2}, true));
  ASSERT_TRUE(step);
  std::vector<float> out(2 * 2 * 2 * 4, -1);
  ASSERT_TRUE(step->run(data.data(), indices.data(), out.data()));
  EXPECT_EQ(out, (std::vector<float>{8,  9,  10, 11, 0,  1,  2,  3,  8,  9,  10,
                                     11, 4,  5,  6,  7,  20, 21, 22, 23, 12, 13,
                                     14, 15, 20, 21, 22, 23, 16, 17, 18, 19}));
}

// np.take(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5,
//         [2, -1, 0, -3], axis=0): an embedding lookup, int32 indices.
TEST(GatherStep, FirstAxisInt32) {
  std::vector<float> data(12);
  for (int i = 0; i < 12; ++i)
    data[size_t(i)] = 0.5f * float(i);
  std::vector<int32_t> indices = {2, -1, 0, -3};
  auto step = makeStep(makeDesc({3, 4}, 4, 0, {4}, false));
  ASSERT_TRUE(step);
  std::vector<float> out(16, -1);
  ASSERT_TRUE(step->run(data.data(), indices.data(), out.data()));
  EXPECT_EQ(out, (std::vector<float>{4, 4.5, 5, 5.5, 4, 4.5, 5, 5.5, 0, 0.5, 1,
                                     1.5, 0, 0.5, 1, 1.5}));
}

// np.take((np.arange(6, dtype=np.int64) * 10**12).reshape(2, 3), -1, axis=1):
// a scalar index drops the axis; 8-byte elements.
TEST(GatherStep, ScalarIndexLastAxis) {
  std::vector<int64_t> data(6);
  for (int i = 0; i < 6; ++i)
    data[size_t(i)] = int64_t(i) * 1000000000000;
  int64_t index = -1;
  auto step = makeStep(makeDesc({2, 3}, 8, 1, {}, true));
  ASSERT_TRUE(step);
  std::vector<int64_t> out(2, -1);
  ASSERT_TRUE(step->run(data.data(), &index, out.data()));
  EXPECT_EQ(out, (std::vector<int64_t>{2000000000000, 5000000000000}));
}

// np.take(np.arange(10, dtype=np.uint16).reshape(2, 5) + 300,
//         np.array([4, 0, -2], dtype=np.int32), axis=1): 2-byte elements.
TEST(GatherStep, TwoByteElements) {
  std::vector<uint16_t> data(10);
  for (int i = 0; i < 10; ++i)
    data[size_t(i)] = uint16_t(300 + i);
  std::vector<int32_t> indices = {4, 0, -2};
  auto step = makeStep(makeDesc({2, 5}, 2, 1, {3}, false));
  ASSERT_TRUE(step);
  std::vector<uint16_t> out(6);
  ASSERT_TRUE(step->run(data.data(), indices.data(), out.data()));
  EXPECT_EQ(out, (std::vector<uint16_t>{304, 300, 303, 309, 305, 308}));
}

// Every index is checked before anything is written: the bad one is last,
// and the output keeps its contents.
TEST(GatherStep, IndexOutOfRange) {
  std::vector<float> data(12, 1.0f);
  auto step = makeStep(makeDesc({3, 4}, 4, 0, {2, 2}, true));
  ASSERT_TRUE(step);
  std::vector<float> out(16, -1);
  std::vector<int64_t> high = {0, 1, 2, 3};
  EXPECT_STATUS(step->run(data.data(), high.data(), out.data()),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': index 3 at position [1, 1] is out of "
                "range for axis 0 of size 3 (valid range [-3, 2])");
  EXPECT_EQ(out, std::vector<float>(16, -1));
  std::vector<int64_t> low = {0, -4, 0, 0};
  EXPECT_STATUS(step->run(data.data(), low.data(), out.data()),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': index -4 at position [0, 1] is out of "
                "range for axis 0 of size 3 (valid range [-3, 2])");
  std::vector<int64_t> extreme = {INT64_MIN, 0, 0, 0};
  EXPECT_STATUS(step->run(data.data(), extreme.data(), out.data()),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': index -9223372036854775808 at "
                "position [0, 0] is out of range for axis 0 of size 3 (valid "
                "range [-3, 2])");
  EXPECT_EQ(out, std::vector<float>(16, -1));

  auto step32 = makeStep(makeDesc({2, 5}, 4, 1, {3}, false));
  ASSERT_TRUE(step32);
  std::vector<int32_t> indices32 = {1, INT32_MAX, 0};
  EXPECT_STATUS(step32->run(data.data(), indices32.data(), out.data()),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': index 2147483647 at position [1] is "
                "out of range for axis 1 of size 5 (valid range [-5, 4])");
}

TEST(GatherStep, ZeroSize) {
  float data[4] = {1, 2, 3, 4};
  float out = -1;
  // No indices: nothing to check or copy.
  auto noIndices = makeStep(makeDesc({2, 2}, 4, 0, {0, 3}, true));
  ASSERT_TRUE(noIndices);
  EXPECT_TRUE(noIndices->run(data, nullptr, &out));
  // Empty rows: indices are still checked, nothing is copied.
  auto emptyRows = makeStep(makeDesc({2, 0}, 4, 0, {1}, true));
  ASSERT_TRUE(emptyRows);
  int64_t one = 1, five = 5;
  EXPECT_TRUE(emptyRows->run(nullptr, &one, nullptr));
  EXPECT_STATUS(emptyRows->run(nullptr, &five, nullptr),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': index 5 at position [0] is out of "
                "range for axis 0 of size 2 (valid range [-2, 1])");
  // An empty axis has no valid index.
  auto emptyAxis = makeStep(makeDesc({0, 4}, 4, 0, {1}, true));
  ASSERT_TRUE(emptyAxis);
  int64_t zero = 0;
  EXPECT_STATUS(emptyAxis->run(data, &zero, &out), StatusCode::InvalidArgument,
                "gather step 'embed_0': index 0 at position [0] is out of "
                "range for axis 0 of size 0 (axis 0 has size 0, no index is "
                "valid)");
  EXPECT_EQ(out, -1);
}

TEST(GatherStep, NullPointers) {
  float data[4] = {1, 2, 3, 4};
  float out[2];
  int64_t index = 0;
  auto step = makeStep(makeDesc({2, 2}, 4, 0, {}, true));
  ASSERT_TRUE(step);
  EXPECT_STATUS(step->run(data, nullptr, out), StatusCode::InvalidArgument,
                "gather step 'embed_0': null indices pointer");
  EXPECT_STATUS(step->run(nullptr, &index, out), StatusCode::InvalidArgument,
                "gather step 'embed_0': null data pointer");
  EXPECT_STATUS(step->run(data, &index, nullptr), StatusCode::InvalidArgument,
                "gather step 'embed_0': null output pointer");
}

TEST(GatherStep, BadDescs) {
  std::unique_ptr<GatherStep> step;
  EXPECT_STATUS(GatherStep::create(makeDesc({3, 4}, 4, 2, {1}, true), step),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': axis 2 is outside [0, 2) for data "
                "[3, 4]");
  EXPECT_STATUS(GatherStep::create(makeDesc({3, 4}, 4, -1, {1}, true), step),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': axis -1 is outside [0, 2) for data "
                "[3, 4]");
  EXPECT_STATUS(GatherStep::create(makeDesc({}, 4, 0, {1}, true), step),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': axis 0 is outside [0, 0) for data []");
  EXPECT_STATUS(GatherStep::create(makeDesc({3, -4}, 4, 0, {1}, true), step),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': data dims must be non-negative, got "
                "[3, -4]");
  EXPECT_STATUS(GatherStep::create(makeDesc({3, 4}, 4, 0, {2, -1}, true), step),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': indices dims must be non-negative, "
                "got [2, -1]");
  EXPECT_STATUS(GatherStep::create(makeDesc({3, 4}, 0, 0, {1}, true), step),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': element size must be positive, got 0");
  EXPECT_STATUS(GatherStep::create(
                    makeDesc({3, int64_t(1) << 62}, 4, 0, {1}, true), step),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': sizes overflow: data [3, "
                "4611686018427387904], indices [1], 4 bytes per element");
  EXPECT_FALSE(step);
}

namespace {

/// A row-quantized table of `rows` x `cols` int8 values covering the whole
/// range, one scale per row.
struct QuantizedTable {
  std::vector<int8_t> values;
  std::vector<float> scales;
};

QuantizedTable makeQuantizedTable(int64_t rows, int64_t cols) {
  QuantizedTable t;
  for (int64_t i = 0; i < rows * cols; ++i)
    t.values.push_back(int8_t((i * 37 + 11) % 255 - 127));
  for (int64_t r = 0; r < rows; ++r)
    t.scales.push_back(0.0123f * float(r + 1) + 1.0f / 3.0f);
  return t;
}

GatherStepDesc makeRowQuantizedDesc(int64_t rows, int64_t cols,
                                    std::vector<int64_t> indicesDims,
                                    bool indices64, bool avx512) {
  GatherStepDesc d =
      makeDesc({rows, cols}, 1, 0, std::move(indicesDims), indices64);
  d.rowScales = true;
  d.allowAvx512 = avx512;
  return d;
}

/// The rows of `indices` dequantized in double: q * scale is exact there
/// (8-bit by 24-bit significands), so its f32 rounding is the one correct
/// answer for the step's f32 product.
template <typename Index>
std::vector<float> expectedRows(const QuantizedTable &t, int64_t cols,
                                const std::vector<Index> &indices) {
  int64_t rows = int64_t(t.scales.size());
  std::vector<float> out;
  for (Index index : indices) {
    int64_t row = index < 0 ? int64_t(index) + rows : int64_t(index);
    for (int64_t c = 0; c < cols; ++c)
      out.push_back(float(double(t.values[size_t(row * cols + c)]) *
                          double(t.scales[size_t(row)])));
  }
  return out;
}

} // namespace

// Rows of 37 values: two full 16-lane blocks and a 5-value tail for the
// AVX-512 loop; the portable loop gives the same values.
TEST(GatherStep, RowQuantizedTable) {
  const int64_t rows = 6, cols = 37;
  QuantizedTable t = makeQuantizedTable(rows, cols);
  std::vector<int64_t> indices = {5, 0, -1, 2, -6, 3};
  std::vector<float> expected = expectedRows(t, cols, indices);
  for (bool avx512 : {true, false}) {
    auto step =
        makeStep(makeRowQuantizedDesc(rows, cols, {2, 3}, true, avx512));
    ASSERT_TRUE(step);
    std::vector<float> out(size_t(6 * cols), -1);
    ASSERT_TRUE(step->run(t.values.data(), indices.data(), out.data(),
                          t.scales.data()));
    EXPECT_EQ(out, expected) << (avx512 ? "avx512" : "portable");
  }
  // int32 indices, rows shorter than one vector.
  QuantizedTable small = makeQuantizedTable(3, 7);
  std::vector<int32_t> indices32 = {2, -3, 1};
  auto step32 = makeStep(makeRowQuantizedDesc(3, 7, {3}, false, true));
  ASSERT_TRUE(step32);
  std::vector<float> out32(21, -1);
  ASSERT_TRUE(step32->run(small.values.data(), indices32.data(), out32.data(),
                          small.scales.data()));
  EXPECT_EQ(out32, expectedRows(small, 7, indices32));
}

// Indices are checked before any row is dequantized; the scales are
// required and the table must be int8 rows along axis 0.
TEST(GatherStep, RowQuantizedErrors) {
  QuantizedTable t = makeQuantizedTable(3, 4);
  auto step = makeStep(makeRowQuantizedDesc(3, 4, {2}, true, true));
  ASSERT_TRUE(step);
  std::vector<float> out(8, -1);
  std::vector<int64_t> bad = {0, 3};
  EXPECT_STATUS(
      step->run(t.values.data(), bad.data(), out.data(), t.scales.data()),
      StatusCode::InvalidArgument,
      "gather step 'embed_0': index 3 at position [1] is out of "
      "range for axis 0 of size 3 (valid range [-3, 2])");
  EXPECT_EQ(out, std::vector<float>(8, -1));
  std::vector<int64_t> good = {0, 1};
  EXPECT_STATUS(step->run(t.values.data(), good.data(), out.data(), nullptr),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': null scales pointer");

  std::unique_ptr<GatherStep> created;
  GatherStepDesc wide = makeRowQuantizedDesc(3, 4, {2}, true, true);
  wide.elementSize = 4;
  EXPECT_STATUS(GatherStep::create(wide, created), StatusCode::InvalidArgument,
                "gather step 'embed_0': a row-quantized table must be int8 "
                "(1 byte per element) gathered along axis 0, got axis 0 and "
                "4 bytes per element");
  GatherStepDesc columns = makeRowQuantizedDesc(3, 4, {2}, true, true);
  columns.axis = 1;
  EXPECT_STATUS(GatherStep::create(columns, created),
                StatusCode::InvalidArgument,
                "gather step 'embed_0': a row-quantized table must be int8 "
                "(1 byte per element) gathered along axis 0, got axis 1 and "
                "1 bytes per element");
}
