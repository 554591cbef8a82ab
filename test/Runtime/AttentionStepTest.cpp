//===- AttentionStepTest.cpp - AttentionStep against NumPy ----------------===//
//
// Expected values come from make_attention_fixtures.py (NumPy, float64, with
// the reference evaluator's rules for hidden keys and masked rows). Query,
// key and value are regenerated here from fixture_util.py's counter
// hash, bit for bit; masks are stored in the fixtures. Each case runs with 1,
// 2 and 3 threads, which also changes how query rows are split into work
// items when there are fewer (batch, head) pairs than threads.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/AttentionStep.h"
#include "lmopt/Format/Float16.h"
#include "lmopt/Format/Npy.h"

#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

constexpr double kRtol = 1e-5;
constexpr double kAtol = 1e-5;

/// One fixture: the case's desc, its generated inputs, NumPy's outputs.
struct AttentionFixture {
  AttentionStepDesc desc;
  std::vector<float> query, key, value, additiveMask, bias;
  std::vector<uint8_t> boolMask;
  std::vector<int64_t> index;
  std::vector<double> want, rowsum;
  const void *mask() const {
    if (desc.mask == AttentionMask::Additive)
      return additiveMask.data();
    if (desc.mask == AttentionMask::Bool)
      return boolMask.data();
    return nullptr;
  }
  const float *scoreBias() const {
    return desc.scoreBias ? bias.data() : nullptr;
  }
  int64_t rows() const { return desc.batch * desc.queryLength; }
  int64_t width() const { return desc.numHeads * desc.headDim; }
};

/// Loads (once) attention_<name>.npz and generates its inputs.
const AttentionFixture &fixture(const std::string &name) {
  static std::map<std::string, std::unique_ptr<AttentionFixture>> cache;
  std::unique_ptr<AttentionFixture> &slot = cache[name];
  if (slot)
    return *slot;
  slot = std::make_unique<AttentionFixture>();
  AttentionFixture &f = *slot;
  std::vector<NamedTensor> all;
  Status st = readNpz(inputPath("attention_" + name + ".npz"), all);
  EXPECT_TRUE(st) << st.toString();
  std::vector<int64_t> dims = values<int64_t>(all, "dims");
  std::vector<int64_t> flags = values<int64_t>(all, "flags");
  std::vector<float> scale = values<float>(all, "scale");
  std::vector<int64_t> seeds = values<int64_t>(all, "seeds");
  std::vector<double> scales = values<double>(all, "scales");
  if (dims.size() != 5 || flags.size() != 4 || scale.size() != 1 ||
      seeds.size() != 3 || scales.size() != 3) {
    ADD_FAILURE() << "fixture " << name << " lacks dims, flags or seeds";
    return f;
  }
  AttentionStepDesc &d = f.desc;
  d.name = "attn_" + name;
  d.batch = dims[0];
  d.numHeads = dims[1];
  d.queryLength = dims[2];
  d.keyLength = dims[3];
  d.headDim = dims[4];
  d.scale = scale[0];
  d.causal = flags[0];
  d.kvHeadsSplit = flags[1];
  d.zeroMaskedRows = flags[2];
  d.mask = static_cast<AttentionMask>(flags[3]);
  // Grouped-query cases name their key/value heads.
  if (member(all, "kv_heads"))
    d.numKvHeads = values<int64_t>(all, "kv_heads").at(0);
  if (const Tensor *mask = member(all, "mask")) {
    d.maskDims = mask->shape;
    if (d.mask == AttentionMask::Additive)
      f.additiveMask = values<float>(all, "mask");
    else
      f.boolMask = values<uint8_t>(all, "mask");
  }
  if (const Tensor *bias = member(all, "bias")) {
    d.scoreBias = true;
    d.biasDims = bias->shape;
    f.bias = values<float>(all, "bias");
  }
  int64_t qCount = f.rows() * f.width();
  int64_t kvCount = d.batch * d.keyLength *
                    (d.numKvHeads ? d.numKvHeads : d.numHeads) * d.headDim;
  f.query = hashValues(uint32_t(seeds[0]), qCount, scales[0]);
  f.key = hashValues(uint32_t(seeds[1]), kvCount, scales[1]);
  f.value = hashValues(uint32_t(seeds[2]), kvCount, scales[2]);
  f.index = values<int64_t>(all, "index");
  f.want = values<double>(all, "want");
  f.rowsum = values<double>(all, "rowsum");
  EXPECT_EQ(f.want.size(), f.index.size());
  EXPECT_EQ(f.rowsum.size(), size_t(f.rows()));
  return f;
}

