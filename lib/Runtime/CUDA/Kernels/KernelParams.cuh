//===- KernelParams.cuh - Kernel parameter blocks, host and device -*- C++ -*-===//
//
// The parameter blocks the runtime's attention and gather kernels take by
// value (one kernel argument each), shared by the executors that fill them
// (AttentionStep.cpp, GatherStep.cpp) and the kernels (RuntimeKernels.cu):
// plain C++ with no CUDA header, so that the host compiler reads it too.
// The kernel names are listed here for the same reason.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_KERNELS_KERNELPARAMS_CUH
#define LMOPT_LIB_RUNTIME_CUDA_KERNELS_KERNELPARAMS_CUH

#include <cstdint>

namespace lmopt_kernels {

/// Mask kinds, as the CPU's AttentionMask.
enum AttentionMaskKind : int {
  kMaskNone = 0,
  kMaskAdditive = 1,
  kMaskBool = 2,
};

/// Query tile and key tile of the prefill kernel, and its threads.
constexpr int kAttentionQueryTile = 64;
constexpr int kAttentionKeyTile = 64;
constexpr int kAttentionThreads = 128;
/// Floats of padding per shared-memory row (16 bytes: keeps float4 rows
/// aligned and spreads 8 consecutive rows over distinct bank groups).
constexpr int kAttentionPad = 4;
/// The decode kernel (few query rows): 4 warps, each taking 4 keys at a
/// time; a split of the keys per block.
constexpr int kDecodeThreads = 128;
constexpr int kDecodeKeysPerWarpStep = 4;
/// Floats per partial result of one (row, split): max, sum, any-shown, pad,
/// then the accumulator padded to the kernel's head dim.
constexpr int kDecodePartialHeader = 4;

/// Prefill kernel's dynamic shared memory for a padded head dim.
constexpr int attentionSharedBytes(int paddedHeadDim) {
  return int(sizeof(float)) *
         (kAttentionQueryTile * (paddedHeadDim + kAttentionPad) +
          2 * kAttentionKeyTile * (paddedHeadDim + kAttentionPad) +
          kAttentionQueryTile * (kAttentionKeyTile + kAttentionPad));
}

/// softmax(scale * Q K^T + mask) V for one attention step. Strides in
/// elements. Query row (b, i) starts at q + (b * queryLength + i) *
/// qRowStride + h * headDim; key j of (b, h) at k + b * kBatchStride + h *
/// kHeadStride + j * kRowStride; the output is dense [B, Sq, H*D].
struct AttentionParams {
  const void *q;
  const void *k;
  const void *v;
  /// f32 (additive) or one byte per element (bool); null without a mask.
  const void *mask;
  void *out;
  /// The decode kernel's partial results (splits > 1), else null.
  float *partial;
  long long qRowStride, kRowStride, vRowStride;
  long long kBatchStride, vBatchStride, kHeadStride, vHeadStride;
  /// Element strides of the mask over [B, H, Sq, Sk] (0 where it
  /// broadcasts).
  long long maskStride[4];
  int batch, heads, queryLength, keyLength, headDim;
  float scale;
  int causal, zeroMaskedRows, maskKind;
  /// Decode: key splits and keys per split (a multiple of 16).
  int splits, keysPerSplit;
};

/// ONNX Gather of rows: output row (o, i) is data row (o, indices[i]) of
/// `rowUnits` units (the kernel's unit size in bytes), or, with row_scales,
/// int8 rows dequantized to f32 (`rowUnits` elements each). The first
/// index out of range on the stream is recorded in `error` ({position,
/// value, step id} as int64; position -1 while none is) and its output row
/// is zero-filled.
struct GatherParams {
  const void *data;
  const void *indices;
  void *out;
  const float *scales;
  long long *error;
  long long outer, count, axisSize;
  /// Units (copy) or elements (dequantize) per row.
  long long rowUnits;
  /// Threads per output row (a power of two dividing the block).
  int rowThreads;
  int indices64;
  /// Names the step in the error record.
  long long stepId;
};

} // namespace lmopt_kernels

#endif // LMOPT_LIB_RUNTIME_CUDA_KERNELS_KERNELPARAMS_CUH
