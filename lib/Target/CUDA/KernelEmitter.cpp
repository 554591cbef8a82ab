//===- KernelEmitter.cpp - SIMT code for a kernel's work items ------------===//

#include "KernelEmitter.h"

#include "lmopt/Support/FusionReport.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cuda;

InFlightDiagnostic mlir::lmopt::cuda::emitNoLowering(Operation *op,
                                                     func::FuncOp func,
                                                     StringRef why) {
  InFlightDiagnostic diag = op->emitError("no CUDA lowering for '")
                            << op->getName() << "' in kernel '"
                            << func.getSymName() << "'";
  if (std::optional<std::string> node = findNodeName(op->getLoc()))
    diag << " (node '" << *node << "')";
  diag << ": " << why;
  return diag;
}

int64_t mlir::lmopt::cuda::getSizeInBytes(MemRefType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// Loop indices in loop order from the parallel and reduction positions.
static SmallVector<Value> mergeIndices(unsigned numLoops,
                                       ArrayRef<unsigned> parDims,
                                       ArrayRef<Value> parIndices,
                                       ArrayRef<unsigned> redDims,
                                       ArrayRef<Value> redIndices) {
  SmallVector<Value> indices(numLoops);
  for (auto [d, v] : llvm::zip(parDims, parIndices))
    indices[d] = v;
  for (auto [d, v] : llvm::zip(redDims, redIndices))
    indices[d] = v;
  return indices;
}

LogicalResult KernelEmitter::emitGeneric(linalg::GenericOp generic,
                                         Distribution dist) {
  b.setInsertionPoint(generic);
  loc = generic.getLoc();
  unsigned numLoops = generic.getNumLoops();
  SmallVector<Range> ranges =
      llvm::cast<linalg::LinalgOp>(generic.getOperation())
          .createLoopRanges(b, loc);
  SmallVector<unsigned> parDims, redDims;
  SmallVector<Value> parSizes, redSizes;
  for (auto [d, iterator] : llvm::enumerate(generic.getIteratorTypesArray())) {
    Value size = getValueOrCreateConstantIndexOp(b, loc, ranges[d].size);
    if (iterator == utils::IteratorType::parallel) {
      parDims.push_back(d);
      parSizes.push_back(size);
    } else {
      redDims.push_back(d);
      redSizes.push_back(size);
    }
  }

  // A row reduced to one value: threads share the row.
  if (dist.block && !redDims.empty()) {
    SmallVector<int64_t> staticSizes = generic.getStaticLoopRanges();
    bool oneOutputPoint = llvm::all_of(parDims, [&](unsigned d) {
      return staticSizes[d] == 1;
    });
    SmallVector<Operation *> combiners;
    for (unsigned i = 0; i < generic.getNumDpsInits(); ++i)
      combiners.push_back(matchCombiner(generic, i));
    if (oneOutputPoint && llvm::all_of(combiners, [](Operation *combiner) {
          return combiner != nullptr;
        }))
      return emitBlockReduction(generic, parSizes, redSizes, parDims, redDims,
                                combiners);
  }

  // Each thread takes parallel iterations with the stride; reductions run
  // sequentially within the iteration.
  Value total = product(parSizes);
  if (redDims.empty()) {
    if (std::optional<SmallVector<LaneAccess>> access =
            planVectorLanes(generic, utils::IteratorType::parallel)) {
      // kVectorLanes consecutive iterations at a time: the innermost size
      // is a multiple of it, so a run never crosses a row.
      Value lanes = index(kVectorLanes);
      Value runs = arith::DivUIOp::create(b, loc, total, lanes);
      auto loop = scf::ForOp::create(b, loc, dist.start, runs, dist.stride);
      b.setInsertionPointToStart(loop.getBody());
      Value first = arith::MulIOp::create(b, loc, loop.getInductionVar(), lanes);
      emitParallelLanes(generic, delinearize(first, parSizes), *access);
      generic.erase();
      b.setInsertionPointAfter(loop);
      return success();
    }
  }
  auto loop = scf::ForOp::create(b, loc, dist.start, total, dist.stride);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> parIndices = delinearize(loop.getInductionVar(), parSizes);
  if (redDims.empty()) {
    SmallVector<Value> indices =
        mergeIndices(numLoops, parDims, parIndices, redDims, {});
    SmallVector<Value> yielded =
        evaluateBody(generic, indices, loadUsedOutputs(generic, indices));
    for (auto [i, value] : llvm::enumerate(yielded))
      storeOutput(generic, i, value, indices);
  } else {
    // Outputs are indexed by parallel loops only; the reduction positions
    // are zero there.
    SmallVector<Value> zeros(redDims.size(), zero);
    SmallVector<Value> outIndices =
        mergeIndices(numLoops, parDims, parIndices, redDims, zeros);
    SmallVector<Value> inits;
    for (OpOperand &init : generic.getDpsInitsMutable())
      inits.push_back(loadOperand(generic, init, outIndices));
    Value redTotal = product(redSizes);
    auto inner = scf::ForOp::create(b, loc, zero, redTotal, one, inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inner.getBody());
      SmallVector<Value> redIndices =
          delinearize(inner.getInductionVar(), redSizes);
      SmallVector<Value> indices =
          mergeIndices(numLoops, parDims, parIndices, redDims, redIndices);
      SmallVector<Value> accs(inner.getRegionIterArgs().begin(),
                              inner.getRegionIterArgs().end());
      scf::YieldOp::create(b, loc, evaluateBody(generic, indices, accs));
    }
    for (auto [i, value] : llvm::enumerate(inner.getResults()))
      storeOutput(generic, i, value, outIndices);
  }
  // The builder would otherwise point at the erased generic.
  generic.erase();
  b.setInsertionPointAfter(loop);
  return success();
}

