//===- KernelMapping.cpp - kernels on buffers onto blocks and threads -----===//
//
// A bufferized kernel is a list of top-level work items: linalg.generics on
// memrefs and row loops (the scf.forall of lmopt-tile-kernel-rows) holding
// generics on one row. Each becomes SIMT code in place:
//
// - a top-level generic: a grid-stride loop over its parallel iterations
//   (thread t of the grid takes iterations t, t + gridThreads, ...), each
//   iteration running its reduction loops sequentially;
// - a row loop: block b takes rows b, b + gridDim, ...; each generic of the
//   row is a block-stride loop over its parallel iterations, followed by a
//   barrier; a generic that reduces a row to one value splits the row over
//   the threads and combines the partial values with warp shuffles and a
//   shared-memory step (a combiner arith knows the identity of; other
//   reductions run sequentially in one thread).
//
// Every result element is written by exactly one iteration, so any grid is
// correct. Work items that read what an earlier one wrote (through a
// temporary) cannot be distributed over blocks without a grid barrier. When
// the earlier items are small (KernelSchedule.cpp), every block recomputes
// them into its shared memory first (results they write: from block 0), and
// the rest spreads over the grid; otherwise the kernel runs as one block,
// its items separated by barriers, its temporaries in shared memory.
//
//===----------------------------------------------------------------------===//

#include "KernelMapping.h"

#include "KernelEmitter.h"
#include "KernelSchedule.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cuda;

//===----------------------------------------------------------------------===//
// Preparation: one kind of work op, temporaries placed
//===----------------------------------------------------------------------===//

/// memref.copy and named linalg ops as linalg.generic; deallocations and
/// assertions dropped (buffers live in shared memory or belong to the
/// caller; a kernel cannot report a failed check).
static LogicalResult prepare(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    if (llvm::isa<memref::DeallocOp, cf::AssertOp>(op)) {
      op->erase();
      continue;
    }
    if (auto copy = llvm::dyn_cast<memref::CopyOp>(op)) {
      // A result computed in place is copied onto itself.
      if (copy.getSource() == copy.getTarget()) {
        copy->erase();
        continue;
      }
      rewriter.setInsertionPoint(copy);
      Operation *linalgCopy = linalg::CopyOp::create(
          rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
      rewriter.eraseOp(copy);
      op = linalgCopy;
    }
    auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || llvm::isa<linalg::GenericOp>(op))
      continue;
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, linalgOp)))
      return emitNoLowering(op, func, "cannot be written as a linalg.generic");
  }
  return success();
}

/// Moves `alloc` (static shape) to the workgroup address space, retyping
/// the views taken of it.
static void moveToShared(memref::AllocOp alloc) {
  auto space = gpu::AddressSpaceAttr::get(alloc.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto retype = [&](Value value) {
    auto type = llvm::cast<MemRefType>(value.getType());
    value.setType(MemRefType::Builder(type).setMemorySpace(space));
  };
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    retype(value);
    for (Operation *user : value.getUsers())
      if (auto view = llvm::dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == value)
          for (Value result : user->getResults())
            if (llvm::isa<MemRefType>(result.getType()))
              worklist.push_back(result);
  }
}