/// Checks `out` against the fixture's samples (NaN where NumPy has NaN) and
/// row sums.
void expectMatches(const AttentionFixture &f, const std::vector<float> &out,
                   double kAtol = ::kAtol, double kRtol = ::kRtol) {
  int bad = 0;
  double worst = 0;
  for (size_t i = 0; i < f.index.size(); ++i) {
    double got = out[size_t(f.index[i])], want = f.want[i];
    if (std::isnan(want)) {
      if (!std::isnan(got) && bad++ < 5)
        ADD_FAILURE() << "element " << f.index[i] << ": got " << got
                      << ", numpy NaN";
      continue;
    }
    double err = std::fabs(got - want);
    worst = std::max(worst, err / (kAtol + kRtol * std::fabs(want)));
    if (!(err <= kAtol + kRtol * std::fabs(want)) && bad++ < 5)
      ADD_FAILURE() << "element " << f.index[i] << ": got " << got << ", numpy "
                    << want;
  }
  EXPECT_EQ(bad, 0) << "worst error / tolerance " << worst;
  ::testing::Test::RecordProperty("worst_error_over_tolerance",
                                  std::to_string(worst));
  const int64_t width = f.width();
  for (int64_t r = 0; r < f.rows(); ++r) {
    double sum = 0, mag = 0;
    for (int64_t j = 0; j < width; ++j) {
      sum += out[size_t(r * width + j)];
      mag += std::fabs(out[size_t(r * width + j)]);
    }
    if (std::isnan(f.rowsum[size_t(r)]))
      EXPECT_TRUE(std::isnan(sum)) << "row " << r;
    else
      EXPECT_LE(std::fabs(sum - f.rowsum[size_t(r)]),
                kAtol * double(width) + kRtol * mag)
          << "row " << r;
  }
}

const char *const kCases[] = {"plain",
                              "scale",
                              "additive_b11k",
                              "additive_2d",
                              "bool_bqk",
                              "bool_rows",
                              "causal_square",
                              "causal_shorter",
                              "kv_split",
                              "kv_split_causal",
                              "masked_rows_zero",
                              "masked_rows_eval",
                              "causal_longer_zero",
                              "causal_longer_eval",
                              "neginf_rows_zero",
                              "neginf_rows_eval",
                              "bert_b1",
                              "bert_b8",
                              "gpt2_b1",
                              "tile_edges",
                              "tile_edges_split",
                              "gqa_causal",
                              "gqa_split_decode",
                              "gqa_one_kv_head",
                              "bias_t5",
                              "bias_mpnet",
                              "bias_keys_causal",
                              "bias_neginf_rows_zero"};

class AttentionStepNumpy
    : public ::testing::TestWithParam<std::tuple<const char *, int>> {};

AttentionStepDesc smallDesc() {
  AttentionStepDesc d;
  d.name = "attn_0";
  d.batch = 2;
  d.numHeads = 3;
  d.queryLength = 5;
  d.keyLength = 7;
  d.headDim = 4;
  d.scale = 0.5f;
  return d;
}

} // namespace

// The generator itself, against what NumPy printed for
// [float(v).hex() for v in hash_values(11, 3, 3.0)].
TEST(AttentionStepFixtures, HashMatchesNumpy) {
  std::vector<float> v = hashValues(11, 3, 3.0);
  EXPECT_EQ(v[0], 0x1.4430aap-2f);
  EXPECT_EQ(v[1], -0x1.6210c8p+0f);
  EXPECT_EQ(v[2], -0x1.8d1c1ap-3f);
}

TEST_P(AttentionStepNumpy, MatchesNumpy) {
  const AttentionFixture &f = fixture(std::get<0>(GetParam()));
  int threads = std::get<1>(GetParam());
  ASSERT_GT(f.rows(), 0);
  std::unique_ptr<CpuContext> ctx = makeContext(threads);
  ASSERT_TRUE(ctx);
  std::unique_ptr<AttentionStep> step;
  Status st = AttentionStep::create(*ctx, f.desc, step);
  ASSERT_TRUE(st) << st.toString();
  std::vector<float> out(size_t(f.rows() * f.width()), 12345.0f);
  st = step->run(f.query.data(), f.key.data(), f.value.data(), f.mask(),
                 out.data(), f.scoreBias());
  ASSERT_TRUE(st) << st.toString();
  expectMatches(f, out);
}

INSTANTIATE_TEST_SUITE_P(
    AllCases, AttentionStepNumpy,
    ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Values(1, 2, 3)),
    [](const ::testing::TestParamInfo<AttentionStepNumpy::ParamType> &info) {
      return std::string(std::get<0>(info.param)) + "_threads" +
             std::to_string(std::get<1>(info.param));
    });

