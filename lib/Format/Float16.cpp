//===- Float16.cpp - IEEE half and bfloat16 conversions -------------------===//

#include "lmopt/Format/Float16.h"

#include <cstring>

static uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return bits;
}

static float fromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

/// `value >> shift` rounded to nearest, ties to even (0 < shift < 32).
static uint32_t shiftRoundEven(uint32_t value, unsigned shift) {
  uint32_t kept = value >> shift;
  uint32_t rest = value & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1)));
}

uint16_t lmopt::runtime::floatToHalf(float x) {
  uint32_t bits = bitsOf(x);
  auto sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude > 0x7F800000) // NaN
    return uint16_t(sign | 0x7E00 | ((magnitude >> 13) & 0x3FF));
  if (magnitude >= 0x477FF000) // 65520 and above (infinity included)
    return uint16_t(sign | 0x7C00);
  if (magnitude >= 0x38800000) // 2^-14 and above: normal; a carry out of
                               // the fraction correctly bumps the exponent
    return uint16_t(sign | shiftRoundEven(magnitude - (112u << 23), 13));
  // A half subnormal counts units of 2^-24: the float's significand
  // (2^23 + fraction) times 2^(exponent - 150) is that many units times
  // 2^(exponent - 126).
  uint32_t exponent = magnitude >> 23;
  if (exponent < 102) // below 2^-25, zero included
    return sign;
  uint32_t significand = (magnitude & 0x7FFFFF) | 0x800000;
  return uint16_t(sign | shiftRoundEven(significand, 126 - exponent));
}

float lmopt::runtime::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1F, fraction = h & 0x3FF;
  if (exponent == 0x1F) // infinity, or NaN (quieted)
    return fromBits(sign | 0x7F800000 | (fraction ? 0x400000 : 0) |
                    (fraction << 13));
  if (exponent == 0) // zero or subnormal: fraction units of 2^-24, exact
    return fromBits(sign | bitsOf(float(fraction) * 0x1p-24f));
  return fromBits(sign | ((exponent + 112) << 23) | (fraction << 13));
}

uint16_t lmopt::runtime::floatToBFloat16(float x) {
  uint32_t bits = bitsOf(x);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) // NaN
    return uint16_t((bits >> 16) | 0x40);
  return uint16_t(shiftRoundEven(bits, 16));
}

float lmopt::runtime::bfloat16ToFloat(uint16_t b) {
  return fromBits(uint32_t(b) << 16);
}
