//===- MatMulStepTest.cpp - MatMulStep -----------------------------------===//
//
// Numerics against onnxruntime live in test/tools/lmopt-compile/matmul-e2e;
// here: the result shapes numpy.matmul gives, a product worked by hand, and
// the descs the step refuses.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/MatMulStep.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace lmopt::runtime;
using lmopt::runtime::test::makeContext;

namespace {

std::unique_ptr<MatMulStep> create(const CpuContext &context,
                                   std::vector<int64_t> lhs,
                                   std::vector<int64_t> rhs, Status &status) {
  MatMulStepDesc desc;
  desc.name = "mm";
  desc.lhsDims = std::move(lhs);
  desc.rhsDims = std::move(rhs);
  std::unique_ptr<MatMulStep> step;
  status = MatMulStep::create(context, desc, step);
  return step;
}

TEST(MatMulStep, ResultDimsFollowNumpy) {
  std::unique_ptr<CpuContext> context = makeContext();
  Status st;
  // numpy.matmul(np.zeros(a), np.zeros(b)).shape for each pair.
  struct Case {
    std::vector<int64_t> lhs, rhs, out;
  } cases[] = {{{2, 3, 4, 5}, {5, 6}, {2, 3, 4, 6}},
               {{3, 1, 4, 5}, {2, 5, 6}, {3, 2, 4, 6}},
               {{5}, {2, 5, 3}, {2, 3}},
               {{2, 4, 5}, {5}, {2, 4}},
               {{5}, {5}, {}}};
  for (const Case &c : cases) {
    auto step = create(*context, c.lhs, c.rhs, st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    EXPECT_EQ(step->outputDims(), c.out);
  }
}

TEST(MatMulStep, BroadcastBatchByHand) {
  std::unique_ptr<CpuContext> context = makeContext();
  Status st;
  // lhs [2, 1, 2] (two row vectors), rhs [2, 2] shared by both batches.
  auto step = create(*context, {2, 1, 2}, {2, 2}, st);
  ASSERT_TRUE(st.isOk()) << st.toString();
  const float lhs[] = {1, 2, 3, 4};
  const float rhs[] = {5, 6, 7, 8};
  float out[4] = {};
  ASSERT_TRUE(step->run(lhs, rhs, out).isOk());
  // [1, 2] @ [[5, 6], [7, 8]] = [19, 22]; [3, 4] @ ... = [43, 50].
  EXPECT_EQ(std::vector<float>(out, out + 4),
            (std::vector<float>{19, 22, 43, 50}));
}

TEST(MatMulStep, RefusesBadDescs) {
  std::unique_ptr<CpuContext> context = makeContext();
  Status st;
  create(*context, {2, 3}, {4, 5}, st);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("lhs has K = 3 but rhs has K = 4"),
            std::string::npos)
      << st.message();
  create(*context, {2, 4, 3}, {3, 3, 5}, st);
  EXPECT_NE(st.message().find("batch dims do not broadcast"), std::string::npos)
      << st.message();
  create(*context, {}, {3}, st);
  EXPECT_NE(st.message().find("rank 1 or more"), std::string::npos)
      << st.message();
}

} // namespace