// bf16 products (--quantize=bf16): where the CPU has AMX-BF16 and D and Sk
// are multiples of 32, Q K^T and P V run on bf16 tiles and the outputs stay
// within bf16's error of NumPy's float64; elsewhere the step runs its f32
// products and matches as tightly as without the flag.
class AttentionStepBf16Products
    : public ::testing::TestWithParam<std::tuple<const char *, int>> {};

TEST_P(AttentionStepBf16Products, MatchesNumpy) {
  const AttentionFixture &f = fixture(std::get<0>(GetParam()));
  std::unique_ptr<CpuContext> ctx = makeContext(std::get<1>(GetParam()));
  ASSERT_TRUE(ctx);
  AttentionStepDesc desc = f.desc;
  desc.bf16Products = true;
  std::unique_ptr<AttentionStep> step;
  Status st = AttentionStep::create(*ctx, desc, step);
  ASSERT_TRUE(st) << st.toString();
  const bool fits = desc.headDim % 32 == 0 && desc.keyLength % 32 == 0;
  if (fits && !step->usesAmx())
    GTEST_SKIP() << "this CPU has no AMX-BF16 and AVX512-BF16: the f32 "
                    "products ran instead (covered by AttentionStepNumpy)";
  EXPECT_EQ(step->usesAmx(), fits);
  std::vector<float> out(size_t(f.rows() * f.width()), 12345.0f);
  st = step->run(f.query.data(), f.key.data(), f.value.data(), f.mask(),
                 out.data(), f.scoreBias());
  ASSERT_TRUE(st) << st.toString();
  if (!fits) {
    expectMatches(f, out);
    return;
  }
  // Q and K (|x| <= 3) and V (|v| <= 2) rounded to bf16 (relative error
  // 2^-9 each) move a score (scale 1/8 over D = 64 terms, or 1/sqrt(32)
  // over 32) by about sqrt(D) * 3 * 2^-9 / sqrt(D) ~ 6e-3 typically, so a
  // probability by under 1% of itself, and P rounded to bf16 adds 2^-9; an
  // output is a convex mix of values of magnitude <= 2. 1e-2 absolute plus
  // 1e-2 relative holds that with a margin, while a bug (a wrong key, a
  // missing scale, a stale tile) moves outputs by O(1).
  expectMatches(f, out, 1e-2, 1e-2);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttentionStepBf16Products,
    ::testing::Combine(::testing::Values("bert_b1", "bert_b8", "gpt2_b1",
                                         "tile_edges", "tile_edges_split",
                                         "plain", "bool_bqk", "gqa_causal",
                                         "bias_t5", "masked_rows_zero",
                                         "neginf_rows_eval"),
                       ::testing::Values(1, 2)),
    [](const ::testing::TestParamInfo<AttentionStepBf16Products::ParamType>
           &info) {
      return std::string(std::get<0>(info.param)) + "_threads" +
             std::to_string(std::get<1>(info.param));
    });

// With outputStatic (the plan's fusion of the quantize kernel that read
// the output), the step writes the bytes QuantizeLinear gives for its own
// f32 output: bf16 products on AMX and f32 ones, u8 and i8, rows that the
// mask empties (zeros, or NaN, which quantizes to 0) included, 1 and 2
// threads.
class AttentionStepStaticOutput
    : public ::testing::TestWithParam<std::tuple<const char *, int>> {};

/// `desc`, fixture `f`'s with `bf16Products`, its f32 step and the step's
/// output on `f`: what a step with a narrowed output is checked against.
static void runWide(const AttentionFixture &f, const CpuContext &ctx,
                    bool bf16Products, AttentionStepDesc &desc,
                    std::unique_ptr<AttentionStep> &wide,
                    std::vector<float> &want) {
  desc = f.desc;
  desc.bf16Products = bf16Products;
  ASSERT_TRUE(AttentionStep::create(ctx, desc, wide));
  want.assign(size_t(f.rows() * f.width()), 0.0f);
  ASSERT_TRUE(wide->run(f.query.data(), f.key.data(), f.value.data(), f.mask(),
                        want.data(), f.scoreBias()));
}

/// The step of `desc` (a narrowed output) on fixture `f` into `got` (as
/// many elements as `wide` wrote, first set to `fill`), on the products
/// `wide` used.
template <typename T>
static void runNarrow(const AttentionFixture &f, const CpuContext &ctx,
                      const AttentionStepDesc &desc, const AttentionStep &wide,
                      std::vector<T> &got, T fill) {
  std::unique_ptr<AttentionStep> narrow;
  ASSERT_TRUE(AttentionStep::create(ctx, desc, narrow));
  EXPECT_EQ(narrow->usesAmx(), wide.usesAmx());
  got.assign(size_t(f.rows() * f.width()), fill);
  ASSERT_TRUE(narrow->run(f.query.data(), f.key.data(), f.value.data(),
                          f.mask(), got.data(), f.scoreBias()));
}

