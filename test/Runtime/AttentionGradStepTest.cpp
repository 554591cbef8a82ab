//===- AttentionGradStepTest.cpp - AttentionGradStep against PyTorch ------===//
//
// Expected gradients come from scripts/make_attention_grad_fixtures.py:
// PyTorch's autograd in float64 through lmopt.attention's forward, on the
// float32 inputs stored in each fixture. Each case runs with 1, 2 and 3
// threads (pairs are split differently over the team).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/AttentionGradStep.h"
#include "lmopt/Format/Npy.h"

#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

/// One fixture: the desc, inputs and PyTorch's gradients.
struct GradFixture {
  AttentionStepDesc desc;
  std::vector<float> query, key, value, outputGrad, additiveMask;
  std::vector<uint8_t> boolMask;
  std::vector<float> want[3];
  const void *mask() const {
    if (desc.mask == AttentionMask::Additive)
      return additiveMask.data();
    if (desc.mask == AttentionMask::Bool)
      return boolMask.data();
    return nullptr;
  }
};

/// Reads attention_grad_<name>.npz; failures are reported on the test.
GradFixture load(const std::string &name) {
  GradFixture f;
  std::vector<NamedTensor> all;
  Status st = readNpz(inputPath("attention_grad_" + name + ".npz"), all);
  EXPECT_TRUE(st) << st.toString();
  std::vector<int64_t> dims = values<int64_t>(all, "dims");
  std::vector<int64_t> flags = values<int64_t>(all, "flags");
  std::vector<float> scale = values<float>(all, "scale");
  if (dims.size() != 5 || flags.size() != 3 || scale.size() != 1) {
    ADD_FAILURE() << "fixture " << name << " lacks dims, flags or scale";
    return f;
  }
  f.desc.name = name;
  f.desc.batch = dims[0];
  f.desc.numHeads = dims[1];
  f.desc.queryLength = dims[2];
  f.desc.keyLength = dims[3];
  f.desc.headDim = dims[4];
  f.desc.scale = scale[0];
  f.desc.causal = flags[0] != 0;
  f.desc.zeroMaskedRows = flags[1] != 0;
  f.desc.mask = AttentionMask(flags[2]);
  if (const Tensor *mask = member(all, "mask")) {
    f.desc.maskDims = mask->shape;
    if (f.desc.mask == AttentionMask::Additive)
      f.additiveMask = values<float>(all, "mask");
    else
      f.boolMask.assign(mask->data.begin(), mask->data.end());
  }
  f.query = values<float>(all, "query");
  f.key = values<float>(all, "key");
  f.value = values<float>(all, "value");
  f.outputGrad = values<float>(all, "output_grad");
  f.want[0] = values<float>(all, "query_grad");
  f.want[1] = values<float>(all, "key_grad");
  f.want[2] = values<float>(all, "value_grad");
  return f;
}

/// Every element within 1e-4 relative of PyTorch's, or 1e-5 of the
/// largest gradient (f32 sums over Sk and Sq terms).
void expectGradsMatch(const GradFixture &f,
                      const std::vector<float> (&got)[3]) {
  static const char *const kRoles[] = {"query_grad", "key_grad", "value_grad"};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(got[i].size(), f.want[i].size()) << kRoles[i];
    double largest = 0;
    for (float w : f.want[i])
      largest = std::max(largest, double(std::fabs(w)));
    size_t bad = 0;
    for (size_t e = 0; e < got[i].size(); ++e) {
      double want = f.want[i][e], have = got[i][e];
      if (!(std::fabs(have - want) <= 1e-4 * std::fabs(want) + 1e-5 * largest))
        if (bad++ < 5)
          ADD_FAILURE() << f.desc.name << " " << kRoles[i] << "[" << e
                        << "] = " << have << ", PyTorch " << want;
    }
    EXPECT_EQ(bad, 0u) << f.desc.name << " " << kRoles[i];
  }
}

/// Runs `f` on `threads` threads into fresh (NaN-filled) gradients.
Status runFixture(const GradFixture &f, int threads,
                  std::vector<float> (&got)[3]) {
  std::unique_ptr<CpuContext> ctx = makeContext(threads);
  if (!ctx)
    return Status::error(StatusCode::InvalidArgument, "no context");
  std::unique_ptr<AttentionGradStep> step;
  if (Status st = AttentionGradStep::create(*ctx, f.desc, step); !st)
    return st;
  for (int i = 0; i < 3; ++i)
    got[i].assign(f.want[i].size(), std::numeric_limits<float>::quiet_NaN());
  return step->run(f.query.data(), f.key.data(), f.value.data(),
                   f.outputGrad.data(), f.mask(), got[0].data(), got[1].data(),
                   got[2].data());
}

class AttentionGradStepTorch
    : public ::testing::TestWithParam<std::tuple<const char *, int>> {};

