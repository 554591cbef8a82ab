//===- Float16Test.cpp - f16 and bf16 conversions against the hardware ---===//
//
// The reference is the CPU's own conversion instructions, not lmopt code:
// F16C (vcvtph2ps, vcvtps2ph with round to nearest even) for every half and
// for floats around every half's rounding boundaries, AVX512-BF16
// (vcvtneps2bf16) likewise for bfloat16. vcvtneps2bf16 treats subnormal
// inputs as zero, so those are checked against exact double arithmetic
// instead. Tests skip, saying why, on CPUs without the instructions.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LMOPT_TEST_X86 1
#endif

using namespace lmopt::runtime;

namespace {

uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return bits;
}

float fromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

/// Floats at and around the rounding boundaries between two neighbouring
/// values of a 16-bit format: `value`, the midpoint to `next` (a tie) and
/// the floats next to both.
std::vector<float> boundaryFloats(float value, float next) {
  float mid = value + (next - value) / 2;
  return {
      value, std::nextafter(value, -INFINITY), std::nextafter(value, INFINITY),
      mid,   std::nextafter(mid, -INFINITY),   std::nextafter(mid, INFINITY)};
}

/// Every 4099th float bit pattern (NaNs, infinities and subnormals among
/// them).
std::vector<float> sweptFloats() {
  std::vector<float> out;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 4099)
    out.push_back(fromBits(uint32_t(bits)));
  return out;
}

#ifdef LMOPT_TEST_X86
__attribute__((target("f16c"))) float hardwareHalfToFloat(uint16_t h) {
  return _cvtsh_ss(h);
}

__attribute__((target("f16c"))) uint16_t hardwareFloatToHalf(float x) {
  return uint16_t(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

__attribute__((target("avx512f,avx512vl,avx512bf16"))) uint16_t
hardwareFloatToBFloat16(float x) {
  __m256bh packed = _mm512_cvtneps_pbh(_mm512_set1_ps(x));
  uint16_t lanes[16];
  std::memcpy(lanes, &packed, sizeof(lanes));
  return lanes[0];
}
#endif

bool hasF16C() {
#ifdef LMOPT_TEST_X86
  return __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

bool hasAvx512Bf16() {
#ifdef LMOPT_TEST_X86
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

/// Counts conversions that differ from the reference, reporting the first
/// ten (a broken rounding rule fails thousands).
struct Mismatches {
  int count = 0;

  void check(uint32_t input, uint32_t got, uint32_t want, const char *ref) {
    if (got != want && ++count <= 10)
      ADD_FAILURE() << std::hex << "input bits 0x" << input << ": got 0x" << got
                    << ", " << ref << " gives 0x" << want;
  }
};

#ifdef LMOPT_TEST_X86
void checkFloatToHalf(const std::vector<float> &xs, Mismatches &mismatches) {
  for (float x : xs)
    mismatches.check(bitsOf(x), floatToHalf(x), hardwareFloatToHalf(x), "F16C");
}
#endif

TEST(Float16, HalfToFloatMatchesF16CForEveryHalf) {
  if (!hasF16C())
    GTEST_SKIP() << "the CPU has no F16C to compare with";
#ifdef LMOPT_TEST_X86
  Mismatches mismatches;
  for (uint32_t h = 0; h <= 0xFFFF; ++h)
    mismatches.check(h, bitsOf(halfToFloat(uint16_t(h))),
                     bitsOf(hardwareHalfToFloat(uint16_t(h))), "F16C");
  EXPECT_EQ(mismatches.count, 0);
#endif
}

TEST(Float16, FloatToHalfMatchesF16CAroundEveryHalf) {
  if (!hasF16C())
    GTEST_SKIP() << "the CPU has no F16C to compare with";
#ifdef LMOPT_TEST_X86
  Mismatches mismatches;
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    float value = hardwareHalfToFloat(uint16_t(h));
    if ((h & 0x7FFF) >= 0x7C00) { // infinities and NaNs
      checkFloatToHalf({value}, mismatches);
      continue;
    }
    // Past the largest half, 65520 is the first float that overflows.
    float next = (h & 0x7FFF) == 0x7BFF ? std::copysign(65536.0f, value)
                                        : hardwareHalfToFloat(uint16_t(h + 1));
    checkFloatToHalf(boundaryFloats(value, next), mismatches);
  }
  checkFloatToHalf(sweptFloats(), mismatches);
  EXPECT_EQ(mismatches.count, 0);
#endif
}

TEST(Float16, BFloat16ToFloatIsTheHighHalf) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b)
    ASSERT_EQ(bitsOf(bfloat16ToFloat(uint16_t(b))), b << 16);
}

/// The bfloat16 nearest a subnormal float, ties to even, in exact double
/// arithmetic: bfloat16 subnormals are multiples of 2^-133.
uint16_t subnormalToBFloat16(float x) {
  double units = std::nearbyint(double(x) * 0x1p133);
  return uint16_t(bitsOf(float(units * 0x1p-133)) >> 16);
}

TEST(Float16, FloatToBFloat16MatchesAvx512Bf16AroundEveryBFloat16) {
  if (!hasAvx512Bf16())
    GTEST_SKIP() << "the CPU has no AVX512-BF16 to compare with";
#ifdef LMOPT_TEST_X86
  std::vector<float> xs = sweptFloats();
  for (uint32_t b = 0; b <= 0xFFFF; ++b)
    for (uint32_t low : {0x0u, 0x1u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
      xs.push_back(fromBits(b << 16 | low));
  Mismatches mismatches;
  for (float x : xs) {
    bool subnormal = (bitsOf(x) & 0x7F800000) == 0 && (bitsOf(x) << 1) != 0;
    if (subnormal)
      mismatches.check(bitsOf(x), floatToBFloat16(x), subnormalToBFloat16(x),
                       "exact rounding");
    else
      mismatches.check(bitsOf(x), floatToBFloat16(x),
                       hardwareFloatToBFloat16(x), "AVX512-BF16");
  }
  EXPECT_EQ(mismatches.count, 0);
#endif
}

} // namespace
