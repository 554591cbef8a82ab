//===- WeightOnlyGemm.h - f32 GEMM over int4 and f16 weights ----*- C++ -*-===//
//
// The weight-only kernels behind QuantLinearStep's int4 and fp16 modes: the
// weight is held packed (4-bit nibbles with block scales, or IEEE halves) in
// 64-column panels, each panel is widened to f32 K chunk by K chunk into a
// buffer that stays in L1, and an AVX-512 FMA micro-kernel multiplies every
// input row with it; products are summed in f32. The input is first regrouped
// (and, for f16, widened) into a row-interleaved copy so that the
// micro-kernel reads one sequential stream. Each function has a portable
// form computing the same values. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_WEIGHTONLYGEMM_H
#define LMOPT_LIB_RUNTIME_CPU_WEIGHTONLYGEMM_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace lmopt::runtime::quant {

/// Output columns per panel.
constexpr int64_t kPanel = 64;

/// An int4 weight repacked for gemmInt4: 64-column panels, each K rows of
/// 32 bytes (byte j of row k: column j in the low nibble, column j + 32 in
/// the high one, as unsigned 0..15), with per-panel, per-block f32 scales
/// and zero points (already shifted for signed weights, held as the f32
/// value 2^23 + zp for the dequantization). Columns past N are zero.
struct Int4Panels {
  static constexpr int64_t kPanel = quant::kPanel;
  int64_t k = 0, n = 0, blockSize = 0, panels = 0, blocks = 0;
  std::vector<uint8_t> nibbles;  // [panels][k][32]
  std::vector<float> scales;     // [panels][blocks][64]
  std::vector<float> zeroPoints; // [panels][blocks][64], 2^23 + zp
  uint64_t bytes() const {
    return nibbles.size() + scales.size() * 4 + zeroPoints.size() * 4;
  }
};

/// An f16 weight repacked for gemmF16: 64-column panels of K rows of 64
/// IEEE half values (2 bytes each, never widened as a whole). Columns past
/// N are zero.
struct F16Panels {
  int64_t k = 0, n = 0, panels = 0;
  std::vector<uint16_t> halves; // [panels][k][64]
  uint64_t bytes() const { return halves.size() * 2; }
};

/// Repacks the step's int4 weight ([N, K/2] bytes, the even k in the low
/// nibble; scales and zero points [N, K / blockSize]); zeroPoints may be
/// null.
void packInt4(const uint8_t *weight, const float *scales,
              const void *zeroPoints, bool weightSigned, int64_t k, int64_t n,
              int64_t blockSize, Int4Panels &out);

/// Repacks an f16 weight stored [K, N], or [N, K] when `transposed`.
void packF16(const uint16_t *weight, bool transposed, int64_t k, int64_t n,
             F16Panels &out);

/// Called by each thread of a GEMM with rows [r0, r1) of the product that
/// are complete (disjoint between threads); used to apply the epilogue to
/// rows while they are in cache.
using RowsDone = std::function<void(int64_t r0, int64_t r1)>;

/// Floats of the scratch buffer the GEMMs regroup the input into, for
/// `threads` threads (0: OpenMP's default team); a GEMM then runs with at
/// most as many.
size_t gemmScratchFloats(int64_t rows, int64_t k, int threads);

/// acc[rows, panels * 64] = x[rows, k] x dequantize(w), f32; `scratch`
/// holds gemmScratchFloats(rows, k, threads) floats. `done` may be empty.
void gemmInt4(const float *x, int64_t rows, const Int4Panels &w, float *scratch,
              float *acc, int threads, bool avx512, const RowsDone &done);

/// acc[rows, panels * 64] = widen(x[rows, k]) x widen(w), f32, where x holds
/// IEEE half bits; f16 x f16 products are exact in f32, so this is the f16
/// linear with f32 accumulation.
void gemmF16(const uint16_t *x, int64_t rows, const F16Panels &w,
             float *scratch, float *acc, int threads, bool avx512,
             const RowsDone &done);

} // namespace lmopt::runtime::quant

#endif // LMOPT_LIB_RUNTIME_CPU_WEIGHTONLYGEMM_H
