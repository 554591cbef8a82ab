//===- RequirementsTest.cpp - The bundle's `requires` section ------------===//

#include "lmopt/Format/Requirements.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace lmopt::runtime;

namespace {

Status check(const std::string &text,
             const std::function<int(std::string_view)> &supports) {
  return checkRequirements(reinterpret_cast<const uint8_t *>(text.data()),
                           text.size(), "m.lmopt", supports);
}

/// A machine with AVX2 and FMA but no AVX-512.
int avx2Machine(std::string_view feature) {
  if (feature == "avx2" || feature == "fma" || feature == "sse4.2")
    return 1;
  return cpuSupports(feature) < 0 ? -1 : 0;
}

TEST(Requirements, EveryCheckableNameIsKnown) {
  for (const char *name : checkableCpuFeatures())
    EXPECT_GE(cpuSupports(name), 0) << name;
  EXPECT_EQ(cpuSupports("avx9000"), -1);
}

TEST(Requirements, PresentFeaturesPass) {
  EXPECT_TRUE(
      check("cpu-feature avx2\ncpu-feature fma\n\n", avx2Machine).isOk());
  EXPECT_TRUE(check("", avx2Machine).isOk());
}

TEST(Requirements, MissingFeaturesAreNamed) {
  Status st = check("cpu-feature avx2\ncpu-feature avx512f\ncpu-feature "
                    "avx512bw",
                    avx2Machine);
  EXPECT_EQ(st.code(), StatusCode::Unsupported);
  EXPECT_NE(st.message().find("bundle 'm.lmopt' has kernels compiled for CPU "
                              "features this machine lacks: avx512f, avx512bw"),
            std::string::npos)
      << st.message();
}

TEST(Requirements, UnknownLinesAndNamesAreRefused) {
  Status st = check("cpu-feature avx2\ngpu sm_90\n", avx2Machine);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_NE(st.message().find("'requires' line 2 is 'gpu sm_90'"),
            std::string::npos)
      << st.message();
  st = check("cpu-feature avx9000\n", avx2Machine);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_NE(st.message().find("names CPU feature 'avx9000', which this "
                              "runtime cannot check"),
            std::string::npos)
      << st.message();
}

TEST(Requirements, EachDeviceChecksItsOwnLines) {
  // The cpu device skips the cuda device's line and the other way round.
  EXPECT_TRUE(check("cpu-feature avx2\ncuda-sm 90\n", avx2Machine).isOk());
  std::string text = "cpu-feature avx512f\ncuda-sm 90\n\ncuda-sm 80";
  std::vector<std::string> seen;
  Status st = forEachRequirement(
      reinterpret_cast<const uint8_t *>(text.data()), text.size(), "m.lmopt",
      "cuda", [&](std::string_view kind, std::string_view value, size_t line) {
        seen.push_back(std::string(kind) + "=" + std::string(value) + "@" +
                       std::to_string(line));
        return Status::ok();
      });
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(seen, (std::vector<std::string>{"cuda-sm=90@2", "cuda-sm=80@4"}));
  EXPECT_STREQ(requirementDevice("cuda-sm"), "cuda");
  EXPECT_STREQ(requirementDevice("cpu-feature"), "cpu");
  EXPECT_EQ(requirementDevice("gpu"), nullptr);
  // A kind no device knows is refused whichever device reads the section.
  text = "cuda-sm 90\nrocm-gfx 942\n";
  st = forEachRequirement(
      reinterpret_cast<const uint8_t *>(text.data()), text.size(), "m.lmopt",
      "cuda",
      [](std::string_view, std::string_view, size_t) { return Status::ok(); });
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_NE(st.message().find("'requires' line 2 is 'rocm-gfx 942'"),
            std::string::npos)
      << st.message();
}

} // namespace
