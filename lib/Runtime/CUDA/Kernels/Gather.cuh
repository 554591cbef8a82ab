//===- Gather.cuh - ONNX Gather with checked indices ------------*- CUDA -*-===//
//
// Output row r = (o, i) of outer x count rows is data row (o, indices[i]).
// `rowThreads` threads copy one row in units of U bytes (the widest that
// the row size and both addresses allow: 16 for an f32 embedding row), so a
// block copies blockDim / rowThreads rows at a time, grid-striding over
// rows. Indices come from user input: every one is checked (by a grid-stride
// pass of its own, so that an empty row still has its indices checked, as
// on the CPU), the first found out of range is recorded as {position,
// value, step} in `error` (one record per stream, shared by its gather
// steps) for the device to report after the next synchronize,
// and its output row is zero-filled: no read ever leaves the data.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_KERNELS_GATHER_CUH
#define LMOPT_LIB_RUNTIME_CUDA_KERNELS_GATHER_CUH

#include "KernelParams.cuh"

namespace lmopt_kernels {

__device__ __forceinline__ long long gatherIndex(const GatherParams &p,
                                                 long long i) {
  return p.indices64 ? __ldg(static_cast<const long long *>(p.indices) + i)
                     : (long long)__ldg(static_cast<const int *>(p.indices) + i);
}

/// The data row `index` selects, or -1 when it is out of range.
__device__ __forceinline__ long long gatherRow(const GatherParams &p,
                                               long long index) {
  long long row = index < 0 ? index + p.axisSize : index;
  return row >= 0 && row < p.axisSize ? row : -1;
}

__device__ __forceinline__ void checkGatherIndices(const GatherParams &p) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < p.count; i += stride) {
    long long index = gatherIndex(p, i);
    if (gatherRow(p, index) >= 0)
      continue;
    auto *slot = reinterpret_cast<unsigned long long *>(p.error);
    if (atomicCAS(slot, ~0ull, (unsigned long long)i) == ~0ull) {
      p.error[1] = index;
      p.error[2] = p.stepId;
    }
  }
}

/// Rows copied unit by unit; a unit of U (a 1-16 byte POD type).
template <typename U> __device__ __forceinline__ void gatherRows(const GatherParams &p) {
  checkGatherIndices(p);
  const int sub = threadIdx.x % p.rowThreads;
  const long long rowsPerBlock = blockDim.x / p.rowThreads;
  const long long rows = p.outer * p.count;
  const U *src = static_cast<const U *>(p.data);
  U *dst = static_cast<U *>(p.out);
  for (long long r = blockIdx.x * rowsPerBlock + threadIdx.x / p.rowThreads;
       r < rows; r += gridDim.x * rowsPerBlock) {
    long long o = r / p.count, i = r - o * p.count;
    long long row = gatherRow(p, gatherIndex(p, i));
    U *to = dst + r * p.rowUnits;
    if (row < 0) {
      for (long long u = sub; u < p.rowUnits; u += p.rowThreads)
        to[u] = U{};
      continue;
    }
    const U *from = src + (o * p.axisSize + row) * p.rowUnits;
    for (long long u = sub; u < p.rowUnits; u += p.rowThreads)
      to[u] = from[u];
  }
}

/// int8 rows (axis 0) dequantized to f32 with one scale per row.
__device__ __forceinline__ void gatherDequantRows(const GatherParams &p) {
  checkGatherIndices(p);
  const int sub = threadIdx.x % p.rowThreads;
  const long long rowsPerBlock = blockDim.x / p.rowThreads;
  const signed char *src = static_cast<const signed char *>(p.data);
  float *dst = static_cast<float *>(p.out);
  for (long long r = blockIdx.x * rowsPerBlock + threadIdx.x / p.rowThreads;
       r < p.count; r += gridDim.x * rowsPerBlock) {
    long long row = gatherRow(p, gatherIndex(p, r));
    float *to = dst + r * p.rowUnits;
    if (row < 0) {
      for (long long u = sub; u < p.rowUnits; u += p.rowThreads)
        to[u] = 0.0f;
      continue;
    }
    const signed char *from = src + row * p.rowUnits;
    const float scale = __ldg(p.scales + row);
    for (long long u = sub; u < p.rowUnits; u += p.rowThreads)
      to[u] = float(from[u]) * scale;
  }
}

} // namespace lmopt_kernels

#endif // LMOPT_LIB_RUNTIME_CUDA_KERNELS_GATHER_CUH