TEST_P(AttentionGradStepTorch, MatchesAutograd) {
  GradFixture f = load(std::get<0>(GetParam()));
  ASSERT_FALSE(f.query.empty());
  std::vector<float> got[3];
  Status st = runFixture(f, std::get<1>(GetParam()), got);
  ASSERT_TRUE(st) << st.toString();
  expectGradsMatch(f, got);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttentionGradStepTorch,
    ::testing::Combine(::testing::Values("plain", "scale_keys", "bert_padding",
                                         "additive_padding", "causal_shorter",
                                         "bool_rows_zero", "additive_rows_zero",
                                         "causal_zero", "row_blocks"),
                       ::testing::Values(1, 2, 3)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param)) + "_threads" +
             std::to_string(std::get<1>(info.param));
    });

// A fully hidden row has zero gradient: its query row's gradient is zero,
// and changing its output gradient changes no other gradient.
TEST(AttentionGradStep, MaskedRowsHaveZeroGradient) {
  GradFixture f = load("bool_rows_zero");
  ASSERT_FALSE(f.query.empty());
  std::vector<float> got[3];
  ASSERT_TRUE(runFixture(f, 1, got));
  // Row 1 of head 0 (batch 0) is fully hidden: [B, Sq, H*D] element
  // (0, 1, 0:D).
  const int64_t width = f.desc.numHeads * f.desc.headDim, d = f.desc.headDim;
  for (int64_t e = 0; e < d; ++e)
    EXPECT_EQ(got[0][size_t(1 * width + e)], 0.0f) << e;
  GradFixture changed = f;
  for (int64_t e = 0; e < d; ++e)
    changed.outputGrad[size_t(1 * width + e)] = 1e3f;
  std::vector<float> again[3];
  ASSERT_TRUE(runFixture(changed, 1, again));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(std::memcmp(again[i].data(), got[i].data(),
                          got[i].size() * sizeof(float)),
              0)
        << i;
}

TEST(AttentionGradStep, RefusesWhatItDoesNotTake) {
  std::unique_ptr<CpuContext> ctx = makeContext(1);
  ASSERT_TRUE(ctx);
  GradFixture f = load("plain");
  std::unique_ptr<AttentionGradStep> step;
  AttentionStepDesc d = f.desc;
  d.scoreBias = true;
  d.biasDims = {1, 1, 1, d.keyLength};
  EXPECT_STATUS(AttentionGradStep::create(*ctx, d, step),
                StatusCode::Unsupported,
                "attention_grad step 'plain': the attention backward does "
                "not take a score bias");
  d = f.desc;
  d.numKvHeads = 1;
  EXPECT_STATUS(AttentionGradStep::create(*ctx, d, step),
                StatusCode::Unsupported,
                "attention_grad step 'plain': the attention backward does "
                "not take grouped-query heads (num_kv_heads 1)");
  d = f.desc;
  d.queryView.rowStride = 3 * d.numHeads * d.headDim;
  EXPECT_STATUS(AttentionGradStep::create(*ctx, d, step),
                StatusCode::Unsupported,
                "attention_grad step 'plain': the attention backward does "
                "not take operand views");
  d = f.desc;
  d.headDim = 0;
  EXPECT_STATUS(AttentionGradStep::create(*ctx, d, step),
                StatusCode::InvalidArgument,
                "attention_grad step 'plain': sizes must be positive, got "
                "batch 2, heads 3, query length 7, key length 7, head dim 0");
}

TEST(AttentionGradStep, RunChecksPointers) {
  std::unique_ptr<CpuContext> ctx = makeContext(1);
  ASSERT_TRUE(ctx);
  GradFixture f = load("plain");
  std::unique_ptr<AttentionGradStep> step;
  ASSERT_TRUE(AttentionGradStep::create(*ctx, f.desc, step));
  std::vector<float> dq(f.query.size()), dk(f.key.size()), dv(f.value.size());
  EXPECT_STATUS(step->run(f.query.data(), f.key.data(), f.value.data(), nullptr,
                          nullptr, dq.data(), dk.data(), dv.data()),
                StatusCode::InvalidArgument,
                "attention_grad step 'plain': null output_grad pointer");
  uint8_t mask = 1;
  EXPECT_STATUS(step->run(f.query.data(), f.key.data(), f.value.data(),
                          f.outputGrad.data(), &mask, dq.data(), dk.data(),
                          dv.data()),
                StatusCode::InvalidArgument,
                "attention_grad step 'plain': has no mask but one was passed");
  EXPECT_STATUS(step->run(f.query.data(), f.key.data(), f.value.data(),
                          f.outputGrad.data(), nullptr, dq.data(),
                          const_cast<float *>(f.key.data()), dv.data()),
                StatusCode::InvalidArgument,
                "attention_grad step 'plain': key_grad overlaps key");
}

} // namespace
