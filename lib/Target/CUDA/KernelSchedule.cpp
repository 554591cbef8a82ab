//===- KernelSchedule.cpp - how a kernel's loops spread over a grid -------===//
//
// Items that read what an earlier item wrote cannot spread over blocks
// without a grid-wide barrier. When the earlier items only produce small
// static temporaries (shape vectors, concatenated dims) with little work,
// every block recomputes them into its own shared memory instead, so the
// items that carry the kernel's bulk still spread over the grid.
//
//===----------------------------------------------------------------------===//

#include "KernelSchedule.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cuda;

Value mlir::lmopt::cuda::getRootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto view = llvm::dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

/// The buffers `op` (and what it holds) reads and writes, as roots.
static void collectAccesses(Operation *op, DenseSet<Value> &reads,
                            DenseSet<Value> &writes) {
  op->walk([&](Operation *inner) {
    if (auto generic = llvm::dyn_cast<linalg::GenericOp>(inner)) {
      for (OpOperand *input : generic.getDpsInputOperands())
        if (llvm::isa<MemRefType>(input->get().getType()))
          reads.insert(getRootBuffer(input->get()));
      for (OpOperand &init : generic.getDpsInitsMutable()) {
        writes.insert(getRootBuffer(init.get()));
        if (generic.payloadUsesValueFromOperand(&init))
          reads.insert(getRootBuffer(init.get()));
      }
      return;
    }
    if (auto load = llvm::dyn_cast<memref::LoadOp>(inner))
      reads.insert(getRootBuffer(load.getMemRef()));
    if (auto store = llvm::dyn_cast<memref::StoreOp>(inner))
      writes.insert(getRootBuffer(store.getMemRef()));
  });
}

/// A buffer allocated at the top level that several threads share.
static bool isTopTemporary(Value root, func::FuncOp func,
                           const DenseSet<Value> &privateBuffers) {
  auto alloc = root.getDefiningOp<memref::AllocOp>();
  return alloc && alloc->getParentOp() == func.getOperation() &&
         !privateBuffers.contains(root);
}

/// What every block sees the same: a function argument or a global
/// constant, not a temporary.
static bool isGlobal(Value root) {
  return !root.getDefiningOp<memref::AllocOp>();
}

/// Whether the items can each spread over the whole grid: none reads or
/// overwrites what another wrote, none writes a temporary (it would live in
/// global memory).
static bool areIndependent(ArrayRef<KernelItem> items, func::FuncOp func,
                           const DenseSet<Value> &privateBuffers) {
  DenseSet<Value> written, read;
  for (const KernelItem &item : items) {
    for (Value value : item.reads)
      if (written.contains(value))
        return false;
    for (Value value : item.writes)
      if (read.contains(value) ||
          (written.contains(value) && value.getDefiningOp<memref::AllocOp>()) ||
          isTopTemporary(value, func, privateBuffers))
        return false;
    read.insert(item.reads.begin(), item.reads.end());
    written.insert(item.writes.begin(), item.writes.end());
  }
  return true;
}

/// Whether every block may repeat `item`: a store, or a generic of static
/// bounded work, writing only small static buffers, either temporaries
/// (every block its own copy) or results (block 0 writes them), not both.
static bool isSmallItem(const KernelItem &item, func::FuncOp func,
                        const DenseSet<Value> &privateBuffers) {
  bool writesTemporary = false, writesResult = false;
  for (Value root : item.writes) {
    auto type = llvm::dyn_cast<MemRefType>(root.getType());
    if (!type || !type.hasStaticShape() ||
        type.getNumElements() > kMaxPrologueElements)
      return false;
    if (isTopTemporary(root, func, privateBuffers))
      writesTemporary = true;
    else if (isGlobal(root))
      writesResult = true;
    else
      return false;
  }
  if (writesTemporary && writesResult)
    return false;
  if (llvm::isa<memref::StoreOp>(item.op))
    return true;
  auto generic = llvm::dyn_cast<linalg::GenericOp>(item.op);
  if (!generic)
    return false;
  int64_t iterations = 1;
  for (int64_t size : generic.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(size))
      return false;
    iterations *= size;
    if (iterations > kMaxPrologueIterations)
      return false;
  }
  return true;
}

/// Whether `later` may follow `earlier` when small items run in every block
/// (results in block 0 only) and the others over the grid: a temporary a
/// small item wrote is in every block's shared memory after its barrier;
/// nothing else written by one item may be read or overwritten by another
/// across blocks.
static bool canFollow(const KernelItem &earlier, const KernelItem &later) {
  for (Value value : later.reads)
    if (earlier.writes.contains(value) && (!earlier.prologue || isGlobal(value)))
      return false;
  for (Value value : later.writes) {
    if (earlier.reads.contains(value) &&
        (!earlier.prologue || !later.prologue || isGlobal(value)))
      return false;
    if (!earlier.writes.contains(value) || (earlier.prologue && later.prologue))
      continue;
    // Two grid items may write disjoint parts of one result.
    if (earlier.prologue != later.prologue || !isGlobal(value))
      return false;
  }
  return true;
}

