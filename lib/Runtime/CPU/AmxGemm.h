//===- AmxGemm.h - bf16 products on AMX tiles -------------------*- C++ -*-===//
//
// The bf16 and int8 quantized linears' products on Intel AMX (AMX-TILE,
// AMX-BF16, AMX-INT8): bf16 x bf16 with f32 accumulation, or s8/u8 x s8 with
// i32 accumulation scaled by the weight's scales, and the linear's epilogue
// (row scale, bias, activation, residual) applied to each 32 x 32 block of
// the product while it is in cache. Used by QuantLinearStep where the CPU
// and the kernel allow AMX and oneDNN's ISA cap includes it; oneDNN's matmul
// runs elsewhere. Internal to the runtime.
//
// Layout. The weight is packed once into panels of 16 output columns: panel
// p holds, for each group of G consecutive K rows (G = 2 for bf16, 4 for
// int8), the 16 columns' G values side by side (64 bytes), which is the B
// operand layout of TDPBF16PS and TDPB[SU]SD, so a 16-row slice of a panel
// (32 bf16 or 64 int8 values of K) is one contiguous 1 KiB tile. K is padded
// to a multiple of that step and N to a multiple of 32 with zeros.
//
// Blocking (both types). Each thread takes a contiguous range of 32-column
// blocks (or, when there are fewer blocks than threads, a range of 32-row
// blocks), in chunks whose packed weight fits in L2 (768 KiB); for each 32-row
// block of the input it runs K in slices of 512 bytes per row when a row
// has at most 2048 (the input slice, 16 KiB, stays in L1 while every column
// block of the chunk multiplies it), whole when it has at most 8192 (the
// 32-row block stays in L2 and no partial sums are stored), else in slices
// of 1024: four accumulator tiles (32 x 32 f32) per block, two input tiles
// and two weight tiles per step of 32 K values. Partial sums between slices
// are kept in a per-thread buffer. The first row block of each chunk, which
// reads the chunk's weight from memory, prefetches its panels a few tiles
// ahead. An input of at most 4 row blocks (128 rows) runs column block by
// column block instead: each row block over the whole K, while the next
// column block's panels are prefetched to L2.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_AMXGEMM_H
#define LMOPT_LIB_RUNTIME_CPU_AMXGEMM_H

#include "QuantKernels.h"

#include <cstddef>
#include <cstdint>
#include <memory>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace lmopt::runtime::quant {

/// True when the CPU has AMX-TILE and AMX-BF16, the kernel let this process
/// use the tile registers, and oneDNN's ISA cap (ONEDNN_MAX_CPU_ISA)
/// includes AMX. Asked once per process.
bool amxBf16Usable();

/// True when amxBf16Usable's conditions hold for AMX-INT8.
bool amxInt8Usable();

/// A weight packed for gemmAmxBf16 or gemmAmxInt8.
struct AmxWeight {
  struct Free {
    void operator()(void *p) const;
  };
  /// The packed values: `owned`'s buffer, or one the caller lends.
  std::unique_ptr<uint8_t[], Free> owned;
  uint8_t *data = nullptr;
  /// 2 (bf16) or 1 (int8).
  int64_t elementBytes = 2;
  int64_t k = 0, n = 0, kPadded = 0, nPadded = 0;
  size_t bytes() const { return size_t(kPadded * nPadded * elementBytes); }
};

/// Packs `weight` ([K, N], or [N, K] when `transposed`): bf16 bits, or s8
/// values. False when the buffer cannot be allocated.
bool packAmxBf16(const uint16_t *weight, bool transposed, int64_t k, int64_t n,
                 AmxWeight &out);
bool packAmxInt8(const int8_t *weight, bool transposed, int64_t k, int64_t n,
                 AmxWeight &out);

/// A bf16 weight whose values change from run to run (a training step's
/// bf16 copy of a parameter, or a gradient that a weight gradient multiplies
/// by): layoutAmxBf16 sets the sizes (the caller points `data` at
/// bytes() bytes, 64-byte aligned), repackAmxBf16 fills it before each
/// product, split over `threads` OpenMP threads (0: the default).
void layoutAmxBf16(int64_t k, int64_t n, AmxWeight &out);
void repackAmxBf16(const uint16_t *weight, bool transposed, AmxWeight &out,
                   int threads);

/// out = in^T for bf16 `in` [rows, cols] (out [cols, rows]), split over
/// `threads` OpenMP threads (0: the default): a weight gradient's x^T.
void transposeBf16(const uint16_t *in, int64_t rows, int64_t cols,
                   uint16_t *out, int threads);

/// Loads the tile configuration the products use for a block of `rows`
/// (1..32) rows: tiles 0-3 accumulate a 32 x 32 block (0: rows 0-15 x
/// columns 0-15, 1: rows 0-15 x 16-31, 2 and 3 the same for rows 16-31), 4
/// and 5 hold the A operand's two 16-row halves (64 bytes per row), 6 and 7
/// two 16-column B panels. Only where amxBf16Usable() or amxInt8Usable().
void configureAmxTiles(int64_t rows);

/// Bytes of scratch the products need for `rows` rows: a copy of the input
/// with K padded, when K is not a multiple of the tile step (else 0).
size_t amxScratchBytes(int64_t rows, const AmxWeight &w);

/// out[r, c] = epilogue(input[r, :] x W[:, c]) for r < rows, c < N, with
/// `input` bf16 [rows, K] and the epilogue's bias, activation and residual
/// (e.rowScales, columnShift and rowSums must be null; e.residual may be
/// `out`; with e.bf16Out or e.q8Out, `out` is null and the output goes
/// there).
/// `scratch` holds amxScratchBytes(rows, w) bytes, 64-byte aligned. Runs
/// on `threads` OpenMP threads (0: the OpenMP default). Only where
/// amxBf16Usable().
void gemmAmxBf16(const uint16_t *input, int64_t rows, const AmxWeight &w,
                 const Epilogue &e, float *out, int threads, void *scratch);

/// The same for int8: `input` is s8 (`inputSigned`) or u8 [rows, K], and
/// each i32 sum is multiplied by weightScales[c] (`perChannel`) or
/// weightScales[0] before the epilogue, which may use rowScales (or
/// uniformScale) and columnShift with rowSums as applyEpilogue does. With
/// `columnOffsets`, columnOffsets[c] is subtracted from column c's i32 sums
/// first (an input zero point zp: zp * sum_k W[k, c], exact in i32). Only
/// where amxInt8Usable().
void gemmAmxInt8(const void *input, bool inputSigned, int64_t rows,
                 const AmxWeight &w, const float *weightScales, bool perChannel,
                 const Epilogue &e, float *out, int threads, void *scratch,
                 const int32_t *columnOffsets = nullptr);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// Word j of the result is a's 16-bit value j/2 (even j) or b's (odd j):
/// two rows' 16 values as the pairs of a tile row (the weight panels here,
/// V in AmxAttention.cpp). AVX-512 BW only, so that the tile code of either
/// file inlines it; call it only where the CPU has that.
__attribute__((target("avx512f,avx512bw"))) inline __m512i
interleave16(__m256i a, __m256i b) {
  alignas(64) static const uint16_t order[32] = {
      0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
      8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  return _mm512_permutex2var_epi16(_mm512_castsi256_si512(a),
                                   _mm512_load_si512(order),
                                   _mm512_castsi256_si512(b));
}
#endif

} // namespace lmopt::runtime::quant

#endif // LMOPT_LIB_RUNTIME_CPU_AMXGEMM_H
