//===- Common.cuh - What the runtime's CUDA kernels share -------*- CUDA -*-===//
//
// Element conversions for the dtypes the kernels read and write (f32, f16,
// bf16; arithmetic is always f32).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_KERNELS_COMMON_CUH
#define LMOPT_LIB_RUNTIME_CUDA_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace lmopt_kernels {

__device__ __forceinline__ float toF32(float x) { return x; }
__device__ __forceinline__ float toF32(__half x) { return __half2float(x); }
__device__ __forceinline__ float toF32(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

template <typename T> __device__ __forceinline__ T fromF32(float x);
template <> __device__ __forceinline__ float fromF32<float>(float x) {
  return x;
}
template <> __device__ __forceinline__ __half fromF32<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromF32<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

} // namespace lmopt_kernels

#endif // LMOPT_LIB_RUNTIME_CUDA_KERNELS_COMMON_CUH