LogicalResult KernelEmitter::emitBlockReduction(
    linalg::GenericOp generic, ArrayRef<Value> parSizes,
    ArrayRef<Value> redSizes, ArrayRef<unsigned> parDims,
    ArrayRef<unsigned> redDims, ArrayRef<Operation *> combiners) {
  unsigned numLoops = generic.getNumLoops();
  SmallVector<Value> identities;
  for (auto [i, combiner] : llvm::enumerate(combiners)) {
    TypedAttr attr = *arith::getNeutralElement(combiner);
    identities.push_back(arith::ConstantOp::create(b, loc, attr));
  }
  // Each thread combines its strided share of the row, kVectorLanes
  // consecutive elements at a time where the operands allow.
  Value redTotal = product(redSizes);
  std::optional<SmallVector<LaneAccess>> access =
      planVectorLanes(generic, utils::IteratorType::reduction);
  Value lanes = index(access ? kVectorLanes : 1);
  Value runs = arith::DivUIOp::create(b, loc, redTotal, lanes);
  auto loop = scf::ForOp::create(b, loc, threadId, runs, blockDim,
                                 identities);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first = arith::MulIOp::create(b, loc, loop.getInductionVar(), lanes);
    SmallVector<Value> redIndices = delinearize(first, redSizes);
    SmallVector<Value> zeros(parDims.size(), zero);
    SmallVector<Value> indices =
        mergeIndices(numLoops, parDims, zeros, redDims, redIndices);
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(),
                            loop.getRegionIterArgs().end());
    scf::YieldOp::create(b, loc,
                         access ? reduceLanes(generic, indices, *access, accs)
                                : evaluateBody(generic, indices, accs));
  }
  SmallVector<Value> reduced;
  for (auto [i, combiner] : llvm::enumerate(combiners))
    reduced.push_back(
        blockReduce(combiner, loop.getResult(i), identities[i]));
  // Thread 0 folds the block's value into the output's initial value.
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, threadId, zero);
  auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    SmallVector<Value> zeros(numLoops, zero);
    for (auto [i, init] : llvm::enumerate(generic.getDpsInitsMutable())) {
      Value initial = loadOperand(generic, init, zeros);
      storeOutput(generic, i, combine(combiners[i], reduced[i], initial),
                  zeros);
    }
  }
  generic.erase();
  b.setInsertionPointAfter(ifFirst);
  return success();
}

/// In every block on the block's threads, then a barrier; what goes to a
/// result (global memory), in block 0 only: each element is written once.
/// A store runs in every thread where it stands (each writes the same value
/// into its block's temporary), or in thread 0 of block 0 for a result.
LogicalResult KernelEmitter::emitPrologueItem(Operation *op,
                                              bool writesResult) {
  b.setInsertionPoint(op);
  loc = op->getLoc();
  scf::IfOp guard;
  if (writesResult) {
    Value inFirstBlock =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, blockId, zero);
    if (llvm::isa<memref::StoreOp>(op))
      inFirstBlock = arith::AndIOp::create(
          b, loc, inFirstBlock,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, threadId,
                                zero));
    guard = scf::IfOp::create(b, loc, inFirstBlock, /*withElseRegion=*/false);
    op->moveBefore(guard.thenBlock()->getTerminator());
  }
  auto generic = llvm::dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return success();
  if (failed(emitGeneric(generic, blockDistribution())))
    return failure();
  if (guard)
    b.setInsertionPointAfter(guard);
  gpu::BarrierOp::create(b, loc);
  return success();
}


LogicalResult KernelEmitter::emitRowLoop(scf::ForallOp forall, Value start,
                                         Value stride) {
  b.setInsertionPoint(forall);
  loc = forall.getLoc();
  if (forall.getNumResults() != 0)
    return emitNoLowering(forall, func, "a row loop with tensor results");
  SmallVector<Value> lowers, steps, trips;
  for (auto [lb, ub, step] :
       llvm::zip(forall.getMixedLowerBound(), forall.getMixedUpperBound(),
                 forall.getMixedStep())) {
    Value lower = getValueOrCreateConstantIndexOp(b, loc, lb);
    Value stepValue = getValueOrCreateConstantIndexOp(b, loc, step);
    Value upper = getValueOrCreateConstantIndexOp(b, loc, ub);
    Value span = arith::SubIOp::create(b, loc, upper, lower);
    lowers.push_back(lower);
    steps.push_back(stepValue);
    trips.push_back(arith::CeilDivUIOp::create(b, loc, span, stepValue));
  }
  Value total = product(trips);
  auto rows = scf::ForOp::create(b, loc, start, total, stride);
  b.setInsertionPointToStart(rows.getBody());
  SmallVector<Value> positions = delinearize(rows.getInductionVar(), trips);
  Block *body = forall.getBody();
  for (auto [iv, position, lower, step] :
       llvm::zip(forall.getInductionVars(), positions, lowers, steps))
    iv.replaceAllUsesWith(arith::AddIOp::create(
        b, loc, lower, arith::MulIOp::create(b, loc, position, step)));
  body->getTerminator()->erase();
  rows.getBody()->getOperations().splice(
      rows.getBody()->getTerminator()->getIterator(), body->getOperations());
  forall.erase();

  SmallVector<Operation *> ops;
  for (Operation &op : rows.getBody()->without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (auto generic = llvm::dyn_cast<linalg::GenericOp>(op)) {
      if (failed(emitGeneric(generic, blockDistribution())))
        return failure();
      gpu::BarrierOp::create(b, loc);
      continue;
    }
    if (llvm::isa<memref::AllocOp>(op) || isReplicable(op))
      continue;
    return emitNoLowering(op, func, "not expected in a row loop");
  }
  return success();
}
