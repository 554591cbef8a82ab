//===- LinearStepTest.cpp - LinearStep against NumPy ----------------------===//
//
// Expected values come from make_linear_fixtures.py (NumPy, float64). The
// inputs are regenerated here from the same counter hash, bit for bit; each
// fixture records the hash's seeds and scales, and a check of a few values
// against NumPy's guards the two generators from drifting apart.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/LinearStep.h"
#include "lmopt/Format/Float16.h"
#include "lmopt/Format/Npy.h"

#include "../../lib/Runtime/CPU/AmxGemm.h"
#include "TestUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

constexpr double kRtol = 1e-5;
constexpr double kAtol = 1e-5;

/// One fixture file: the shape, its generated inputs, and NumPy's outputs
/// for every case.
struct LinearFixture {
  int64_t m = 0, k = 0, n = 0;
  std::vector<float> input, weight, bias, residual;
  /// Per case: transpose, bias, activation, residual.
  std::vector<int64_t> cases;
  std::vector<int64_t> index;
  std::vector<double> want, rowsum;
  size_t caseCount() const { return cases.size() / 4; }
};

/// Loads (once) the fixture for M x K x N and generates its inputs.
const LinearFixture &fixture(const std::string &shape) {
  static std::map<std::string, std::unique_ptr<LinearFixture>> cache;
  std::unique_ptr<LinearFixture> &slot = cache[shape];
  if (slot)
    return *slot;
  slot = std::make_unique<LinearFixture>();
  LinearFixture &f = *slot;
  std::vector<NamedTensor> all;
  Status st = readNpz(inputPath("linear_" + shape + ".npz"), all);
  EXPECT_TRUE(st) << st.toString();
  std::vector<int64_t> dims = values<int64_t>(all, "dims");
  std::vector<int64_t> seeds = values<int64_t>(all, "seeds");
  std::vector<double> scales = values<double>(all, "scales");
  if (dims.size() != 3 || seeds.size() != 4 || scales.size() != 4) {
    ADD_FAILURE() << "fixture " << shape << " lacks dims, seeds or scales";
    return f;
  }
  f.m = dims[0];
  f.k = dims[1];
  f.n = dims[2];
  f.input = hashValues(uint32_t(seeds[0]), f.m * f.k, scales[0]);
  f.weight = hashValues(uint32_t(seeds[1]), f.k * f.n, scales[1]);
  f.bias = hashValues(uint32_t(seeds[2]), f.n, scales[2]);
  f.residual = hashValues(uint32_t(seeds[3]), f.m * f.n, scales[3]);
  f.cases = values<int64_t>(all, "cases");
  f.index = values<int64_t>(all, "index");
  f.want = values<double>(all, "want");
  f.rowsum = values<double>(all, "rowsum");
  EXPECT_EQ(f.want.size(), f.caseCount() * f.index.size());
  EXPECT_EQ(f.rowsum.size(), f.caseCount() * size_t(f.m));
  return f;
}

LinearStepDesc makeDesc(int64_t k, int64_t n, bool transpose, bool bias,
                        LinearActivation act, bool residual) {
  LinearStepDesc d;
  d.name = "dense_0";
  d.inputFeatures = k;
  d.weightShape =
      transpose ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  d.transposeWeight = transpose;
  d.hasBias = bias;
  d.activation = act;
  d.hasResidual = residual;
  return d;
}

/// Builds the step in either form: packed for exactly `rows` rows from
/// `weight`, or with `rows` as the bound of a run-time row count.
Status makeStep(const CpuContext &ctx, const LinearStepDesc &desc, int64_t rows,
                const std::vector<float> &weight, bool packed,
                std::unique_ptr<LinearStep> &step) {
  return packed ? LinearStep::createPacked(ctx, desc, rows, weight.data(), step)
                : LinearStep::create(ctx, desc, rows, step);
}

std::string formName(const ::testing::TestParamInfo<bool> &info) {
  return info.param ? "Packed" : "Plain";
}