TEST_P(AttentionStepStaticOutput, QuantizesItsF32Output) {
  const AttentionFixture &f = fixture(std::get<0>(GetParam()));
  std::unique_ptr<CpuContext> ctx = makeContext(std::get<1>(GetParam()));
  ASSERT_TRUE(ctx);
  for (bool bf16 : {false, true})
    for (bool isSigned : {false, true}) {
      AttentionStepDesc desc;
      std::unique_ptr<AttentionStep> wide;
      std::vector<float> want;
      ASSERT_NO_FATAL_FAILURE(runWide(f, *ctx, bf16, desc, wide, want));
      const size_t count = want.size();
      float largest = 0;
      for (float v : want)
        if (std::isfinite(v))
          largest = std::max(largest, std::fabs(v));
      desc.outputStatic = true;
      desc.outputSigned = isSigned;
      // 100 steps for the largest magnitude, a zero point off center.
      desc.outputScale = largest > 0 ? largest / 100 : 1.0f;
      desc.outputZeroPoint = isSigned ? 9 : 120;
      std::vector<uint8_t> got;
      ASSERT_NO_FATAL_FAILURE(
          runNarrow(f, *ctx, desc, *wide, got, uint8_t(0xAB)));
      int differ = 0;
      for (size_t i = 0; i < count; ++i) {
        float q = std::nearbyint(want[i] / desc.outputScale) +
                  float(desc.outputZeroPoint);
        float lo = isSigned ? -128.0f : 0.0f, hi = isSigned ? 127.0f : 255.0f;
        uint8_t expect = std::isnan(want[i])
                             ? 0
                             : uint8_t(int32_t(std::min(hi, std::max(lo, q))));
        if (got[i] != expect && differ++ < 5)
          ADD_FAILURE() << (bf16 ? "bf16" : "f32") << " products, "
                        << (isSigned ? "i8" : "u8") << ", output " << i
                        << ": byte " << int(got[i]) << ", the f32 " << want[i]
                        << " quantizes to " << int(expect);
      }
      EXPECT_EQ(differ, 0);
    }
}

TEST_P(AttentionStepStaticOutput, RoundsItsF32OutputToBf16) {
  // output_bf16 (the plan's fusion of the cast before a bf16 output
  // projection): each value is the f32 output rounded as floatToBFloat16
  // rounds it (the cast kernel's rounding), NaN rows included.
  const AttentionFixture &f = fixture(std::get<0>(GetParam()));
  std::unique_ptr<CpuContext> ctx = makeContext(std::get<1>(GetParam()));
  ASSERT_TRUE(ctx);
  for (bool bf16 : {false, true}) {
    AttentionStepDesc desc;
    std::unique_ptr<AttentionStep> wide;
    std::vector<float> want;
    ASSERT_NO_FATAL_FAILURE(runWide(f, *ctx, bf16, desc, wide, want));
    const size_t count = want.size();
    desc.outputBf16 = true;
    std::vector<uint16_t> got;
    ASSERT_NO_FATAL_FAILURE(
        runNarrow(f, *ctx, desc, *wide, got, uint16_t(0xABCD)));
    int differ = 0;
    for (size_t i = 0; i < count; ++i)
      if (got[i] != floatToBFloat16(want[i]) && differ++ < 5)
        ADD_FAILURE() << (bf16 ? "bf16" : "f32") << " products, output " << i
                      << ": bf16 bits " << got[i] << ", the f32 " << want[i]
                      << " rounds to " << floatToBFloat16(want[i]);
    EXPECT_EQ(differ, 0);
  }
}