KernelSchedule
mlir::lmopt::cuda::scheduleKernelItems(func::FuncOp func,
                                       ArrayRef<Operation *> ops,
                                       ArrayRef<Operation *> topLoads,
                                       const DenseSet<Value> &privateBuffers) {
  KernelSchedule schedule;
  for (Operation *op : ops) {
    KernelItem item{op, {}, {}, false};
    collectAccesses(op, item.reads, item.writes);
    if (llvm::isa<memref::StoreOp>(op) &&
        llvm::all_of(item.writes,
                     [&](Value v) { return privateBuffers.contains(v); }))
      continue;
    schedule.items.push_back(std::move(item));
  }
  if (areIndependent(schedule.items, func, privateBuffers)) {
    schedule.kind = KernelSchedule::Kind::Grid;
    return schedule;
  }

  bool allSmall = true;
  for (KernelItem &item : schedule.items) {
    item.prologue = isSmallItem(item, func, privateBuffers);
    allSmall &= item.prologue;
  }
  auto oneBlock = [&](KernelSchedule::Kind kind) {
    for (KernelItem &item : schedule.items)
      item.prologue = false;
    schedule.kind = kind;
    return schedule;
  };
  if (allSmall)
    return oneBlock(KernelSchedule::Kind::Small);

  for (auto [i, earlier] : llvm::enumerate(schedule.items)) {
    // A grid item's temporary would live in global memory.
    if (!earlier.prologue &&
        llvm::any_of(earlier.writes, [&](Value value) {
          return isTopTemporary(value, func, privateBuffers);
        }))
      return oneBlock(KernelSchedule::Kind::OneBlock);
    for (const KernelItem &later : ArrayRef(schedule.items).drop_front(i + 1))
      if (!canFollow(earlier, later))
        return oneBlock(KernelSchedule::Kind::OneBlock);
  }
  // Every thread runs a top-level load where it stands: it may read only
  // what no item writes.
  for (Operation *load : topLoads) {
    Value root = getRootBuffer(llvm::cast<memref::LoadOp>(load).getMemRef());
    if (privateBuffers.contains(root))
      continue;
    for (const KernelItem &item : schedule.items)
      if (item.writes.contains(root))
        return oneBlock(KernelSchedule::Kind::OneBlock);
  }
  schedule.kind = KernelSchedule::Kind::Prologue;
  return schedule;
}

/// Whether the innermost dim of `view` is contiguous and each run of
/// kVectorLanes elements starting at a multiple of kVectorLanes in it is
/// 16-byte aligned: subviews that keep the rank, the innermost dim and its
/// alignment, of a function argument or global constant (64-byte aligned)
/// in row-major order whose innermost dim is a static multiple of
/// kVectorLanes.
static bool hasAlignedRows(Value view) {
  Value value = view;
  while (auto subview = value.getDefiningOp<memref::SubViewOp>()) {
    if (subview.getSourceType().getRank() != subview.getType().getRank())
      return false;
    int64_t offset = subview.getStaticOffsets().back();
    int64_t stride = subview.getStaticStrides().back();
    if (ShapedType::isDynamic(offset) || offset % kVectorLanes != 0 ||
        stride != 1)
      return false;
    value = subview.getSource();
  }
  if (!llvm::isa<BlockArgument>(value) &&
      !value.getDefiningOp<memref::GetGlobalOp>())
    return false;
  auto type = llvm::cast<MemRefType>(value.getType());
  if (type.getRank() == 0 || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return false;
  int64_t inner = type.getShape().back();
  return !ShapedType::isDynamic(inner) && inner % kVectorLanes == 0;
}

std::optional<SmallVector<LaneAccess>>
mlir::lmopt::cuda::planVectorLanes(Operation *op,
                                   utils::IteratorType iterator) {
  auto generic = llvm::cast<linalg::GenericOp>(op);
  unsigned numLoops = generic.getNumLoops();
  if (numLoops == 0 ||
      generic.getIteratorTypesArray().back() != iterator)
    return std::nullopt;
  unsigned inner = numLoops - 1;
  int64_t size = generic.getStaticLoopRanges()[inner];
  if (ShapedType::isDynamic(size) || size % kVectorLanes != 0)
    return std::nullopt;
  SmallVector<LaneAccess> access;
  bool anyVector = false;
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = llvm::dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (!type || !map.isFunctionOfDim(inner)) {
      access.push_back(LaneAccess::Invariant);
      continue;
    }
    ArrayRef<AffineExpr> results = map.getResults();
    bool innermostOnly =
        results.back() == getAffineDimExpr(inner, generic.getContext()) &&
        llvm::none_of(results.drop_back(), [&](AffineExpr expr) {
          return expr.isFunctionOfDim(inner);
        });
    if (innermostOnly && type.getElementType().isF32() &&
        hasAlignedRows(operand.get())) {
      access.push_back(LaneAccess::Vector);
      anyVector = true;
    } else {
      access.push_back(LaneAccess::Scalar);
    }
  }
  if (!anyVector)
    return std::nullopt;
  return access;
}
