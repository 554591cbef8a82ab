//===- GatherStep.h - Reporting the CUDA gather steps' bad indices -*- C++ -*-===//
//
// A gather kernel cannot fail its launch on an index out of range without a
// synchronize, so it records the first bad index it finds (position, value,
// step) in a small device buffer shared by the gather steps built on one
// stream, zero-fills that output row and reads nothing outside the data.
// The device reports the record after it synchronizes that stream:
// checkGatherErrors copies the 24 bytes back (only when some gather step on
// the stream is alive), clears the record, and returns the CPU's message
// for that step ("bundle '<source>': gather step '<name>': index 7 at
// position [0, 3] is out of range for axis 0 of size 5 (valid range
// [-5, 4])").
//
// Private to lib/Runtime/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_GATHERSTEP_H
#define LMOPT_LIB_RUNTIME_CUDA_GATHERSTEP_H

#include "CudaApi.h"

namespace lmopt::runtime::cuda {

/// Call after `stream` has been synchronized (Device::synchronize): fails
/// with InvalidArgument naming the gather step, the index and its position
/// when a gather step run on `stream` since the last call met an index out
/// of range; ok otherwise (at no cost when no gather step uses `stream`).
Status checkGatherErrors(const CudaApi &api, CUstream stream);

} // namespace lmopt::runtime::cuda

#endif // LMOPT_LIB_RUNTIME_CUDA_GATHERSTEP_H
