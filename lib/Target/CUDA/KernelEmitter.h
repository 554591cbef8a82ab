//===- KernelEmitter.h - SIMT code for a kernel's work items ----*- C++ -*-===//
//
// What KernelMapping.cpp's schedule emits each work item with: the thread,
// block and grid ids, grid- and block-stride loops, row loops, reductions
// across a block (warp shuffles, then shared memory), and the prologue
// items every block recomputes. Private to lib/Target/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_TARGET_CUDA_KERNELEMITTER_H
#define LMOPT_LIB_TARGET_CUDA_KERNELEMITTER_H

#include "KernelSchedule.h"

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

namespace mlir::lmopt::cuda {

inline constexpr int64_t kWarpSize = 32;
/// Static shared memory a block may use without opting in.
inline constexpr int64_t kMaxSharedBytes = 48 * 1024;

/// "no CUDA lowering for '<op>' in kernel '<func>' (node '<node>'): <why>".
InFlightDiagnostic emitNoLowering(Operation *op, func::FuncOp func,
                                  StringRef why);

/// Bytes of a statically shaped buffer.
int64_t getSizeInBytes(MemRefType type);

/// Whether `op` may stay as it is in SIMT code: every thread computes it.
inline bool isReplicable(Operation *op) {
  return isMemoryEffectFree(op) && op->getNumRegions() == 0;
}

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

} // namespace mlir::lmopt::cuda

#endif // LMOPT_LIB_TARGET_CUDA_KERNELEMITTER_H
