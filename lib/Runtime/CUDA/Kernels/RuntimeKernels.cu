//===- RuntimeKernels.cu - The runtime's own CUDA kernels -----------------===//
//
// The one translation unit nvcc compiles into the runtime's embedded fatbin
// (CMakeLists.txt beside it). Every kernel is `extern "C"` with a stable
// name that the executors look up with cuModuleGetFunction, and takes one
// parameter block by value (KernelParams.cuh):
//
//   lmopt_attention_{prefill,decode,combine}_{f32,f16,bf16}_d{32,64,128}
//       (AttentionParams; the head dim padded up to 32, 64 or 128)
//   lmopt_gather_rows_u{1,2,4,8,16}, lmopt_gather_dequant_i8
//       (GatherParams)
//
//===----------------------------------------------------------------------===//

#include "Attention.cuh"
#include "Gather.cuh"
#include "LinearEpilogue.cuh"

using namespace lmopt_kernels;

#define LMOPT_ATTENTION_KERNELS(T, NAME, DP)                                   \
  extern "C" __global__ void __launch_bounds__(kAttentionThreads)             \
      lmopt_attention_prefill_##NAME##_d##DP(const AttentionParams p) {        \
    attentionPrefill<T, DP>(p);                                                \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(kDecodeThreads)                \
      lmopt_attention_decode_##NAME##_d##DP(const AttentionParams p) {         \
    attentionDecode<T, DP>(p);                                                 \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(kDecodeThreads)                \
      lmopt_attention_combine_##NAME##_d##DP(const AttentionParams p) {        \
    attentionCombine<T, DP>(p);                                                \
  }

#define LMOPT_ATTENTION_HEAD_DIMS(T, NAME)                                     \
  LMOPT_ATTENTION_KERNELS(T, NAME, 32)                                         \
  LMOPT_ATTENTION_KERNELS(T, NAME, 64)                                         \
  LMOPT_ATTENTION_KERNELS(T, NAME, 128)

LMOPT_ATTENTION_HEAD_DIMS(float, f32)
LMOPT_ATTENTION_HEAD_DIMS(__half, f16)
LMOPT_ATTENTION_HEAD_DIMS(__nv_bfloat16, bf16)


#define LMOPT_GATHER_KERNEL(U, BYTES)                                          \
  extern "C" __global__ void lmopt_gather_rows_u##BYTES(                       \
      const GatherParams p) {                                                  \
    gatherRows<U>(p);                                                          \
  }

LMOPT_GATHER_KERNEL(unsigned char, 1)
LMOPT_GATHER_KERNEL(unsigned short, 2)
LMOPT_GATHER_KERNEL(unsigned int, 4)
LMOPT_GATHER_KERNEL(uint2, 8)
LMOPT_GATHER_KERNEL(uint4, 16)

extern "C" __global__ void lmopt_gather_dequant_i8(const GatherParams p) {
  gatherDequantRows(p);
}