TEST_P(AttentionStepStaticOutput, ReadsBf16Operands) {
  // input_bf16 (the plan's fusion of a bf16 projection's output): the
  // step reads bf16 query, key and value and gives the bits the f32 step
  // gives on the same values widened, with bf16 products (on the tiles as
  // they are) and with f32 ones (widened per work item).
  const AttentionFixture &f = fixture(std::get<0>(GetParam()));
  std::unique_ptr<CpuContext> ctx = makeContext(std::get<1>(GetParam()));
  ASSERT_TRUE(ctx);
  auto narrow = [](const std::vector<float> &x, std::vector<uint16_t> &bits,
                   std::vector<float> &widened) {
    bits.resize(x.size());
    widened.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      bits[i] = floatToBFloat16(x[i]);
      widened[i] = bfloat16ToFloat(bits[i]);
    }
  };
  std::vector<uint16_t> q16, k16, v16;
  std::vector<float> q, k, v;
  narrow(f.query, q16, q);
  narrow(f.key, k16, k);
  narrow(f.value, v16, v);
  for (bool bf16 : {false, true}) {
    AttentionStepDesc desc = f.desc;
    desc.bf16Products = bf16;
    std::unique_ptr<AttentionStep> wide, fromBf16;
    ASSERT_TRUE(AttentionStep::create(*ctx, desc, wide));
    const size_t count = size_t(f.rows() * f.width());
    std::vector<float> want(count), got(count, -1.0f);
    ASSERT_TRUE(wide->run(q.data(), k.data(), v.data(), f.mask(), want.data(),
                          f.scoreBias()));
    desc.inputBf16 = true;
    ASSERT_TRUE(AttentionStep::create(*ctx, desc, fromBf16));
    EXPECT_EQ(fromBf16->usesAmx(), wide->usesAmx());
    ASSERT_TRUE(fromBf16->run(q16.data(), k16.data(), v16.data(), f.mask(),
                              got.data(), f.scoreBias()));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), count * sizeof(float)), 0)
        << (bf16 ? "bf16" : "f32") << " products";
  }
}

TEST(AttentionStep, BadStaticOutput) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  std::unique_ptr<AttentionStep> step;
  AttentionStepDesc desc = smallDesc();
  desc.outputStatic = true;
  desc.outputScale = 0;
  EXPECT_STATUS(AttentionStep::create(*ctx, desc, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': output scale 0.000000 is not a "
                "positive finite number");
  desc.outputScale = 0.5f;
  desc.outputSigned = true;
  desc.outputZeroPoint = 200;
  EXPECT_STATUS(AttentionStep::create(*ctx, desc, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': output zero point 200 is outside "
                "the i8 range");
  desc.outputZeroPoint = 0;
  desc.outputBf16 = true;
  EXPECT_STATUS(AttentionStep::create(*ctx, desc, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': has both a static and a bf16 output");
  desc = smallDesc();
  desc.inputBf16 = true;
  desc.keyCapacity = desc.keyLength + 3;
  EXPECT_STATUS(AttentionStep::create(*ctx, desc, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': reads bf16 operands, which a "
                "key/value cache (a capacity) does not take");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttentionStepStaticOutput,
    ::testing::Combine(::testing::Values("bert_b8", "tile_edges",
                                         "masked_rows_zero", "neginf_rows_eval",
                                         "gqa_causal"),
                       ::testing::Values(1, 2)),
    [](const ::testing::TestParamInfo<AttentionStepStaticOutput::ParamType>
           &info) {
      return std::string(std::get<0>(info.param)) + "_threads" +
             std::to_string(std::get<1>(info.param));
    });

// The default thread count, and runs repeated on one step (its scratch is
// reused) give the same bits.
TEST(AttentionStep, RepeatedRunsAgree) {
  const AttentionFixture &f = fixture("bert_b8");
  std::unique_ptr<CpuContext> ctx = makeContext(0);
  ASSERT_TRUE(ctx);
  std::unique_ptr<AttentionStep> step;
  ASSERT_TRUE(AttentionStep::create(*ctx, f.desc, step));
  std::vector<float> first(size_t(f.rows() * f.width()));
  ASSERT_TRUE(step->run(f.query.data(), f.key.data(), f.value.data(), f.mask(),
                        first.data()));
  expectMatches(f, first);
  for (int i = 0; i < 3; ++i) {
    std::vector<float> again(first.size(), NAN);
    ASSERT_TRUE(step->run(f.query.data(), f.key.data(), f.value.data(),
                          f.mask(), again.data()));
    ASSERT_EQ(
        std::memcmp(again.data(), first.data(), first.size() * sizeof(float)),
        0)
        << "run " << i + 2;
  }
}

TEST(AttentionStep, BadDescs) {
  std::unique_ptr<CpuContext> ctx = makeContext(1);
  ASSERT_TRUE(ctx);
  std::unique_ptr<AttentionStep> step;
  AttentionStepDesc d = smallDesc();
  d.numHeads = 0;
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': sizes must be positive, got batch "
                "2, heads 0, query length 5, key length 7, head dim 4");
  d = smallDesc();
  d.keyLength = -7;
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': sizes must be positive, got batch "
                "2, heads 3, query length 5, key length -7, head dim 4");
  d = smallDesc();
  d.batch = int64_t(1) << 40;
  d.queryLength = int64_t(1) << 30;
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': sizes overflow: batch "
                "1099511627776, heads 3, query length 1073741824, key "
                "length 7, head dim 4");
  d = smallDesc();
  d.scale = NAN;
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': scale must be finite, got nan");
  d = smallDesc();
  d.mask = static_cast<AttentionMask>(5);
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': unknown mask kind 5");
  d = smallDesc();
  d.maskDims = {2, 1, 1, 7};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': mask dims [2, 1, 1, 7] given "
                "without a mask");
  d.mask = AttentionMask::Additive;
  d.maskDims = {2, 1, 5, 1, 7};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': additive mask dims [2, 1, 5, 1, 7] "
                "do not broadcast to [B, H, Sq, Sk] = [2, 3, 5, 7]");
  d.mask = AttentionMask::Bool;
  d.maskDims = {2, 2, 1, 7};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': bool mask dims [2, 2, 1, 7] do not "
                "broadcast to [B, H, Sq, Sk] = [2, 3, 5, 7]");
  // Aligned on the right: [5] would be the key axis, of size 7.
  d.maskDims = {5};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': bool mask dims [5] do not "
                "broadcast to [B, H, Sq, Sk] = [2, 3, 5, 7]");
  d.maskDims = {0, 7};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': bool mask dims [0, 7] do not "
                "broadcast to [B, H, Sq, Sk] = [2, 3, 5, 7]");
  EXPECT_FALSE(step);
  // Every broadcastable form is accepted, a scalar included.
  for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{
           {}, {7}, {5, 1}, {3, 5, 7}, {2, 1, 1, 1}, {2, 3, 5, 7}}) {
    d.maskDims = dims;
    Status st = AttentionStep::create(*ctx, d, step);
    EXPECT_TRUE(st) << st.toString();
  }
}

