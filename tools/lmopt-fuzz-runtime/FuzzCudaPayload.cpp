//===- FuzzCudaPayload.cpp - libFuzzer target for CUDA kernel payloads ----===//
//
// The `kernels` section of a CUDA bundle, parsed as the runtime's CUDA
// device does before it loads the image. What parses must serialize back to
// the same bytes (the format has one encoding).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/CudaKernels.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace lmopt::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  CudaKernelPayload payload;
  if (!parseCudaKernels(data, size, "input", payload))
    return 0;
  std::vector<uint8_t> bytes = serializeCudaKernels(payload);
  if (bytes.size() != size || std::memcmp(bytes.data(), data, size) != 0) {
    std::fprintf(stderr, "lmopt-fuzz-cuda-payload: reserialized payload "
                         "differs from the input\n");
    std::abort();
  }
  return 0;
}
