//===- AmxGemm.h - bf16 products on AMX tiles -------------------*- C++ -*-===//
//
// The bf16 quantized linear's product on Intel AMX (AMX-TILE and AMX-BF16):
// bf16 input x bf16 weight with f32 accumulation, and the linear's epilogue
// (bias, activation, residual) applied to each 32 x 32 block of the product
// while it is in cache. Used by QuantLinearStep in bf16 mode where the CPU
// and the kernel allow AMX and oneDNN's ISA cap includes it; oneDNN's matmul
// runs elsewhere. Internal to the runtime.
//
// Layout. The weight is packed once into panels of 16 output columns: panel
// p holds, for each pair of K rows (2i, 2i + 1), the 16 columns' two values
// side by side (64 bytes), which is the B operand layout of TDPBF16PS, so a
// 16-row slice of a panel (32 values of K) is one contiguous 1 KiB tile. K is
// padded to a multiple of 32 and N to a multiple of 32 with zeros.
//
// Blocking. Each thread takes a contiguous range of 32-column blocks (or,
// when there are fewer blocks than threads, a range of 32-row blocks), in
// chunks whose packed weight fits in L2 (768 KiB); for each 32-row block of
// the input it runs K in slices of 256 (K <= 1024) or 512 values, so the
// input slice (32 x 256 or 512 bf16, 16 or 32 KiB) stays in L1 while every
// column block of the chunk multiplies it: four accumulator tiles (32 x 32
// f32) per block, two input tiles and two weight tiles per step of 32 K
// values. Partial sums between slices are kept in a per-thread buffer.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_AMXGEMM_H
#define LMOPT_LIB_RUNTIME_CPU_AMXGEMM_H

#include "QuantKernels.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace lmopt::runtime::quant {

/// True when the CPU has AMX-TILE and AMX-BF16, the kernel let this process
/// use the tile registers, and oneDNN's ISA cap (ONEDNN_MAX_CPU_ISA)
/// includes AMX. Asked once per process.
bool amxBf16Usable();

/// A weight packed for gemmAmxBf16.
struct AmxBf16Weight {
  struct Free {
    void operator()(uint16_t *p) const;
  };
  std::unique_ptr<uint16_t[], Free> data;
  int64_t k = 0, n = 0, kPadded = 0, nPadded = 0;
  size_t bytes() const { return size_t(kPadded * nPadded) * 2; }
};

/// Packs `weight` (bf16 bits, [K, N], or [N, K] when `transposed`). False
/// when the buffer cannot be allocated.
bool packAmxBf16(const uint16_t *weight, bool transposed, int64_t k, int64_t n,
                 AmxBf16Weight &out);

/// Bytes of scratch gemmAmxBf16 needs for `rows` rows: a copy of the input
/// with K padded, when K is not a multiple of 32 (else 0).
size_t amxBf16ScratchBytes(int64_t rows, const AmxBf16Weight &w);

/// out[r, c] = epilogue(input[r, :] x W[:, c]) for r < rows, c < N, with
/// `input` bf16 [rows, K] and the epilogue's bias, activation and residual
/// (e.rowScales, columnShift and rowSums must be null; e.residual may be
/// `out`). `scratch` holds amxBf16ScratchBytes(rows, w) bytes, 64-byte
/// aligned. Runs on `threads` OpenMP threads (0: the OpenMP default). Only
/// where amxBf16Usable().
void gemmAmxBf16(const uint16_t *input, int64_t rows, const AmxBf16Weight &w,
                 const Epilogue &e, float *out, int threads, void *scratch);

} // namespace lmopt::runtime::quant

#endif // LMOPT_LIB_RUNTIME_CPU_AMXGEMM_H
