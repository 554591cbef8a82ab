//===- CudaKernels.h - The CUDA target's kernel payload ---------*- C++ -*-===//
//
// What the `kernels` section of a bundle compiled with `--target=cuda`
// holds: one CUDA binary (a cubin for the architecture it names) with every
// generated kernel of the plan, and for each kernel how to launch it. The
// compiler writes it (lib/Target/CUDA), the runtime's CUDA device reads it
// (lib/Runtime/CUDA); docs/bundle-format.md describes the bytes.
//
// Layout, little-endian:
//   char[4] "LMCK", u32 version (1), u32 smVersion (90 for sm_90),
//   u32 kernelCount, then per kernel:
//     u32 nameLength, name bytes (the kernel's symbol in the image),
//     u32 numOperands, u32 numResults, u32 numDynamicSizes,
//     u32 blockSize, u32 gridTensor, u32 gridAxes, u32 unitsPerBlock,
//     u32 sharedBytes,
//   u64 imageSize, image bytes (the cubin), and nothing after it.
//
// Launch contract of a kernel (the plan step's `entry` attribute names it):
// its parameters are the device addresses of its operands then of its
// results (plan step order, each a 64-bit pointer), then one 64-bit integer
// per dynamic dim of its operands then results, each in dim order (the same
// order as the CPU kernels' size array). It runs with `blockSize` threads in
// x and `sharedBytes` bytes of dynamic shared memory on a grid of
// ceil(units / unitsPerBlock) blocks in x (capped at 2^31 - 1), where units
// is the product of dims [0, gridAxes) of tensor `gridTensor` (operands
// then results) at run time; no launch when units is 0. Kernels loop over
// their work with a grid stride, so any grid size is correct and the grid
// only sets how parallel they run.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_CUDAKERNELS_H
#define LMOPT_FORMAT_CUDAKERNELS_H

#include "lmopt/Format/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime {

struct CudaKernelInfo {
  std::string name;
  uint32_t numOperands = 0;
  uint32_t numResults = 0;
  uint32_t numDynamicSizes = 0;
  uint32_t blockSize = 256;
  uint32_t gridTensor = 0;
  uint32_t gridAxes = 0;
  uint32_t unitsPerBlock = 1;
  uint32_t sharedBytes = 0;
};

struct CudaKernelPayload {
  /// Compute capability major * 10 + minor the image was compiled for.
  uint32_t smVersion = 90;
  std::vector<CudaKernelInfo> kernels;
  std::vector<uint8_t> image;
};

std::vector<uint8_t> serializeCudaKernels(const CudaKernelPayload &payload);

/// Parses `size` bytes at `data`; InvalidFormat naming `source` and what is
/// wrong (bad magic, truncated, a count or size past the end, blockSize 0
/// or above 1024, unitsPerBlock 0, a name that is empty or not a C
/// identifier, gridTensor out of range, duplicate names, bytes after the
/// image); VersionMismatch for another version.
Status parseCudaKernels(const uint8_t *data, size_t size,
                        const std::string &source, CudaKernelPayload &out);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_CUDAKERNELS_H
