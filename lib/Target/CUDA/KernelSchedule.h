//===- KernelSchedule.h - how a kernel's loops spread over a grid -*- C++ -*-===//
//
// The analysis half of KernelMapping: which buffers each top-level work item
// of a bufferized kernel reads and writes, and from that whether the items
// can run over a whole grid, over a grid after a small prologue every block
// recomputes, or only as one block; and which operands a thread may read
// and write four elements at a time.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_TARGET_CUDA_KERNELSCHEDULE_H
#define LMOPT_LIB_TARGET_CUDA_KERNELSCHEDULE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::lmopt::cuda {

/// A temporary, or a result written by the prologue, is at most this many
/// elements: shape vectors, concatenated dims.
inline constexpr int64_t kMaxPrologueElements = 1024;
/// The iterations a prologue loop may take (reductions included): every
/// block repeats them.
inline constexpr int64_t kMaxPrologueIterations = 4096;

/// The buffer a view is taken of: a function argument, an allocation or a
/// global constant.
Value getRootBuffer(Value value);

/// One top-level work item (linalg.generic, row loop or store) and the root
/// buffers it reads and writes.
struct KernelItem {
  Operation *op;
  llvm::DenseSet<Value> reads, writes;
  /// Set under KernelSchedule::Kind::Prologue: the item runs in every block
  /// on the block's threads (results it writes: in block 0 only), followed
  /// by a barrier.
  bool prologue = false;
};

struct KernelSchedule {
  enum class Kind {
    /// The items are independent: each spreads over the whole grid.
    Grid,
    /// Small items (small static temporaries and results, little work) run
    /// first in every block, the others over the grid.
    Prologue,
    /// The items depend on each other through what the prologue does not
    /// cover: one block, a barrier after each item.
    OneBlock,
    /// Only small items: one block is all the kernel needs.
    Small,
  };
  Kind kind = Kind::Grid;
  SmallVector<KernelItem> items;
};

/// Classifies the top-level items of `func` (stores into `privateBuffers`,
/// which every thread writes for itself, left out). `topLoads` are the
/// top-level memref.loads, which every thread runs where they stand.
/// Iterations of the innermost loop one thread takes at a time when its
/// f32 operands are read and written as vector<4xf32> (ld/st.global.v4).
inline constexpr int64_t kVectorLanes = 4;

/// How an operand of a generic is read and written when a thread takes
/// kVectorLanes consecutive iterations of the innermost loop.
enum class LaneAccess {
  /// One 16-byte aligned vector access.
  Vector,
  /// One scalar access for all lanes: the innermost loop does not index it.
  Invariant,
  /// One scalar access per lane.
  Scalar,
};

/// The access of each operand of `generic` (inputs, then inits) when its
/// innermost loop, which must be of `iterator` type, is taken kVectorLanes
/// iterations at a time; none when that loop is not of static size a
/// multiple of kVectorLanes or no operand would be a vector. An operand is
/// a Vector when it is f32, the innermost loop indexes its innermost dim
/// only, and that dim is contiguous in a buffer that starts 16-byte aligned
/// (a function argument or global constant: 64-byte aligned) with a static
/// innermost dim a multiple of kVectorLanes, so every run of lanes starts
/// aligned.
std::optional<SmallVector<LaneAccess>>
planVectorLanes(Operation *generic, utils::IteratorType iterator);

KernelSchedule scheduleKernelItems(func::FuncOp func, ArrayRef<Operation *> ops,
                                   ArrayRef<Operation *> topLoads,
                                   const llvm::DenseSet<Value> &privateBuffers);

} // namespace mlir::lmopt::cuda

#endif // LMOPT_LIB_TARGET_CUDA_KERNELSCHEDULE_H