/// The grid: `units` from the leading dims of an argument whose sizes match
/// `trips` (values or constants), or one block.
static void chooseRowGrid(func::FuncOp func, scf::ForallOp loop,
                          KernelLaunch &launch) {
  SmallVector<OpFoldResult> uppers = loop.getMixedUpperBound();
  auto sameSize = [](OpFoldResult bound, Value arg, unsigned d) {
    auto type = llvm::cast<MemRefType>(arg.getType());
    if (std::optional<int64_t> constant = getConstantIntValue(bound))
      return !type.isDynamicDim(d) && type.getDimSize(d) == *constant;
    auto dim = llvm::dyn_cast<Value>(bound).getDefiningOp<memref::DimOp>();
    if (!dim || getRootBuffer(dim.getSource()) != arg)
      return false;
    std::optional<int64_t> index = dim.getConstantIndex();
    return index && *index == d;
  };
  bool unitSteps = llvm::all_of(loop.getMixedStep(), [](OpFoldResult step) {
    return isConstantIntValue(step, 1);
  });
  bool zeroStarts =
      llvm::all_of(loop.getMixedLowerBound(),
                   [](OpFoldResult lb) { return isConstantIntValue(lb, 0); });
  if (!unitSteps || !zeroStarts)
    return;
  for (BlockArgument arg : func.getArguments()) {
    auto type = llvm::dyn_cast<MemRefType>(arg.getType());
    if (!type || type.getRank() < int64_t(uppers.size()))
      continue;
    bool match = true;
    for (auto [d, bound] : llvm::enumerate(uppers))
      match = match && sameSize(bound, arg, d);
    if (!match)
      continue;
    launch.gridTensor = arg.getArgNumber();
    launch.gridAxes = uppers.size();
    launch.unitsPerBlock = 1;
    return;
  }
}

/// The grid of `items` (spread over it): the rows of the first row loop,
/// else the elements of the largest result a generic writes.
static void chooseGrid(func::FuncOp func, ArrayRef<Operation *> items,
                       unsigned blockSize, KernelLaunch &launch) {
  for (Operation *item : items)
    if (auto loop = llvm::dyn_cast<scf::ForallOp>(item)) {
      chooseRowGrid(func, loop, launch);
      return;
    }
  int64_t best = -1;
  for (Operation *item : items) {
    auto generic = llvm::dyn_cast<linalg::GenericOp>(item);
    if (!generic)
      continue;
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      auto arg = llvm::dyn_cast<BlockArgument>(getRootBuffer(init.get()));
      if (!arg)
        continue;
      auto type = llvm::cast<MemRefType>(arg.getType());
      int64_t size = 1;
      // A run-time dim counts as large; capped so that no product overflows.
      for (int64_t d : type.getShape())
        size = std::min<int64_t>(size, int64_t(1) << 40) *
               (ShapedType::isDynamic(d) ? 1 << 20 : d);
      if (size <= best)
        continue;
      best = size;
      launch.gridTensor = arg.getArgNumber();
      launch.gridAxes = type.getRank();
      // A thread of a vectorized loop takes kVectorLanes elements.
      bool vectorized =
          generic.getNumReductionLoops() == 0 &&
          planVectorLanes(generic, utils::IteratorType::parallel).has_value();
      launch.unitsPerBlock = blockSize * (vectorized ? kVectorLanes : 1);
    }
  }
}

