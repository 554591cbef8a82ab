//===- PhiloxTest.cpp - Philox4x32-10 against Random123's answers ---------===//

#include "lmopt/Format/Philox.h"

#include <gtest/gtest.h>

namespace {

using lmopt::philox::philox4x32;

// Random123, tests/kat_vectors, the three "philox4x32 10" lines: counter,
// key, expected output.
TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                     0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                       {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                     0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                     0x24126ea1}));
}

// The uniforms a dropout mask thresholds: in [0, 1), mean 1/2, and streams
// and seeds that differ give different numbers.
TEST(Philox, Uniform) {
  double sum = 0;
  int below = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    float u = lmopt::philox::uniform(42, 3, uint64_t(i));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
    below += u < 0.1f;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(double(below) / n, 0.1, 0.005);
  EXPECT_NE(lmopt::philox::uniform(42, 3, 7), lmopt::philox::uniform(42, 4, 7));
  EXPECT_NE(lmopt::philox::uniform(42, 3, 7), lmopt::philox::uniform(43, 3, 7));
}

} // namespace