// A score bias is [1|B, 1|H, 1|Sq, Sk], passed exactly when the desc has one.
TEST(AttentionStep, BadScoreBias) {
  std::unique_ptr<CpuContext> ctx = makeContext(1);
  ASSERT_TRUE(ctx);
  std::unique_ptr<AttentionStep> step;
  AttentionStepDesc d = smallDesc();
  d.biasDims = {1, 3, 5, 7};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': score bias dims [1, 3, 5, 7] given "
                "without a score bias");
  d.scoreBias = true;
  for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{
           {3, 5, 7}, {1, 3, 5, 1}, {2, 2, 5, 7}, {1, 1, 1, 1, 7}}) {
    d.biasDims = dims;
    EXPECT_STATUS(
        AttentionStep::create(*ctx, d, step), StatusCode::InvalidArgument,
        "attention step 'attn_0': score bias dims " + formatDims(dims) +
            " are not [1|B, 1|H, 1|Sq, Sk] for [B, H, Sq, Sk] = "
            "[2, 3, 5, 7]");
  }
  EXPECT_FALSE(step);
  d.biasDims = {2, 1, 1, 7};
  ASSERT_TRUE(AttentionStep::create(*ctx, d, step));
  const int64_t width = d.numHeads * d.headDim;
  std::vector<float> q(size_t(d.batch * d.queryLength * width), 0.5f);
  std::vector<float> kv(size_t(d.batch * d.keyLength * width), 0.25f);
  std::vector<float> bias(14, 0.0f), out(q.size());
  EXPECT_STATUS(step->run(q.data(), kv.data(), kv.data(), nullptr, out.data()),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': has a score bias but none was "
                "passed");
  EXPECT_TRUE(step->run(q.data(), kv.data(), kv.data(), nullptr, out.data(),
                        bias.data()));
  std::unique_ptr<AttentionStep> plain;
  ASSERT_TRUE(AttentionStep::create(*ctx, smallDesc(), plain));
  EXPECT_STATUS(plain->run(q.data(), kv.data(), kv.data(), nullptr, out.data(),
                           bias.data()),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': has no score bias but one was "
                "passed");
}

