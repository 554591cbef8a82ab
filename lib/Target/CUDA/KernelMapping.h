//===- KernelMapping.h - kernels on buffers onto blocks and threads -*- C++ -*-===//
//
// The CUDA-specific half of kernel code generation: the fusion that suits a
// GPU (recompute instead of a temporary), and the mapping of a bufferized
// kernel (linalg.generic on memrefs, at most row loops around them) onto
// SIMT code: grid-stride loops, one row per block, block reductions with
// warp shuffles, temporaries in shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_TARGET_CUDA_KERNELMAPPING_H
#define LMOPT_LIB_TARGET_CUDA_KERNELMAPPING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::lmopt::cuda {

/// How a mapped kernel is launched (lmopt/Format/CudaKernels.h).
struct KernelLaunch {
  unsigned blockSize = 256;
  unsigned gridTensor = 0;
  unsigned gridAxes = 0;
  unsigned unitsPerBlock = 1;
};

/// On linalg on tensors, before row tiling: named ops become generics,
/// tensor.generate becomes a generic, every elementwise generic with several
/// uses is cloned per use, and elementwise producers fuse into their
/// consumers through any indexing map. A GPU recomputes an elementwise value
/// where a CPU would keep it in a temporary, because a temporary between two
/// differently distributed loops needs a grid-wide barrier.
LogicalResult fuseKernelOpsForGpu(ModuleOp module);

/// Rewrites `func` (bufferized, results as out-params, no dynamic-size
/// arguments yet) into SIMT code that reads gpu.thread_id/block_id/grid_dim
/// and is correct for any grid: each top-level generic is a grid-stride loop
/// (one element per thread), each row loop gives one row to a block at a
/// time (grid stride over the rows) with the row's generics split over the
/// block's threads, barriers between them, reductions combined by warp
/// shuffles and shared memory. A kernel whose top-level loops depend on each
/// other through small static temporaries recomputes them in every block
/// first; other dependent kernels run as one block. Temporaries become shared memory (memref.alloc
/// in the workgroup address space, turned into attributions later).
/// Unsupported IR is reported ("no CUDA lowering for ...").
FailureOr<KernelLaunch> mapKernelToThreads(func::FuncOp func,
                                           unsigned blockSize);

} // namespace mlir::lmopt::cuda

#endif // LMOPT_LIB_TARGET_CUDA_KERNELMAPPING_H
