//===- QuantKernels.h - Loops behind the quantized linear step --*- C++ -*-===//
//
// The passes QuantLinearStep runs around (or instead of) oneDNN: input
// quantization, the epilogue that applies the row scale, bias, activation
// and residual to a product, and the f16 widening (the int4 and f16
// weight-only GEMMs are in WeightOnlyGemm.h). Each
// has an AVX-512 form and a portable one computing the same values (the
// portable one runs where oneDNN's ISA cap or the CPU excludes AVX-512).
// Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_QUANTKERNELS_H
#define LMOPT_LIB_RUNTIME_CPU_QUANTKERNELS_H

#include "lmopt/Runtime/CPU/LinearStep.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime::quant {

/// True when the AVX-512 forms may run (CPU support and oneDNN's ISA cap).
bool useAvx512();

/// True when the CPU has AVX512-BF16's conversions (CPUID.(7, 1):EAX bit
/// 5). Asked once per process.
bool avx512Bf16Usable();

/// Per-token quantization: row r of `x` ([rows, k]) becomes
/// q[r, :] = round_half_even(x / s) with s = max|x[r, :]| / 127 (1 for a
/// row of zeros); scales[r] = s. Rows are split over `threads` (0: the
/// OpenMP default) when there are enough of them.
void quantizeRowsS8(const float *x, int64_t rows, int64_t k, int8_t *q,
                    float *scales, int threads, bool avx512);

/// ONNX DynamicQuantizeLinear over `count` values: scale and zero point
/// from min(0, min x) and max(0, max x), q = saturate(round(x / scale) +
/// zeroPoint). An all-zero input gets scale 0, zero point 0 and q = 0.
void quantizeTensorU8(const float *x, int64_t count, uint8_t *q, float &scale,
                      int32_t &zeroPoint, int threads, bool avx512);

/// out[r, c] = act(acc[r, c] * rowScale(r) + bias[c]) + residual[r, c] for
/// r < rows, c < n. `acc` rows are `accStride` apart; rowScale(r) is
/// rowScales[r], or `uniformScale` when rowScales is null; bias and
/// residual may be null; residual may equal out (and out may equal acc
/// when accStride == n).
///
/// With `columnShift` and `rowSums` (weight zero points), acc[r, c] is
/// first reduced by columnShift[c] * rowSums[r].
///
/// With `bf16Out` (and no residual), the values go there as bf16 (rounded
/// as floatToBFloat16 rounds, the strides of `out`) and `out` is not
/// written.
///
/// With `q8Out` (and no residual), the values go there quantized as a
/// static QuantizeLinear (lmopt.quantize) writes them: v / q8Scale in f32,
/// rounded half to even, plus q8ZeroPoint, saturated to u8 (or i8 with
/// q8Signed), one byte each at the strides of `out`, which is not written.
/// (NaN gives 0.)
/// What keeps `scale` and `zeroPoint` from defining a static
/// QuantizeLinear to u8 (or i8 with `isSigned`), as "<role> scale ... is
/// not a positive finite number" or "<role> zero point ... is outside the
/// u8 range"; empty when they do. For Epilogue's q8 fields and the steps
/// that fill them.
std::string staticQuantProblem(const std::string &role, float scale,
                               int32_t zeroPoint, bool isSigned);

struct Epilogue {
  const float *columnShift = nullptr;
  const float *rowSums = nullptr;
  const float *rowScales = nullptr;
  float uniformScale = 1.0f;
  const float *bias = nullptr;
  LinearActivation activation = LinearActivation::None;
  const float *residual = nullptr;
  uint16_t *bf16Out = nullptr;
  uint8_t *q8Out = nullptr;
  float q8Scale = 1.0f;
  int32_t q8ZeroPoint = 0;
  bool q8Signed = false;
};
void applyEpilogue(const float *acc, int64_t accStride, int64_t rows,
                   int64_t n, const Epilogue &e, float *out, int threads,
                   bool avx512);

/// The epilogue on one block of `rows` x `n` on the calling thread, with
/// the output's and the residual's rows `outStride` apart (the block's
/// first element at out[0] and e.residual[0]; e.bias and e.columnShift
/// start at the block's first column; e.rowScales and e.rowSums at its
/// first row).
void applyEpilogueBlock(const float *acc, int64_t accStride, int64_t rows,
                        int64_t n, const Epilogue &e, float *out,
                        int64_t outStride, bool avx512);

/// The epilogue, then each row quantized as quantizeRowsS8 would: q
/// [rows, n] and scales [rows]. `acc` ([rows, n], dense) is overwritten
/// with the f32 rows (e.residual must be null).
void applyEpilogueQuantized(float *acc, int64_t rows, int64_t n,
                            const Epilogue &e, int8_t *q, float *scales,
                            int threads, bool avx512);

/// rowSums[r] = sum over k of (q[r, k] - zeroPoint), q signed or unsigned
/// bytes.
void sumRows(const void *q, bool isSigned, int64_t rows, int64_t k,
             int32_t zeroPoint, float *rowSums);

/// out[i] = the f16 value bits[i] (IEEE half, subnormals included) as f32,
/// for i < count; AVX-512's vcvtph2ps where available.
void widenF16(const uint16_t *bits, size_t count, float *out);

} // namespace lmopt::runtime::quant

#endif // LMOPT_LIB_RUNTIME_CPU_QUANTKERNELS_H
