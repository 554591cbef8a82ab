// TEMPORARY placeholder: replaced when the runtime's kernels are merged. The
// merged file must keep including LinearEpilogue.cuh (the linear steps'
// exact GELU and activation-then-residual epilogue, CudaMatmul.cpp).
#include "LinearEpilogue.cuh"

extern "C" __global__ void lmopt_noop() {}
