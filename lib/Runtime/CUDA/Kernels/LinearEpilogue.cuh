//===- LinearEpilogue.cuh - What cuBLASLt's epilogues cannot do ----------===//
//
// A linear step's epilogue when cuBLASLt cannot fuse it (CudaMatmul.cpp):
// exact GELU (cuBLASLt's GELU is the tanh approximation), and an activation
// followed by a residual (cuBLASLt adds C before its activation). Reads the
// matrix product (bias added) from `in`, writes `out` (which may be `in`):
// out = act(in) + residual, residual optional. Computed in f32.
//
// Included by RuntimeKernels.cu, which nvcc compiles into the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_KERNELS_LINEAREPILOGUE_CUH
#define LMOPT_LIB_RUNTIME_CUDA_KERNELS_LINEAREPILOGUE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace lmopt_linear_epilogue {

// The values of LinearActivation (lmopt/Runtime/CPU/LinearStep.h).
enum Activation : int { None = 0, Relu = 1, Gelu = 2, GeluTanh = 3 };

__device__ inline float load(const float *p, long long i) { return p[i]; }
__device__ inline float load(const __half *p, long long i) {
  return __half2float(p[i]);
}
__device__ inline float load(const __nv_bfloat16 *p, long long i) {
  return __bfloat162float(p[i]);
}
__device__ inline void store(float *p, long long i, float v) { p[i] = v; }
__device__ inline void store(__half *p, long long i, float v) {
  p[i] = __float2half_rn(v);
}
__device__ inline void store(__nv_bfloat16 *p, long long i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

__device__ inline float activate(float x, int activation) {
  switch (activation) {
  case Relu:
    return fmaxf(x, 0.0f);
  case Gelu:
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  case GeluTanh: {
    float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
  }
  default:
    return x;
  }
}

template <typename T>
__device__ void run(T *out, const T *in, const T *residual, long long count,
                    int activation) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    float v = activate(load(in, i), activation);
    if (residual)
      v += load(residual, i);
    store(out, i, v);
  }
}

} // namespace lmopt_linear_epilogue

extern "C" __global__ void
lmopt_linear_epilogue_f32(float *out, const float *in, const float *residual,
                          long long count, int activation) {
  lmopt_linear_epilogue::run(out, in, residual, count, activation);
}

extern "C" __global__ void
lmopt_linear_epilogue_f16(__half *out, const __half *in, const __half *residual,
                          long long count, int activation) {
  lmopt_linear_epilogue::run(out, in, residual, count, activation);
}

extern "C" __global__ void
lmopt_linear_epilogue_bf16(__nv_bfloat16 *out, const __nv_bfloat16 *in,
                           const __nv_bfloat16 *residual, long long count,
                           int activation) {
  lmopt_linear_epilogue::run(out, in, residual, count, activation);
}

#endif // LMOPT_LIB_RUNTIME_CUDA_KERNELS_LINEAREPILOGUE_CUH
