//===- NumpyInteropTest.cpp - lmopt's writers, read back by NumPy ---------===//
//
// With LMOPT_RUNTIME_TEST_OUT set, re-writes every fixture with writeNpy and
// writeNpz into that folder; `make_npy_fixtures.py --check-written` then has
// NumPy read each one back (see runtime-unittests.test). Without the variable
// the test is skipped.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Npy.h"

#include "TestUtil.h"

#include <cstdlib>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

TEST(NumpyInterop, RewriteFixtures) {
  const char *out = std::getenv("LMOPT_RUNTIME_TEST_OUT");
  if (!out)
    GTEST_SKIP() << "LMOPT_RUNTIME_TEST_OUT is not set";
  size_t written = 0;
  for (const auto &entry : expectedJson()["npy"].object) {
    Tensor t;
    ASSERT_TRUE(readNpy(inputPath(entry.first), t));
    Status st = writeNpy(std::string(out) + "/" + entry.first, t);
    ASSERT_TRUE(st) << st.toString();
    ++written;
  }
  for (const auto &entry : expectedJson()["npz"].object) {
    std::vector<NamedTensor> tensors;
    ASSERT_TRUE(readNpz(inputPath(entry.first), tensors));
    Status st = writeNpz(std::string(out) + "/" + entry.first, tensors);
    ASSERT_TRUE(st) << st.toString();
    ++written;
  }
  EXPECT_GE(written, 18u);
}
