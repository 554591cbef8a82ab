//===- Float16.h - IEEE half and bfloat16 conversions -----------*- C++ -*-===//
//
// The one scalar implementation of f32 <-> f16 (IEEE binary16) and
// f32 <-> bf16 conversion, on bit patterns, for code that holds 16-bit floats
// as uint16_t: runtime kernels' scalar paths, .npy tools, the quantizer's
// f16 scale rounding, tests. It rounds to nearest even and keeps subnormals,
// infinities and NaN payloads the way the x86 conversion instructions do
// (F16C vcvtps2ph/vcvtph2ps, AVX512-BF16 vcvtneps2bf16 on normal inputs), so
// a scalar tail agrees bit for bit with a vectorized body; the unit tests
// check that against the instructions. No MLIR or LLVM dependency.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_FLOAT16_H
#define LMOPT_FORMAT_FLOAT16_H

#include <cstdint>

namespace lmopt::runtime {

/// The IEEE half bits nearest `x` (ties to even; 65520 and above overflow to
/// infinity, values below 2^-25 to zero). A NaN stays a NaN of the same
/// sign: quieted, with the top 9 bits of its payload.
uint16_t floatToHalf(float x);

/// The value of IEEE half bits `h`, exact (subnormals included); a NaN is
/// quieted and keeps its payload.
float halfToFloat(uint16_t h);

/// The bfloat16 bits nearest `x` (ties to even, subnormals kept). A NaN
/// stays a NaN of the same sign: quieted, with the top 6 bits of its payload.
uint16_t floatToBFloat16(float x);

/// The value of bfloat16 bits `b`, exact.
float bfloat16ToFloat(uint16_t b);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_FLOAT16_H