TEST(AttentionStep, OperandsMatchDesc) {
  std::unique_ptr<CpuContext> ctx = makeContext(1);
  ASSERT_TRUE(ctx);
  std::unique_ptr<AttentionStep> plain, masked;
  ASSERT_TRUE(AttentionStep::create(*ctx, smallDesc(), plain));
  AttentionStepDesc d = smallDesc();
  d.mask = AttentionMask::Bool;
  d.maskDims = {2, 1, 1, 7};
  ASSERT_TRUE(AttentionStep::create(*ctx, d, masked));
  std::vector<float> q(2 * 5 * 12), k(2 * 7 * 12), v(2 * 7 * 12),
      out(2 * 5 * 12);
  std::vector<uint8_t> mask(2 * 7, 1);
  EXPECT_STATUS(
      plain->run(q.data(), k.data(), v.data(), mask.data(), out.data()),
      StatusCode::InvalidArgument,
      "attention step 'attn_0': has no mask but one was passed");
  EXPECT_STATUS(masked->run(q.data(), k.data(), v.data(), nullptr, out.data()),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': has a bool mask but none was passed");
  EXPECT_STATUS(plain->run(q.data(), nullptr, v.data(), nullptr, out.data()),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': null key pointer");
  EXPECT_STATUS(plain->run(q.data(), k.data(), v.data(), nullptr, nullptr),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': null output pointer");
  EXPECT_STATUS(plain->run(q.data(), k.data(), v.data(), nullptr, q.data() + 1),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': output overlaps query");
  EXPECT_STATUS(plain->run(q.data(), k.data(), v.data(), nullptr, v.data()),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': output overlaps value");
  std::vector<float> both(2 * 5 * 12 + 4);
  EXPECT_STATUS(
      masked->run(q.data(), k.data(), v.data(), both.data() + 2, both.data()),
      StatusCode::InvalidArgument,
      "attention step 'attn_0': output overlaps mask");
}

//===----------------------------------------------------------------------===//
// Views: query, key and value read out of wider buffers
//===----------------------------------------------------------------------===//

namespace {

/// Copies the dense [rows, width] `dense` into rows of `stride` elements
/// starting `offset` elements into `buffer` (which the caller filled with
/// NaN, so that a read outside a view poisons the output).
void placeView(const std::vector<float> &dense, int64_t rows, int64_t width,
               const AttentionOperandView &view, std::vector<float> &buffer) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(buffer.data() + view.offset + r * view.rowStride,
                dense.data() + r * width, size_t(width) * sizeof(float));
}

class AttentionStepViews
    : public ::testing::TestWithParam<std::tuple<const char *, int>> {};

} // namespace

// The fused QKV layout (one [B, S, 3*H*D] buffer, Q, K, V at offsets 0,
// H*D, 2*H*D) when Sq == Sk, otherwise Q and K/V in two buffers with odd
// offsets and padding; with kv_heads_split only the query is a view. The
// step must give NumPy's answers and the dense layout's.
/// The step reading Q, K and V through views against the dense step and
/// NumPy, with f32 or (where the CPU has them) bf16 products.
static void checkViews(const AttentionFixture &f, int threads, bool bf16) {
  std::unique_ptr<CpuContext> ctx = makeContext(threads);
  ASSERT_TRUE(ctx);
  AttentionStepDesc dense = f.desc;
  dense.bf16Products = bf16;
  const int64_t width = f.width(), qRows = f.rows();
  const int64_t kvRows = dense.batch * dense.keyLength;
  AttentionStepDesc d = dense;
  std::vector<float> qBuffer, kvBuffer;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (dense.kvHeadsSplit) {
    d.queryView = {5, width + 9};
    qBuffer.assign(size_t(qRows * d.queryView.rowStride), nan);
    placeView(f.query, qRows, width, d.queryView, qBuffer);
  } else if (dense.queryLength == dense.keyLength) {
    d.queryView = {0, 3 * width};
    d.keyView = {width, 3 * width};
    d.valueView = {2 * width, 3 * width};
    qBuffer.assign(size_t(qRows * 3 * width), nan);
    for (auto [data, view] : {std::pair{&f.query, d.queryView},
                              {&f.key, d.keyView},
                              {&f.value, d.valueView}})
      placeView(*data, qRows, width, view, qBuffer);
  } else {
    d.queryView = {3, width + 7};
    d.valueView = {1, 2 * width + 2};
    d.keyView = {width + 2, 2 * width + 2};
    qBuffer.assign(size_t(qRows * d.queryView.rowStride), nan);
    kvBuffer.assign(size_t(kvRows * d.keyView.rowStride), nan);
    placeView(f.query, qRows, width, d.queryView, qBuffer);
    placeView(f.key, kvRows, width, d.keyView, kvBuffer);
    placeView(f.value, kvRows, width, d.valueView, kvBuffer);
  }
  const float *q = qBuffer.data();
  const float *k = dense.kvHeadsSplit ? f.key.data()
                   : kvBuffer.empty() ? qBuffer.data()
                                      : kvBuffer.data();
  const float *v = dense.kvHeadsSplit ? f.value.data() : k;

  std::unique_ptr<AttentionStep> viewed, plain;
  Status st = AttentionStep::create(*ctx, d, viewed);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_TRUE(AttentionStep::create(*ctx, dense, plain));
  if (bf16 && !plain->usesAmx())
    return; // no bf16 tiles for this shape or CPU: the f32 run covers it
  ASSERT_EQ(viewed->usesAmx(), plain->usesAmx());
  std::vector<float> got(size_t(qRows * width), 12345.0f);
  st = viewed->run(q, k, v, f.mask(), got.data());
  ASSERT_TRUE(st) << st.toString();
  // AttentionStepBf16Products explains the bf16 tolerance.
  if (bf16)
    expectMatches(f, got, 1e-2, 1e-2);
  else
    expectMatches(f, got);
  std::vector<float> want(got.size(), 12345.0f);
  ASSERT_TRUE(plain->run(f.query.data(), f.key.data(), f.value.data(), f.mask(),
                         want.data()));
  // The same products over the same rows: equal up to the GEMMs' blocking.
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], 1e-6 + 1e-6 * std::fabs(want[i]))
        << "element " << i;
  }
}

TEST_P(AttentionStepViews, MatchesDenseAndNumpy) {
  checkViews(fixture(std::get<0>(GetParam())), std::get<1>(GetParam()),
             /*bf16=*/false);
  checkViews(fixture(std::get<0>(GetParam())), std::get<1>(GetParam()),
             /*bf16=*/true);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttentionStepViews,
    ::testing::Combine(::testing::Values("plain", "additive_b11k", "bool_bqk",
                                         "causal_square", "causal_shorter",
                                         "kv_split", "masked_rows_eval",
                                         "bert_b1", "gpt2_b1"),
                       ::testing::Values(1, 2)),
    [](const ::testing::TestParamInfo<AttentionStepViews::ParamType> &info) {
      return std::string(std::get<0>(info.param)) + "_threads" +
             std::to_string(std::get<1>(info.param));
    });

TEST(AttentionStep, BadViews) {
  std::unique_ptr<CpuContext> ctx = makeContext(1);
  ASSERT_TRUE(ctx);
  std::unique_ptr<AttentionStep> step;
  // H*D = 12.
  AttentionStepDesc d = smallDesc();
  d.queryView = {25, 36};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': query view (offset 25, row stride "
                "36): offset + H*D = 25 + 12 exceeds the row stride 36");
  d = smallDesc();
  d.valueView = {0, 11};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': value view (offset 0, row stride "
                "11): offset + H*D = 0 + 12 exceeds the row stride 11");
  d = smallDesc();
  d.keyView = {4, 0};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': key view (offset 4, row stride 0): "
                "offset + H*D = 4 + 12 exceeds the row stride 12");
  d = smallDesc();
  d.keyView = {-1, 36};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': key view (offset -1, row stride "
                "36) must not be negative");
  d = smallDesc();
  d.kvHeadsSplit = true;
  d.keyView = {0, 36};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': key view (offset 0, row stride 36) "
                "with kv_heads_split; key and value must then be dense [B, "
                "H, Sk, D]");
  d = smallDesc();
  d.queryView = {0, int64_t(1) << 61};
  EXPECT_STATUS(AttentionStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention step 'attn_0': query view (offset 0, row stride "
                "2305843009213693952) over 10 rows overflows");
  EXPECT_FALSE(step);
  // A query view with kv_heads_split is fine.
  d = smallDesc();
  d.kvHeadsSplit = true;
  d.queryView = {12, 36};
  Status st = AttentionStep::create(*ctx, d, step);
  EXPECT_TRUE(st) << st.toString();
}