const char *const kShapes[] = {"7x64x64", "1x768x768", "128x768x768",
                               "128x768x3072", "128x3072x768"};
constexpr int kCaseCount = 32;

class LinearStepNumpy
    : public ::testing::TestWithParam<std::tuple<const char *, int, bool>> {};

/// Tests run in both forms of the step (packed weights or not).
class LinearStepForms : public ::testing::TestWithParam<bool> {};

} // namespace

// The generator itself, against what NumPy printed for
// [float(v).hex() for v in hash_values(1, 3, 6.0)].
TEST(LinearStepFixtures, HashMatchesNumpy) {
  std::vector<float> v = hashValues(1, 3, 6.0);
  EXPECT_EQ(v[0], -0x1.4d77ep-1f);
  EXPECT_EQ(v[1], 0x1.9a0af6p-1f);
  EXPECT_EQ(v[2], -0x1.2ff3f6p+0f);
}

TEST_P(LinearStepNumpy, MatchesNumpy) {
  const LinearFixture &f = fixture(std::get<0>(GetParam()));
  size_t c = size_t(std::get<1>(GetParam()));
  bool packed = std::get<2>(GetParam());
  ASSERT_EQ(f.caseCount(), size_t(kCaseCount));
  const int64_t *cs = &f.cases[4 * c];
  bool transpose = cs[0], hasBias = cs[1], hasResidual = cs[3];
  auto act = static_cast<LinearActivation>(cs[2]);
  SCOPED_TRACE(::testing::Message()
               << f.m << "x" << f.k << "x" << f.n << " transpose=" << transpose
               << " bias=" << hasBias << " act=" << linearActivationName(act)
               << " residual=" << hasResidual << " packed=" << packed);

  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  std::unique_ptr<LinearStep> step;
  // Unpacked, the bound is above the rows run, as in a plan compiled for a
  // maximum; packed, the rows are exact.
  Status st =
      makeStep(*ctx, makeDesc(f.k, f.n, transpose, hasBias, act, hasResidual),
               packed ? f.m : f.m + 3, f.weight, packed, step);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(step->packed(), packed);
  ASSERT_NE(step->implementation().rfind("ref", 0), 0u)
      << step->implementation();

  std::vector<float> out(size_t(f.m * f.n), NAN);
  // A packed step does not read the weight it is passed.
  st = step->run(f.input.data(), f.m, packed ? nullptr : f.weight.data(),
                 hasBias ? f.bias.data() : nullptr,
                 hasResidual ? f.residual.data() : nullptr, out.data());
  ASSERT_TRUE(st) << st.toString();

  const double *want = &f.want[c * f.index.size()];
  int bad = 0;
  double worst = 0;
  for (size_t i = 0; i < f.index.size(); ++i) {
    double got = out[size_t(f.index[i])];
    double err = std::fabs(got - want[i]);
    worst = std::max(worst, err / (kAtol + kRtol * std::fabs(want[i])));
    if (!(err <= kAtol + kRtol * std::fabs(want[i])) && bad++ < 5)
      ADD_FAILURE() << "element " << f.index[i] << ": got " << got << ", numpy "
                    << want[i];
  }
  EXPECT_EQ(bad, 0) << "worst error / tolerance " << worst;
  RecordProperty("worst_error_over_tolerance", std::to_string(worst));

  // Row sums cover the elements the samples skip.
  const double *rowsum = &f.rowsum[c * size_t(f.m)];
  for (int64_t r = 0; r < f.m; ++r) {
    double sum = 0, mag = 0;
    for (int64_t j = 0; j < f.n; ++j) {
      sum += out[size_t(r * f.n + j)];
      mag += std::fabs(out[size_t(r * f.n + j)]);
    }
    EXPECT_LE(std::fabs(sum - rowsum[r]), kAtol * double(f.n) + kRtol * mag)
        << "row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllCases, LinearStepNumpy,
    ::testing::Combine(::testing::ValuesIn(kShapes),
                       ::testing::Range(0, kCaseCount), ::testing::Bool()),
    [](const ::testing::TestParamInfo<LinearStepNumpy::ParamType> &info) {
      return std::string(std::get<0>(info.param)) + "_case" +
             std::to_string(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_packed" : "");
    });

// Fewer rows than the bound, through the same primitive: a prefix of the
// full run's output.
TEST(LinearStep, RowsBelowBoundArePrefix) {
  const LinearFixture &f = fixture("7x64x64");
  std::unique_ptr<CpuContext> ctx = makeContext(1);
  ASSERT_TRUE(ctx);
  std::unique_ptr<LinearStep> step;
  ASSERT_TRUE(LinearStep::create(
      *ctx, makeDesc(f.k, f.n, true, true, LinearActivation::Gelu, true), f.m,
      step));
  // Case 1*16 + 1*8 + 2*2 + 1: transpose, bias, gelu, residual.
  size_t c = 16 + 8 + 4 + 1;
  ASSERT_EQ(std::vector<int64_t>(&f.cases[4 * c], &f.cases[4 * c + 4]),
            (std::vector<int64_t>{1, 1, 2, 1}));
  for (int64_t rows : {1, 3, 7}) {
    std::vector<float> out(size_t(rows * f.n));
    ASSERT_TRUE(step->run(f.input.data(), rows, f.weight.data(), f.bias.data(),
                          f.residual.data(), out.data()));
    for (int64_t i = 0; i < rows * f.n; ++i)
      ASSERT_NEAR(out[size_t(i)], f.want[c * f.index.size() + size_t(i)],
                  kAtol +
                      kRtol * std::fabs(f.want[c * f.index.size() + size_t(i)]))
          << "rows " << rows << " element " << i;
  }
  // Zero rows (an empty batch) writes nothing and succeeds.
  float untouched = 42;
  EXPECT_TRUE(step->run(f.input.data(), 0, f.weight.data(), f.bias.data(),
                        f.residual.data(), &untouched));
  EXPECT_EQ(untouched, 42);
}

// The residual may be the output buffer itself, both when a post-op adds it
// and when the step adds it after the primitive (with an activation).
TEST_P(LinearStepForms, InPlaceResidual) {
  const LinearFixture &f = fixture("7x64x64");
  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  for (size_t c = 0; c < f.caseCount(); ++c) {
    const int64_t *cs = &f.cases[4 * c];
    if (!cs[3])
      continue;
    auto act = static_cast<LinearActivation>(cs[2]);
    SCOPED_TRACE(::testing::Message() << "case " << c);
    std::unique_ptr<LinearStep> step;
    ASSERT_TRUE(makeStep(*ctx, makeDesc(f.k, f.n, cs[0], cs[1], act, true), f.m,
                         f.weight, GetParam(), step));
    std::vector<float> out = f.residual;
    ASSERT_TRUE(step->run(f.input.data(), f.m, f.weight.data(),
                          cs[1] ? f.bias.data() : nullptr, out.data(),
                          out.data()));
    for (size_t i = 0; i < out.size(); ++i) {
      double want = f.want[c * f.index.size() + i];
      ASSERT_NEAR(out[i], want, kAtol + kRtol * std::fabs(want))
          << "element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothForms, LinearStepForms, ::testing::Bool(),
                         formName);

// A packed step reads its own copy: the caller's weight can change or go
// away after creation, and the weight passed to run() is not read.
TEST(LinearStep, PackedWeightIsACopy) {
  const LinearFixture &f = fixture("7x64x64");
  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  // Case 1*16 + 1*8 + 2*2 + 1: transpose, bias, gelu, residual.
  size_t c = 16 + 8 + 4 + 1;
  ASSERT_EQ(std::vector<int64_t>(&f.cases[4 * c], &f.cases[4 * c + 4]),
            (std::vector<int64_t>{1, 1, 2, 1}));
  std::vector<float> weight = f.weight;
  std::unique_ptr<LinearStep> step;
  ASSERT_TRUE(LinearStep::createPacked(
      *ctx, makeDesc(f.k, f.n, true, true, LinearActivation::Gelu, true), f.m,
      weight.data(), step));
  EXPECT_TRUE(step->packed());
  EXPECT_GE(step->packedBytes(), uint64_t(f.k * f.n) * sizeof(float));
  std::fill(weight.begin(), weight.end(), NAN);
  std::vector<float> out(size_t(f.m * f.n));
  ASSERT_TRUE(step->run(f.input.data(), f.m, weight.data(), f.bias.data(),
                        f.residual.data(), out.data()));
  for (size_t i = 0; i < out.size(); ++i) {
    double want = f.want[c * f.index.size() + i];
    ASSERT_NEAR(out[i], want, kAtol + kRtol * std::fabs(want))
        << "element " << i;
  }
}

// Packed, the primitive is built for one row count: fewer rows are refused
// (zero rows still run as a no-op).
TEST(LinearStep, PackedRowsAreExact) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  std::vector<float> in(9 * 4), w(8), out(9 * 2);
  std::unique_ptr<LinearStep> step;
  ASSERT_TRUE(LinearStep::createPacked(
      *ctx, makeDesc(4, 2, false, false, LinearActivation::None, false), 8,
      w.data(), step));
  EXPECT_STATUS(
      step->run(in.data(), 3, nullptr, nullptr, nullptr, out.data()),
      StatusCode::InvalidArgument,
      "linear step 'dense_0': 3 rows, but the step was built with packed "
      "weights for exactly 8");
  EXPECT_STATUS(step->run(in.data(), 9, nullptr, nullptr, nullptr, out.data()),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': 9 rows is outside the bound [0, 8] "
                "the step was created for");
  EXPECT_STATUS(step->run(in.data(), 8, nullptr, nullptr, nullptr, nullptr),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': null output pointer");
  float untouched = 42;
  EXPECT_TRUE(step->run(in.data(), 0, nullptr, nullptr, nullptr, &untouched));
  EXPECT_EQ(untouched, 42);
}

// A weight gradient x^T dy: the input stored [K, M] is read through its
// strides. Small integers keep every product and sum exact in f32, so the
// step must give the integer reference exactly, in both weight layouts.
TEST(LinearStep, TransposedInputReadsStrides) {
  std::unique_ptr<CpuContext> ctx = makeContext(2);
  const int64_t m = 24, k = 40, n = 16;
  std::vector<float> xt(size_t(k * m)), w(size_t(k * n)), b(static_cast<size_t>(n));
  for (size_t i = 0; i < xt.size(); ++i)
    xt[i] = float(int64_t(i * 7 % 9) - 4);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(int64_t(i * 5 % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(int64_t(i % 5) - 2);
  for (bool transposeWeight : {false, true}) {
    // w as the step stores it: [K, N], or [N, K] transposed.
    std::vector<float> stored(w.size());
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c)
        stored[size_t(transposeWeight ? c * k + r : r * n + c)] =
            w[size_t(r * n + c)];
    LinearStepDesc d = makeDesc(k, n, transposeWeight, true,
                                LinearActivation::None, false);
    d.transposeInput = true;
    std::unique_ptr<LinearStep> step;
    ASSERT_TRUE(LinearStep::create(*ctx, d, m, step));
    std::vector<float> out(size_t(m * n), -1.0f);
    ASSERT_TRUE(step->run(xt.data(), m, stored.data(), b.data(), nullptr,
                          out.data()));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t want = int64_t(b[size_t(j)]);
        for (int64_t c = 0; c < k; ++c)
          want += int64_t(xt[size_t(c * m + i)]) * int64_t(w[size_t(c * n + j)]);
        ASSERT_EQ(out[size_t(i * n + j)], float(want))
            << "row " << i << " column " << j
            << (transposeWeight ? " (transposed weight)" : "");
      }
    // The row stride is the row count: another count is refused.
    EXPECT_STATUS(step->run(xt.data(), m - 1, stored.data(), b.data(),
                            nullptr, out.data()),
                  StatusCode::InvalidArgument,
                  "linear step 'dense_0': 23 rows, but the step was built "
                  "to read its input transposed for exactly 24");
  }
}

TEST(LinearStep, PackedNeedsWeight) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  std::unique_ptr<LinearStep> step;
  EXPECT_STATUS(LinearStep::createPacked(
                    *ctx,
                    makeDesc(4, 2, false, false, LinearActivation::None, false),
                    8, nullptr, step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': null weight pointer to pack");
  std::vector<float> w(8);
  LinearStepDesc d =
      makeDesc(4, 2, false, false, LinearActivation::None, false);
  d.inputFeatures = 3;
  EXPECT_STATUS(LinearStep::createPacked(*ctx, d, 8, w.data(), step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': input has 3 features but weight "
                "[4, 2] ([K, N]) has K = 4");
  EXPECT_FALSE(step);
}

TEST(LinearStep, RowsAboveBound) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  std::unique_ptr<LinearStep> step;
  ASSERT_TRUE(LinearStep::create(
      *ctx, makeDesc(4, 2, false, false, LinearActivation::None, false), 8,
      step));
  std::vector<float> in(9 * 4), w(8), out(9 * 2);
  EXPECT_STATUS(step->run(in.data(), 9, w.data(), nullptr, nullptr, out.data()),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': 9 rows is outside the bound [0, 8] "
                "the step was created for");
  EXPECT_STATUS(
      step->run(in.data(), -1, w.data(), nullptr, nullptr, out.data()),
      StatusCode::InvalidArgument,
      "linear step 'dense_0': -1 rows is outside the bound [0, 8] "
      "the step was created for");
}

TEST(LinearStep, FeatureMismatch) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  std::unique_ptr<LinearStep> step;
  LinearStepDesc d =
      makeDesc(64, 32, false, false, LinearActivation::None, false);
  d.inputFeatures = 48;
  EXPECT_STATUS(LinearStep::create(*ctx, d, 8, step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': input has 48 features but weight "
                "[64, 32] ([K, N]) has K = 64");
  d.transposeWeight = true;
  EXPECT_STATUS(LinearStep::create(*ctx, d, 8, step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': input has 48 features but weight "
                "[64, 32] (transposed, [N, K]) has K = 32");
  EXPECT_FALSE(step);
}

TEST(LinearStep, BadDescs) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  std::unique_ptr<LinearStep> step;
  LinearStepDesc d =
      makeDesc(4, 2, false, false, LinearActivation::None, false);
  d.weightShape = {4, 2, 1};
  EXPECT_STATUS(LinearStep::create(*ctx, d, 8, step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': weight must have rank 2, got shape "
                "[4, 2, 1]");
  d.weightShape = {4, 0};
  EXPECT_STATUS(LinearStep::create(*ctx, d, 8, step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': dims must be positive, got input "
                "features 4 and weight [4, 0]");
  d.weightShape = {4, 2};
  EXPECT_STATUS(LinearStep::create(*ctx, d, 0, step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': row bound must be positive, got 0");
  d.activation = static_cast<LinearActivation>(7);
  EXPECT_STATUS(LinearStep::create(*ctx, d, 8, step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': unknown activation 7");
  d = makeDesc(int64_t(1) << 40, int64_t(1) << 40, false, false,
               LinearActivation::None, false);
  EXPECT_STATUS(LinearStep::create(*ctx, d, 8, step),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': sizes overflow: 8 rows, K = "
                "1099511627776, N = 1099511627776");
  EXPECT_FALSE(step);
}

TEST(LinearStep, OperandsMatchDesc) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  std::unique_ptr<LinearStep> withBias, plain;
  ASSERT_TRUE(LinearStep::create(
      *ctx, makeDesc(4, 2, false, true, LinearActivation::Relu, true), 8,
      withBias));
  ASSERT_TRUE(LinearStep::create(
      *ctx, makeDesc(4, 2, false, false, LinearActivation::None, false), 8,
      plain));
  std::vector<float> in(8 * 4), w(8), b(2), r(8 * 2), out(8 * 2);
  EXPECT_STATUS(
      withBias->run(in.data(), 8, w.data(), nullptr, r.data(), out.data()),
      StatusCode::InvalidArgument,
      "linear step 'dense_0': has a bias but none was passed");
  EXPECT_STATUS(
      withBias->run(in.data(), 8, w.data(), b.data(), nullptr, out.data()),
      StatusCode::InvalidArgument,
      "linear step 'dense_0': has a residual but none was passed");
  EXPECT_STATUS(
      plain->run(in.data(), 8, w.data(), b.data(), nullptr, out.data()),
      StatusCode::InvalidArgument,
      "linear step 'dense_0': has no bias but one was passed");
  EXPECT_STATUS(plain->run(nullptr, 8, w.data(), nullptr, nullptr, out.data()),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': null input pointer");
  EXPECT_STATUS(withBias->run(in.data(), 8, w.data(), b.data(), out.data() + 4,
                              out.data()),
                StatusCode::InvalidArgument,
                "linear step 'dense_0': residual partially overlaps the "
                "output (8 x 2 f32)");
}

TEST(LinearStep, NegativeThreads) {
  std::unique_ptr<CpuContext> ctx;
  EXPECT_STATUS(CpuContext::create({-2}, ctx), StatusCode::InvalidArgument,
                "cpu context: thread count -2 is negative (0 keeps the "
                "default)");
  EXPECT_FALSE(ctx);
}

// bf16 operands into f32 (mixed-precision training): on values bf16 holds
// exactly (multiples of 1/8 in [-1, 1]) every product and partial sum is
// exact in f32, so the step must give the integer reference exactly, in
// every epilogue form and weight layout.
TEST(LinearStepBf16, ExactOnBf16Values) {
  const int64_t m = 37, k = 768, n = 96;
  auto eighths = [](int64_t i, uint32_t salt) {
    return int64_t((uint32_t(i) * 2654435761u ^ salt) % 17u) - 8;
  };
  std::vector<int64_t> a(size_t(m * k)), w(size_t(k * n)), b(static_cast<size_t>(n)),
      r(size_t(m * n));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = eighths(int64_t(i), 11);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = eighths(int64_t(i), 23);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = eighths(int64_t(i), 37);
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = eighths(int64_t(i), 41);
  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  for (bool transpose : {false, true})
    for (bool hasBias : {false, true})
      for (bool hasResidual : {false, true})
        for (auto act : {LinearActivation::None, LinearActivation::Relu}) {
          SCOPED_TRACE(::testing::Message()
                       << "transpose=" << transpose << " bias=" << hasBias
                       << " residual=" << hasResidual
                       << " act=" << linearActivationName(act));
          std::vector<uint16_t> input(a.size()), weight(w.size());
          for (size_t i = 0; i < a.size(); ++i)
            input[i] = floatToBFloat16(float(a[i]) / 8);
          // The weight as stored: [K, N], or [N, K] when transposed.
          for (int64_t kk = 0; kk < k; ++kk)
            for (int64_t j = 0; j < n; ++j)
              weight[size_t(transpose ? j * k + kk : kk * n + j)] =
                  floatToBFloat16(float(w[size_t(kk * n + j)]) / 8);
          std::vector<float> bias(b.size()), residual(r.size());
          for (size_t i = 0; i < b.size(); ++i)
            bias[i] = float(b[i]) / 8;
          for (size_t i = 0; i < r.size(); ++i)
            residual[i] = float(r[i]) / 8;
          LinearStepDesc desc =
              makeDesc(k, n, transpose, hasBias, act, hasResidual);
          desc.bf16Operands = true;
          std::unique_ptr<LinearStep> step;
          Status st = LinearStep::create(*ctx, desc, m + 5, step);
          ASSERT_TRUE(st) << st.toString();
          EXPECT_NE(step->implementation().rfind("ref", 0), 0u)
              << step->implementation();
          std::vector<float> out(size_t(m * n), NAN);
          st = step->run(input.data(), m, weight.data(),
                         hasBias ? bias.data() : nullptr,
                         hasResidual ? residual.data() : nullptr, out.data());
          ASSERT_TRUE(st) << st.toString();
          int bad = 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              // In 64ths: the product, the bias and residual scaled up.
              int64_t sum = 0;
              for (int64_t kk = 0; kk < k; ++kk)
                sum += a[size_t(i * k + kk)] * w[size_t(kk * n + j)];
              if (hasBias)
                sum += 8 * b[size_t(j)];
              if (act == LinearActivation::Relu)
                sum = std::max<int64_t>(sum, 0);
              if (hasResidual)
                sum += 8 * r[size_t(i * n + j)];
              float want = float(double(sum) / 64);
              if (out[size_t(i * n + j)] != want && bad++ < 5)
                ADD_FAILURE() << "element " << i << "," << j << ": got "
                              << out[size_t(i * n + j)] << ", want " << want;
            }
          EXPECT_EQ(bad, 0);
        }
}

// The weight-gradient form x^T dy in bf16 (input stored [K, rows]), with a
// K that is not a multiple of the AMX tile step and fewer rows than a
// 32-row block multiple, on the values bf16 and f32 hold exactly; the
// step's kernel (AMX tiles where the CPU has them, oneDNN otherwise) must
// give the integer reference exactly. With AMX the step names its kernel.
TEST(LinearStepBf16, TransposedInputExact) {
  const int64_t m = 45, k = 40, n = 70;
  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  auto value = [](int64_t i, uint32_t salt) {
    return int64_t((uint32_t(i) * 2654435761u ^ salt) % 13u) - 6;
  };
  std::vector<uint16_t> xt(size_t(k * m)), w(size_t(k * n));
  for (size_t i = 0; i < xt.size(); ++i)
    xt[i] = floatToBFloat16(float(value(int64_t(i), 5)));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = floatToBFloat16(float(value(int64_t(i), 9)));
  std::vector<float> bias(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j)
    bias[size_t(j)] = float(j % 7 - 3);
  for (bool transposeWeight : {false, true}) {
    SCOPED_TRACE(transposeWeight ? "weight [N, K]" : "weight [K, N]");
    // w is [K, N]; stored transposed when asked.
    std::vector<uint16_t> stored(w.size());
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c)
        stored[size_t(transposeWeight ? c * k + r : r * n + c)] =
            w[size_t(r * n + c)];
    LinearStepDesc d =
        makeDesc(k, n, transposeWeight, true, LinearActivation::Relu, false);
    d.transposeInput = true;
    d.bf16Operands = true;
    std::unique_ptr<LinearStep> step;
    Status st = LinearStep::create(*ctx, d, m, step);
    ASSERT_TRUE(st) << st.toString();
    if (quant::amxBf16Usable()) {
      EXPECT_EQ(step->implementation(), "lmopt:amx_bf16");
    }
    std::vector<float> out(size_t(m * n), -1.0f);
    st = step->run(xt.data(), m, stored.data(), bias.data(), nullptr,
                   out.data());
    ASSERT_TRUE(st) << st.toString();
    int bad = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t want = int64_t(bias[size_t(j)]);
        for (int64_t c = 0; c < k; ++c)
          want += value(c * m + i, 5) * value(c * n + j, 9);
        want = std::max<int64_t>(want, 0);
        if (out[size_t(i * n + j)] != float(want) && bad++ < 5)
          ADD_FAILURE() << "row " << i << " column " << j << ": got "
                        << out[size_t(i * n + j)] << ", want " << want;
      }
    EXPECT_EQ(bad, 0);
  }
}

// A bf16 step packs no weight: packing reorders f32 weights only.
TEST(LinearStepBf16, RefusesPacking) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  LinearStepDesc desc =
      makeDesc(8, 4, false, false, LinearActivation::None, false);
  desc.bf16Operands = true;
  std::vector<float> weight(32, 1.0f);
  std::unique_ptr<LinearStep> step;
  Status st = LinearStep::createPacked(*ctx, desc, 4, weight.data(), step);
  ASSERT_FALSE(st);
  EXPECT_NE(st.toString().find("packs f32 weights only"), std::string::npos)
      << st.toString();
}
