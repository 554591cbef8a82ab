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

#include "KernelSchedule.h"

#include "lmopt/Support/FusionReport.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cuda;

static constexpr int64_t kWarpSize = 32;
/// Static shared memory a block may use without opting in.
static constexpr int64_t kMaxSharedBytes = 48 * 1024;

//===----------------------------------------------------------------------===//
// Diagnostics and analysis
//===----------------------------------------------------------------------===//

static InFlightDiagnostic emitNoLowering(Operation *op, func::FuncOp func,
                                         StringRef why) {
  InFlightDiagnostic diag = op->emitError("no CUDA lowering for '")
                            << op->getName() << "' in kernel '"
                            << func.getSymName() << "'";
  if (std::optional<std::string> node = findNodeName(op->getLoc()))
    diag << " (node '" << *node << "')";
  diag << ": " << why;
  return diag;
}

static int64_t getSizeInBytes(MemRefType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

//===----------------------------------------------------------------------===//
// Emission helpers
//===----------------------------------------------------------------------===//

namespace {

/// Where a distributed loop starts and how far it strides: the grid's or a
/// block's threads.
struct Distribution {
  Value start;
  Value stride;
  /// Whether the loop's threads form one block (so a row reduction may use
  /// shuffles and shared memory).
  bool block = false;
};

struct KernelEmitter {
  func::FuncOp func;
  unsigned blockSize;
  OpBuilder b;
  Location loc;
  Value threadId, blockId, gridDim, blockDim, zero, one;
  /// Shared memory the block reductions' scratch buffers take.
  int64_t scratchBytes = 0;

  KernelEmitter(func::FuncOp func, unsigned blockSize)
      : func(func), blockSize(blockSize), b(func.getContext()),
        loc(func.getLoc()) {}

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  void createIds() {
    b.setInsertionPointToStart(&func.getBody().front());
    threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    blockId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    gridDim = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
    blockDim = index(blockSize);
    zero = index(0);
    one = index(1);
  }

  Distribution gridDistribution() {
    Value start = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, blockId, blockDim), threadId);
    Value stride = arith::MulIOp::create(b, loc, gridDim, blockDim);
    return {start, stride, false};
  }
  Distribution blockDistribution() { return {threadId, blockDim, true}; }

  /// The positions of `linear` in a row-major space of `sizes`.
  SmallVector<Value> delinearize(Value linear, ArrayRef<Value> sizes) {
    SmallVector<Value> indices(sizes.size());
    for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
      if (d == 0) {
        indices[d] = linear;
        break;
      }
      indices[d] = arith::RemUIOp::create(b, loc, linear, sizes[d]);
      linear = arith::DivUIOp::create(b, loc, linear, sizes[d]);
    }
    return indices;
  }

  Value product(ArrayRef<Value> sizes) {
    Value total = one;
    for (Value size : sizes)
      total = arith::MulIOp::create(b, loc, total, size);
    return total;
  }

  Value loadOperand(linalg::GenericOp generic, OpOperand &operand,
                    ArrayRef<Value> loopIndices) {
    Value value = operand.get();
    if (!llvm::isa<MemRefType>(value.getType()))
      return value; // a scalar input
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    std::optional<SmallVector<Value, 8>> indices =
        affine::expandAffineMap(b, loc, map, loopIndices);
    assert(indices && "indexing maps have no symbols");
    return memref::LoadOp::create(b, loc, value, *indices);
  }

  void storeOutput(linalg::GenericOp generic, unsigned i, Value value,
                   ArrayRef<Value> loopIndices) {
    OpOperand &init = generic.getDpsInitsMutable()[i];
    AffineMap map = generic.getMatchingIndexingMap(&init);
    std::optional<SmallVector<Value, 8>> indices =
        affine::expandAffineMap(b, loc, map, loopIndices);
    assert(indices && "indexing maps have no symbols");
    memref::StoreOp::create(b, loc, value, init.get(), *indices);
  }

  /// The body of `generic` at `loopIndices` with its output arguments bound
  /// to `outputs`: the values it yields.
  /// `inputs`, when given, are the inputs' values (else they are loaded).
  SmallVector<Value> evaluateBody(linalg::GenericOp generic,
                                  ArrayRef<Value> loopIndices,
                                  ArrayRef<Value> outputs,
                                  ArrayRef<Value> inputs = {}) {
    Block *body = generic.getBody();
    IRMapping mapping;
    for (auto [i, input] : llvm::enumerate(generic.getDpsInputOperands()))
      mapping.map(generic.getMatchingBlockArgument(input),
                  inputs.empty() ? loadOperand(generic, *input, loopIndices)
                                 : inputs[i]);
    for (auto [i, init] : llvm::enumerate(generic.getDpsInitsMutable()))
      if (outputs[i])
        mapping.map(generic.getMatchingBlockArgument(&init), outputs[i]);
    for (Operation &op : body->without_terminator()) {
      if (auto indexOp = llvm::dyn_cast<linalg::IndexOp>(op)) {
        mapping.map(indexOp.getResult(), loopIndices[indexOp.getDim()]);
        continue;
      }
      b.clone(op, mapping);
    }
    SmallVector<Value> yielded;
    for (Value value : body->getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(value));
    return yielded;
  }

  /// `indices` with the innermost loop's index moved on by `lane`.
  SmallVector<Value> laneIndices(ArrayRef<Value> indices, int64_t lane) {
    SmallVector<Value> moved(indices);
    if (lane != 0)
      moved.back() = arith::AddIOp::create(b, loc, moved.back(), index(lane));
    return moved;
  }

  /// The kVectorLanes values of `operand` from `indices` (the innermost
  /// index a multiple of kVectorLanes) on, read as `access` says.
  SmallVector<Value> loadLanes(linalg::GenericOp generic, OpOperand &operand,
                               ArrayRef<Value> indices, LaneAccess access) {
    SmallVector<Value> lanes;
    if (access == LaneAccess::Invariant) {
      lanes.assign(kVectorLanes, loadOperand(generic, operand, indices));
      return lanes;
    }
    if (access == LaneAccess::Scalar) {
      for (int64_t lane = 0; lane < kVectorLanes; ++lane)
        lanes.push_back(
            loadOperand(generic, operand, laneIndices(indices, lane)));
      return lanes;
    }
    std::optional<SmallVector<Value, 8>> memIndices = affine::expandAffineMap(
        b, loc, generic.getMatchingIndexingMap(&operand), indices);
    assert(memIndices && "indexing maps have no symbols");
    auto type = VectorType::get({kVectorLanes}, b.getF32Type());
    Value vector = vector::LoadOp::create(b, loc, type, operand.get(),
                                          *memIndices, /*nontemporal=*/false,
                                          llvm::Align(16));
    for (int64_t lane = 0; lane < kVectorLanes; ++lane)
      lanes.push_back(vector::ExtractOp::create(b, loc, vector, lane));
    return lanes;
  }

  /// The body for kVectorLanes consecutive iterations of the innermost loop
  /// from `indices` on, operands read and results written as `access` says.
  void emitParallelLanes(linalg::GenericOp generic, ArrayRef<Value> indices,
                         ArrayRef<LaneAccess> access) {
    unsigned numInputs = generic.getNumDpsInputs();
    SmallVector<SmallVector<Value>> inputs(kVectorLanes), outputs(kVectorLanes);
    for (auto [i, input] : llvm::enumerate(generic.getDpsInputOperands()))
      for (auto [lane, value] : llvm::enumerate(
               loadLanes(generic, *input, indices, access[i])))
        inputs[lane].push_back(value);
    for (auto [i, init] : llvm::enumerate(generic.getDpsInitsMutable())) {
      SmallVector<Value> values(kVectorLanes);
      if (generic.payloadUsesValueFromOperand(&init))
        values = loadLanes(generic, init, indices, access[numInputs + i]);
      for (int64_t lane = 0; lane < kVectorLanes; ++lane)
        outputs[lane].push_back(values[lane]);
    }
    SmallVector<SmallVector<Value>> yielded;
    for (int64_t lane = 0; lane < kVectorLanes; ++lane)
      yielded.push_back(evaluateBody(generic, laneIndices(indices, lane),
                                     outputs[lane], inputs[lane]));
    for (auto [i, init] : llvm::enumerate(generic.getDpsInitsMutable())) {
      if (access[numInputs + i] != LaneAccess::Vector) {
        for (int64_t lane = 0; lane < kVectorLanes; ++lane)
          storeOutput(generic, i, yielded[lane][i],
                      laneIndices(indices, lane));
        continue;
      }
      SmallVector<Value> lanes;
      for (int64_t lane = 0; lane < kVectorLanes; ++lane)
        lanes.push_back(yielded[lane][i]);
      auto type = VectorType::get({kVectorLanes}, b.getF32Type());
      Value vector = vector::FromElementsOp::create(b, loc, type, lanes);
      std::optional<SmallVector<Value, 8>> memIndices =
          affine::expandAffineMap(b, loc, generic.getMatchingIndexingMap(&init),
                                  indices);
      assert(memIndices && "indexing maps have no symbols");
      vector::StoreOp::create(b, loc, vector, init.get(), *memIndices,
                              /*nontemporal=*/false, llvm::Align(16));
    }
  }

  /// The accumulators after kVectorLanes consecutive iterations of the
  /// innermost (reduction) loop from `indices` on, lane after lane.
  SmallVector<Value> reduceLanes(linalg::GenericOp generic,
                                 ArrayRef<Value> indices,
                                 ArrayRef<LaneAccess> access,
                                 SmallVector<Value> accs) {
    SmallVector<SmallVector<Value>> inputs(kVectorLanes);
    for (auto [i, input] : llvm::enumerate(generic.getDpsInputOperands()))
      for (auto [lane, value] : llvm::enumerate(
               loadLanes(generic, *input, indices, access[i])))
        inputs[lane].push_back(value);
    for (int64_t lane = 0; lane < kVectorLanes; ++lane)
      accs = evaluateBody(generic, laneIndices(indices, lane), accs,
                          inputs[lane]);
    return accs;
  }

  /// Loads the outputs the body reads (null for the others).
  SmallVector<Value> loadUsedOutputs(linalg::GenericOp generic,
                                     ArrayRef<Value> loopIndices) {
    SmallVector<Value> outputs;
    for (OpOperand &init : generic.getDpsInitsMutable())
      outputs.push_back(generic.payloadUsesValueFromOperand(&init)
                            ? loadOperand(generic, init, loopIndices)
                            : Value());
    return outputs;
  }

  /// The single arith op combining output `i` with a new value, when the
  /// body yields `combiner(x, out_i)` and reads out_i nowhere else, and arith
  /// knows the combiner's identity.
  Operation *matchCombiner(linalg::GenericOp generic, unsigned i) {
    Block *body = generic.getBody();
    Value yielded = body->getTerminator()->getOperand(i);
    Operation *combiner = yielded.getDefiningOp();
    BlockArgument out =
        generic.getMatchingBlockArgument(&generic.getDpsInitsMutable()[i]);
    if (!combiner || combiner->getNumOperands() != 2 ||
        combiner->getNumResults() != 1 || combiner->getBlock() != body ||
        !out.hasOneUse() || out.getUses().begin()->getOwner() != combiner ||
        combiner->getNumRegions() != 0 ||
        !arith::getNeutralElement(combiner).has_value())
      return nullptr;
    return combiner;
  }

  Value combine(Operation *combiner, Value lhs, Value rhs) {
    IRMapping mapping;
    mapping.map(combiner->getOperand(0), lhs);
    mapping.map(combiner->getOperand(1), rhs);
    return b.clone(*combiner, mapping)->getResult(0);
  }

  /// `value` exchanged with the lane `offset` away (xor), any scalar type:
  /// narrow types travel widened to 32 bits, 64-bit ones as two halves.
  Value shuffleXor(Value value, int64_t offset) {
    Type type = value.getType();
    unsigned width = type.getIntOrFloatBitWidth();
    Type i32 = b.getI32Type();
    Value off = arith::ConstantIntOp::create(b, loc, i32, offset);
    Value lanes = arith::ConstantIntOp::create(b, loc, i32, kWarpSize);
    auto shuffle32 = [&](Value bits) {
      return gpu::ShuffleOp::create(b, loc, bits, off, lanes,
                                    gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    Type intType = b.getIntegerType(width);
    Value bits = type == intType
                     ? value
                     : arith::BitcastOp::create(b, loc, intType, value)
                           .getResult();
    Value result;
    if (width == 32) {
      result = shuffle32(bits);
    } else if (width < 32) {
      Value wide = arith::ExtUIOp::create(b, loc, i32, bits);
      result = arith::TruncIOp::create(b, loc, intType, shuffle32(wide));
    } else {
      assert(width == 64 && "scalars are at most 64 bits");
      Type i64 = b.getI64Type();
      Value low = arith::TruncIOp::create(b, loc, i32, bits);
      Value high = arith::TruncIOp::create(
          b, loc, i32,
          arith::ShRUIOp::create(
              b, loc, bits, arith::ConstantIntOp::create(b, loc, i64, 32)));
      Value newLow = arith::ExtUIOp::create(b, loc, i64, shuffle32(low));
      Value newHigh = arith::ExtUIOp::create(b, loc, i64, shuffle32(high));
      result = arith::OrIOp::create(
          b, loc, newLow,
          arith::ShLIOp::create(b, loc, newHigh,
                                arith::ConstantIntOp::create(b, loc, i64, 32)));
    }
    if (type == intType)
      return result;
    return arith::BitcastOp::create(b, loc, type, result);
  }

  Value warpReduce(Operation *combiner, Value value) {
    for (int64_t offset = kWarpSize / 2; offset >= 1; offset /= 2)
      value = combine(combiner, value, shuffleXor(value, offset));
    return value;
  }

  /// A shared-memory buffer, allocated at the function's entry.
  Value allocateShared(MemRefType type) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&func.getBody().front());
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    auto shared = MemRefType::get(type.getShape(), type.getElementType(),
                                  MemRefLayoutAttrInterface(), space);
    scratchBytes += getSizeInBytes(shared);
    return memref::AllocOp::create(b, loc, shared);
  }

  /// Every thread of the block gets the combination of the block's values:
  /// shuffles within each warp, one value per warp through shared memory,
  /// shuffles again.
  Value blockReduce(Operation *combiner, Value value, Value identity) {
    int64_t numWarps = blockSize / kWarpSize;
    value = warpReduce(combiner, value);
    Value scratch = allocateShared(MemRefType::get({kWarpSize}, value.getType()));
    Value warpSize = index(kWarpSize);
    Value lane = arith::RemUIOp::create(b, loc, threadId, warpSize);
    Value warp = arith::DivUIOp::create(b, loc, threadId, warpSize);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      memref::StoreOp::create(b, loc, value, scratch, ValueRange{warp});
    }
    gpu::BarrierOp::create(b, loc);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          lane, index(numWarps));
    Value clamped = arith::SelectOp::create(b, loc, inRange, lane, zero);
    Value loaded = memref::LoadOp::create(b, loc, scratch, ValueRange{clamped});
    Value partial = arith::SelectOp::create(b, loc, inRange, loaded, identity);
    return warpReduce(combiner, partial);
  }

  LogicalResult emitGeneric(linalg::GenericOp generic, Distribution dist);
  LogicalResult emitRowLoop(scf::ForallOp loop, Value start, Value stride);
  LogicalResult emitPrologueItem(Operation *op, bool writesResult);
  LogicalResult emitBlockReduction(linalg::GenericOp generic,
                                   ArrayRef<Value> parSizes,
                                   ArrayRef<Value> redSizes,
                                   ArrayRef<unsigned> parDims,
                                   ArrayRef<unsigned> redDims,
                                   ArrayRef<Operation *> combiners);
};

} // namespace

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

/// Whether `op` may stay as it is in SIMT code: every thread computes it.
static bool isReplicable(Operation *op) {
  return isMemoryEffectFree(op) && op->getNumRegions() == 0;
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