// The output must not overlap any row a view reads, past the dense size too.
TEST(AttentionStep, OutputOutsideViews) {
  std::unique_ptr<CpuContext> ctx = makeContext(1);
  ASSERT_TRUE(ctx);
  AttentionStepDesc d = smallDesc();
  // Q, K, V: 2 x 5 rows of 12 in a [10, 36] buffer (Sq = 5, Sk = 7: the
  // key and value rows run on into a [14, 36] one).
  d.queryView = {0, 36};
  d.keyView = {12, 36};
  d.valueView = {24, 36};
  std::unique_ptr<AttentionStep> step;
  ASSERT_TRUE(AttentionStep::create(*ctx, d, step));
  std::vector<float> q(10 * 36), kv(14 * 36 + 2 * 5 * 12);
  std::vector<float> out(2 * 5 * 12);
  // Past the dense key's 14 * 12 elements, inside the view's span.
  EXPECT_STATUS(
      step->run(q.data(), kv.data(), kv.data(), nullptr, kv.data() + 14 * 12),
      StatusCode::InvalidArgument,
      "attention step 'attn_0': output overlaps key");
  // Right after the last value row ends: fine.
  EXPECT_TRUE(step->run(q.data(), kv.data(), kv.data(), nullptr,
                        kv.data() + 13 * 36 + 24 + 12));
  EXPECT_TRUE(step->run(q.data(), kv.data(), kv.data(), nullptr, out.data()));
}