FailureOr<KernelLaunch>
mlir::lmopt::cuda::mapKernelToThreads(func::FuncOp func, unsigned blockSize) {
  assert(blockSize % kWarpSize == 0 && "blocks are whole warps");
  if (failed(prepare(func)))
    return failure();
  Block &entry = func.getBody().front();
  if (!llvm::hasSingleElement(func.getBody()))
    return emitNoLowering(func, func, "a kernel body of several blocks");

  // Work items, and whether they depend on each other across the grid.
  SmallVector<Operation *> items;
  SmallVector<memref::AllocOp> topAllocs;
  bool supported = true;
  for (Operation &op : entry) {
    if (llvm::isa<linalg::GenericOp, scf::ForallOp, memref::StoreOp>(op)) {
      items.push_back(&op);
      continue;
    }
    if (auto alloc = llvm::dyn_cast<memref::AllocOp>(op)) {
      topAllocs.push_back(alloc);
      continue;
    }
    if (isReplicable(&op) || llvm::isa<func::ReturnOp, memref::LoadOp>(op))
      continue;
    emitNoLowering(&op, func, "not a loop the kernel can distribute");
    supported = false;
  }
  func.walk([&](Operation *op) {
    if (op->getParentOp() == func.getOperation())
      return;
    if (auto loop = llvm::dyn_cast<scf::ForallOp>(op);
        loop && loop->getParentOp() != func.getOperation()) {
      emitNoLowering(op, func, "a nested row loop");
      supported = false;
    }
  });
  if (!supported)
    return failure();

  // Stores at the top level (tensor.from_elements) run in every thread;
  // what they write is private to it.
  DenseSet<Value> privateBuffers;
  for (memref::AllocOp alloc : topAllocs) {
    bool onlyTopStores = llvm::all_of(alloc->getUsers(), [&](Operation *user) {
      return user->getParentOp() == func.getOperation() &&
             llvm::isa<memref::StoreOp, memref::LoadOp>(user);
    });
    if (onlyTopStores)
      privateBuffers.insert(alloc.getResult());
  }
  SmallVector<Operation *> topLoads;
  for (Operation &op : entry)
    if (llvm::isa<memref::LoadOp>(op))
      topLoads.push_back(&op);
  KernelSchedule schedule =
      scheduleKernelItems(func, items, topLoads, privateBuffers);
  bool oneBlock = schedule.kind == KernelSchedule::Kind::OneBlock ||
                  schedule.kind == KernelSchedule::Kind::Small;

  // Temporaries: private registers, or shared memory.
  IRRewriter rewriter(func.getContext());
  int64_t sharedBytes = 0;
  SmallVector<memref::AllocOp> allocs;
  func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (memref::AllocOp alloc : allocs) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape()) {
      emitNoLowering(alloc, func,
                     "a temporary of run-time size (shared memory is sized "
                     "at compile time)");
      supported = false;
      continue;
    }
    if (privateBuffers.contains(alloc.getResult())) {
      rewriter.setInsertionPoint(alloc);
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, type);
      continue;
    }
    sharedBytes += getSizeInBytes(type);
    moveToShared(alloc);
  }
  if (!supported)
    return failure();

  KernelLaunch launch;
  launch.blockSize = blockSize;
  KernelEmitter emitter(func, blockSize);
  emitter.createIds();
  OpBuilder &b = emitter.b;

  // The grid follows the rows of the (first) row loop, else the elements of
  // the largest result, of the items that spread over the grid.
  if (!oneBlock) {
    SmallVector<Operation *> gridItems;
    for (const KernelItem &item : schedule.items)
      if (!item.prologue)
        gridItems.push_back(item.op);
    chooseGrid(func, gridItems, blockSize, launch);
  }

  for (const KernelItem &item : schedule.items) {
    Operation *op = item.op;
    b.setInsertionPoint(op);
    if (item.prologue) {
      bool writesResult = llvm::any_of(item.writes, [](Value root) {
        return !root.getDefiningOp<memref::AllocOp>();
      });
      if (failed(emitter.emitPrologueItem(op, writesResult)))
        return failure();
      continue;
    }
    if (llvm::isa<memref::StoreOp>(op))
      continue;
    if (auto generic = llvm::dyn_cast<linalg::GenericOp>(op)) {
      Distribution dist = oneBlock ? emitter.blockDistribution()
                                   : emitter.gridDistribution();
      if (failed(emitter.emitGeneric(generic, dist)))
        return failure();
    } else if (auto loop = llvm::dyn_cast<scf::ForallOp>(op)) {
      Value start = oneBlock ? emitter.zero : emitter.blockId;
      Value stride = oneBlock ? emitter.one : emitter.gridDim;
      if (failed(emitter.emitRowLoop(loop, start, stride)))
        return failure();
    }
    if (oneBlock)
      gpu::BarrierOp::create(b, emitter.loc);
  }

  sharedBytes += emitter.scratchBytes;
  if (sharedBytes > kMaxSharedBytes)
    return emitNoLowering(func, func, "")
           << "its temporaries need " << sharedBytes
           << " bytes of shared memory, more than " << kMaxSharedBytes;
  return launch;
}
