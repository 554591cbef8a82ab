//===- KernelRowLoops.cpp - one loop over rows for reducing kernels -------===//
//
// A normalization or softmax lowers to several generics (sum, mean, squares,
// rstd, output), each a pass over the whole tensor. Tiled over the rows of
// its last generic with its producers fused in, the kernel becomes one loop
// whose iteration handles one row through every generic, so the row stays in
// L1 and the intermediates shrink to one row. The rows are independent
// (scf.forall), so the loop can also be split between threads: the kernel
// then gets a `part` and a `parts` argument and runs its share of the rows.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CPU/Passes.h"
#include "lmopt/Target/Common/PlanBuilder.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"

namespace mlir::lmopt::cpu {
#define GEN_PASS_DEF_LOWERKERNELROWLOOPSPASS
#define GEN_PASS_DEF_TILEKERNELROWSPASS
#include "lmopt/Target/CPU/Passes.h.inc"
} // namespace mlir::lmopt::cpu

using namespace mlir;
using namespace mlir::lmopt::cpu;

/// The ops `op` (transitively) reads the values of, not `op` itself; with
/// `linalgOnly`, through linalg ops alone.
static DenseSet<Operation *> getProducers(Operation *op, bool linalgOnly) {
  SmallVector<Operation *> worklist{op};
  DenseSet<Operation *> producers;
  while (!worklist.empty())
    for (Value operand : worklist.pop_back_val()->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (producer && (!linalgOnly || llvm::isa<linalg::LinalgOp>(producer)) &&
          producers.insert(producer).second)
        worklist.push_back(producer);
    }
  return producers;
}

/// `root` and the linalg ops it (transitively) reads.
static DenseSet<Operation *> getLinalgProducers(linalg::LinalgOp root) {
  DenseSet<Operation *> producers = getProducers(root, /*linalgOnly=*/true);
  producers.insert(root);
  return producers;
}

/// The returned linalg op, last in the body, that reads a reduction: the
/// consumer whose rows drive the loop. Null when there is none.
static linalg::LinalgOp findRowRoot(func::FuncOp func) {
  linalg::LinalgOp root;
  func.walk([&](func::ReturnOp ret) {
    for (Value value : ret.getOperands()) {
      auto op = value.getDefiningOp<linalg::LinalgOp>();
      if (!op || !op.hasPureTensorSemantics() ||
          !llvm::any_of(getLinalgProducers(op), [](Operation *producer) {
            return llvm::cast<linalg::LinalgOp>(producer)
                       .getNumReductionLoops() > 0;
          }))
        continue;
      if (!root || root->isBeforeInBlock(op))
        root = op;
    }
  });
  return root;
}

/// True when every induction variable of `loop` feeds an offset of `slice`:
/// otherwise a producer fused through it would be recomputed whole on every
/// iteration that shares the slice.
static bool followsEveryIndex(tensor::ExtractSliceOp slice,
                              scf::ForallOp loop) {
  DenseSet<Value> reached;
  SmallVector<Value> worklist(slice.getOffsets().begin(),
                              slice.getOffsets().end());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!reached.insert(value).second)
      continue;
    Operation *def = value.getDefiningOp();
    if (def && loop->isProperAncestor(def))
      llvm::append_range(worklist, def->getOperands());
  }
  return llvm::all_of(loop.getInductionVars(),
                      [&](Value iv) { return reached.contains(iv); });
}

/// The returned linalg ops (on tensors) that no other returned op reads,
/// through any chain of ops, in body order: each can drive a loop of its
/// own that reads nothing another root's loop writes.
static SmallVector<linalg::LinalgOp> findIndependentRoots(func::FuncOp func) {
  SmallVector<linalg::LinalgOp> returned;
  SmallVector<Operation *> returnedOps;
  func.walk([&](func::ReturnOp ret) {
    for (Value value : ret.getOperands()) {
      auto op = value.getDefiningOp<linalg::LinalgOp>();
      if (op && op.hasPureTensorSemantics() && !llvm::is_contained(returned, op))
        returned.push_back(op);
      if (Operation *def = value.getDefiningOp())
        returnedOps.push_back(def);
    }
  });
  DenseSet<Operation *> read;
  for (Operation *op : returnedOps)
    for (Operation *producer : getProducers(op, /*linalgOnly=*/false))
      read.insert(producer);
  SmallVector<linalg::LinalgOp> roots;
  for (linalg::LinalgOp op : returned)
    if (!read.contains(op.getOperation()))
      roots.push_back(op);
  llvm::sort(roots, [](linalg::LinalgOp a, linalg::LinalgOp b) {
    return a->isBeforeInBlock(b);
  });
  return roots;
}

/// Whether every indexing map of `op` is a projected permutation (with
/// broadcast zeros): tiling takes the slice of an operand from the loop
/// ranges through its map, which a map that reads an axis backwards (a
/// negative-step slice, `-d0 + 18`) turns into a wrong slice.
static bool hasSliceableMaps(linalg::LinalgOp op) {
  return llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return map.isProjectedPermutation(/*allowZeroInResults=*/true);
  });
}

/// Whether `op` reduces over an outer loop while its innermost loop is
/// parallel: a sum over rows, one value per column.
static bool isColumnReduction(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  return op.getNumReductionLoops() > 0 && !iterators.empty() &&
         iterators.back() == utils::IteratorType::parallel;
}

/// Starts the destination chain of every returned value (linalg inits,
/// loop outputs, fills) at a `bufferization.alloc_tensor` of its own
/// instead of a `tensor.empty`. CSE merges equal empties, also after tiling
/// (the empty of a temporary in a loop of one iteration, once the loop is
/// inlined), and bufferization may then compute the temporary in the
/// result's buffer before the result reads its operands: wrong where the
/// runtime writes that result in place of an operand (a gradient
/// accumulated into its state, PlanStates.cpp). An allocation is never
/// merged.
static void giveResultsTheirOwnBuffers(func::FuncOp func) {
  func.walk([](func::ReturnOp ret) {
    for (Value value : ret.getOperands()) {
      OpOperand *init = nullptr;
      for (Operation *op = value.getDefiningOp(); op;) {
        auto result = llvm::cast<OpResult>(value);
        if (auto dps = llvm::dyn_cast<DestinationStyleOpInterface>(op))
          init = dps.getTiedOpOperand(result);
        else if (auto loop = llvm::dyn_cast<scf::ForallOp>(op))
          init = &loop.getOutputsMutable()[result.getResultNumber()];
        else
          break;
        value = init->get();
        op = value.getDefiningOp();
        if (!op || llvm::isa<tensor::EmptyOp>(op))
          break;
      }
      auto empty = value.getDefiningOp<tensor::EmptyOp>();
      if (!init || !empty)
        continue;
      OpBuilder builder(empty);
      init->set(bufferization::AllocTensorOp::create(
          builder, empty.getLoc(), empty.getType(), empty.getDynamicSizes()));
      if (empty->use_empty())
        empty->erase();
    }
  });
}

/// Gives every reader of a `linalg.fill` its own copy. CSE merges equal
/// fills, so two sums of one width (a layer norm's weight and bias
/// gradients) start from one zero-filled tensor; read by two loops, that
/// fill could fuse into neither, stayed before both, and bufferization
/// then filled one result and copied it into the other: work outside every
/// loop, which keeps the kernel from being split between threads.
static void unshareFills(func::FuncOp func) {
  SmallVector<linalg::FillOp> shared;
  func.walk([&](linalg::FillOp fill) {
    if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse())
      shared.push_back(fill);
  });
  for (linalg::FillOp fill : shared) {
    OpBuilder builder(fill);
    for (OpOperand &use :
         llvm::make_early_inc_range(llvm::drop_begin(fill->getUses())))
      use.set(builder.clone(*fill)->getResult(0));
  }
}

/// `tile`, or less so that a static `size` takes at least two tiles (of a
/// multiple of 16 elements, a vector, where it is larger than 16): a loop
/// of one iteration is inlined by canonicalization, and its work left
/// outside every loop keeps the kernel from being split between threads.
static int64_t atMostHalf(int64_t tile, int64_t size) {
  if (ShapedType::isDynamic(size) || size < 2 || 2 * tile <= size)
    return tile;
  int64_t half = (size + 1) / 2;
  if (half > 16)
    half = llvm::alignTo(half, 16);
  return std::min(tile, half);
}

namespace {

/// Tiles the root of a reducing kernel over all its loops but the innermost
/// (rank-1 roots: blocks of rows) with scf.forall and fuses its producers
/// into the loop, each only where its slice follows every row index. With
/// `independent-roots`, every root of an independent loop the same way.
struct TileKernelRowsPass
    : mlir::lmopt::cpu::impl::TileKernelRowsPassBase<TileKernelRowsPass> {
  using TileKernelRowsPassBase::TileKernelRowsPassBase;

  // Tiling and fusion go through linalg's TilingInterface, an external
  // model: without it every kernel would silently keep its loop nests.
  void getDependentDialects(DialectRegistry &registry) const override {
    TileKernelRowsPassBase::getDependentDialects(registry);
    linalg::registerTilingInterfaceExternalModels(registry);
  }

  /// The tile sizes of `root`'s loops (0: not tiled); all 0 when the root
  /// has no loop to share out.
  SmallVector<int64_t> getTileSizes(linalg::LinalgOp root) {
    unsigned numLoops = root.getNumLoops();
    SmallVector<utils::IteratorType> iterators = root.getIteratorTypesArray();
    SmallVector<int64_t> tileSizes(numLoops, 0);
    bool readsReduction = false, readsColumnReduction = false;
    for (Operation *producer : getLinalgProducers(root)) {
      auto op = llvm::cast<linalg::LinalgOp>(producer);
      readsReduction |= op.getNumReductionLoops() > 0;
      readsColumnReduction |= isColumnReduction(op);
    }
    if (numLoops == 1 && iterators[0] == utils::IteratorType::parallel) {
      int64_t tile = rank1RowTile;
      if (independentRoots && readsColumnReduction)
        tile = atMostHalf(columnTile, root.getStaticLoopRanges()[0]);
      else if (independentRoots && !readsReduction)
        tile = atMostHalf(flatTile, root.getStaticLoopRanges()[0]);
      tileSizes[0] = std::max<int64_t>(tile, 1);
      return tileSizes;
    }
    for (unsigned i = 0; i + 1 < numLoops; ++i)
      if (iterators[i] == utils::IteratorType::parallel)
        tileSizes[i] = 1;
    if (independentRoots && isColumnReduction(root))
      tileSizes.back() = std::max<int64_t>(
          atMostHalf(columnTile, root.getStaticLoopRanges().back()), 1);
    return tileSizes;
  }

  /// Tiles `root` and fuses its producers; false when the root keeps its
  /// loop nest.
  bool tileRoot(func::FuncOp func, linalg::LinalgOp root) {
    auto tileable = llvm::dyn_cast<TilingInterface>(root.getOperation());
    if (!tileable || !hasSliceableMaps(root))
      return false;
    SmallVector<int64_t> tileSizes = getTileSizes(root);
    if (llvm::all_of(tileSizes, [](int64_t size) { return size == 0; }))
      return false;

    MLIRContext *context = &getContext();
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(context, tileSizes));
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // A producer that something outside the loop also reads stays outside,
    // computed once.
    DenseSet<Operation *> inLoop = getLinalgProducers(root);
    options.setFusionControlFn(
        [&](tensor::ExtractSliceOp slice, OpResult producer, bool)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          auto loop = slice->getParentOfType<scf::ForallOp>();
          auto producerOp =
              llvm::dyn_cast<linalg::LinalgOp>(producer.getOwner());
          if (!producerOp || !hasSliceableMaps(producerOp) || !loop ||
              !followsEveryIndex(slice, loop))
            return std::nullopt;
          if (!llvm::all_of(producer.getUsers(), [&](Operation *user) {
                // The loop itself reads a destination it writes in place; a
                // dim reads only the shape.
                return inLoop.contains(user) ||
                       llvm::isa<func::ReturnOp, tensor::DimOp>(user) ||
                       user == loop || loop->isProperAncestor(user);
              }))
            return std::nullopt;
          scf::SCFTileAndFuseOptions::ControlFnResult result;
          // A kernel result computed inside the loop leaves it as a result
          // of the loop; intermediates stay one tile.
          result.yieldProducerReplacement =
              llvm::any_of(producer.getUsers(), [](Operation *user) {
                return llvm::isa<func::ReturnOp>(user);
              });
          return result;
        });
    RewritePatternSet cleanup(context);
    tensor::populateFoldTensorEmptyPatterns(cleanup);
    options.cleanupPatterns = FrozenRewritePatternSet(std::move(cleanup));

    IRRewriter rewriter(context);
    rewriter.setInsertionPoint(root);
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, tileable, options);
    if (failed(tiled))
      return false; // the kernel keeps one loop nest per generic
    DominanceInfo dominance(func);
    SmallVector<Operation *> replaced{root};
    llvm::append_range(replaced, tiled->fusedProducers);
    for (Operation *op : replaced) {
      for (OpResult result : op->getResults()) {
        Value replacement = tiled->replacements.lookup(result);
        if (!replacement)
          continue;
        Operation *loop = replacement.getDefiningOp();
        rewriter.replaceUsesWithIf(result, replacement, [&](OpOperand &use) {
          Operation *user = use.getOwner();
          return user->getParentOp() == loop->getParentOp() &&
                 dominance.properlyDominates(loop, user);
        });
      }
      if (op->use_empty())
        rewriter.eraseOp(op);
    }
    return true;
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // A kernel over a tensor of no elements has no rows to share out, and
    // fusing a producer into a tile of an empty slice crashes MLIR's tile
    // and fuse; its loops run zero times as they are.
    bool empty = false;
    func.walk([&](linalg::LinalgOp op) {
      for (Value operand : op->getOperands())
        if (auto type = llvm::dyn_cast<ShapedType>(operand.getType()))
          if (type.hasStaticShape() && type.getNumElements() == 0)
            empty = true;
    });
    if (empty)
      return;
    unshareFills(func);
    if (!independentRoots) {
      if (linalg::LinalgOp root = findRowRoot(func))
        tileRoot(func, root);
      return;
    }
    // Each root's loop reads only the function's arguments, values computed
    // before every loop and its own fused producers: the loops can run
    // their iterations in any order relative to each other.
    bool tiledAny = false;
    for (linalg::LinalgOp root : findIndependentRoots(func))
      tiledAny |= tileRoot(func, root);
    if (tiledAny)
      func->setAttr(kIndependentRowLoopsAttrName, UnitAttr::get(&getContext()));
    giveResultsTheirOwnBuffers(func);
  }
};

/// The buffer `value` is a view of: a block argument or the result of an
/// op that is not a view (an allocation).
static Value getRootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// The arguments of `func` some op in it writes, through any view; with
/// `lmopt.in_place_args`, an operand written in place counts as written.
static llvm::SmallDenseSet<unsigned> getWrittenArguments(func::FuncOp func) {
  llvm::SmallDenseSet<unsigned> written;
  func.walk([&](MemoryEffectOpInterface op) {
    SmallVector<MemoryEffects::EffectInstance> effects;
    op.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects)
      if (llvm::isa<MemoryEffects::Write>(effect.getEffect()))
        if (Value value = effect.getValue())
          if (auto arg = llvm::dyn_cast<BlockArgument>(getRootBuffer(value)))
            written.insert(arg.getArgNumber());
  });
  auto shared =
      func->getAttrOfType<DenseI64ArrayAttr>(mlir::lmopt::kInPlaceArgsAttrName);
  if (shared)
    for (unsigned i = 0; i + 1 < shared.size(); i += 2)
      if (written.contains(unsigned(shared[i])) ||
          written.contains(unsigned(shared[i + 1]))) {
        written.insert(unsigned(shared[i]));
        written.insert(unsigned(shared[i + 1]));
      }
  return written;
}

/// Iterations from which a linalg op before the loops is not worth running
/// once per share of the rows.
static constexpr int64_t kMaxPrivateIterations = 64;

/// Whether `op`, outside the row loop, lets the threads each run the whole
/// kernel body for their share of the rows: it writes no memory that another
/// thread reads or writes (its own temporaries and checks are fine). A small
/// linalg op (a scalar condition every loop reads, say) qualifies when it
/// writes only the call's own allocations and reads no argument the kernel
/// writes: each share computes it again.
static bool isPrivateToCall(Operation &op,
                            const llvm::SmallDenseSet<unsigned> &written) {
  if (isMemoryEffectFree(&op) ||
      llvm::isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
                memref::GetGlobalOp, cf::AssertOp, func::ReturnOp>(op))
    return true;
  auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics())
    return false;
  int64_t iterations = 1;
  for (int64_t range : linalgOp.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return false;
    iterations *= range;
  }
  if (iterations > kMaxPrivateIterations)
    return false;
  for (OpOperand &operand : op.getOpOperands()) {
    Value root = getRootBuffer(operand.get());
    bool local = root.getDefiningOp<memref::AllocOp>() ||
                 root.getDefiningOp<memref::AllocaOp>();
    if (linalgOp.isDpsInit(&operand) && !local)
      return false;
    if (auto arg = llvm::dyn_cast<BlockArgument>(root)) {
      if (written.contains(arg.getArgNumber()))
        return false;
    } else if (!local) {
      return false;
    }
  }
  return true;
}

/// `value` as an index value at `b`'s insertion point.
static Value materialize(OpBuilder &b, Location loc, OpFoldResult value) {
  return getValueOrCreateConstantIndexOp(b, loc, value);
}

/// Replaces `loop` with one scf.for over its linearized iterations
/// [begin, end), each delinearized back into the forall's indices.
static void lowerToLinearLoop(scf::ForallOp loop, Value part, Value parts) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> lowers, steps, trips;
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [lb, ub, step] :
       llvm::zip(loop.getMixedLowerBound(), loop.getMixedUpperBound(),
                 loop.getMixedStep())) {
    Value lower = materialize(b, loc, lb);
    Value stride = materialize(b, loc, step);
    Value span = arith::SubIOp::create(b, loc, materialize(b, loc, ub), lower);
    Value trip = arith::CeilDivUIOp::create(b, loc, span, stride);
    lowers.push_back(lower);
    steps.push_back(stride);
    trips.push_back(trip);
    total = arith::MulIOp::create(b, loc, total, trip);
  }
  Value begin = arith::ConstantIndexOp::create(b, loc, 0);
  Value end = total;
  if (part) {
    // Part p of P runs [total * p / P, total * (p + 1) / P).
    auto share = [&](Value index) -> Value {
      return arith::DivUIOp::create(
          b, loc, arith::MulIOp::create(b, loc, total, index), parts);
    };
    begin = share(part);
    end = share(arith::AddIOp::create(
        b, loc, part, arith::ConstantIndexOp::create(b, loc, 1)));
  }
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto linear = scf::ForOp::create(b, loc, begin, end, one);
  b.setInsertionPointToStart(linear.getBody());
  SmallVector<Value> indices(trips.size());
  Value remaining = linear.getInductionVar();
  for (int64_t d = int64_t(trips.size()) - 1; d >= 0; --d) {
    Value position = remaining;
    if (d > 0) {
      position = arith::RemUIOp::create(b, loc, remaining, trips[d]);
      remaining = arith::DivUIOp::create(b, loc, remaining, trips[d]);
    }
    indices[d] = arith::AddIOp::create(
        b, loc, lowers[d], arith::MulIOp::create(b, loc, position, steps[d]));
  }
  Block *body = loop.getBody();
  for (auto [iv, index] : llvm::zip(loop.getInductionVars(), indices))
    iv.replaceAllUsesWith(index);
  // The in_parallel terminator is empty on buffers.
  body->getTerminator()->erase();
  linear.getBody()->getOperations().splice(
      linear.getBody()->getTerminator()->getIterator(), body->getOperations());
  loop.erase();
}

/// After bufferization: each scf.forall of TileKernelRowsPass becomes an
/// scf.for over its rows. When the kernel body is that one loop plus
/// private work, the function gets two index arguments after the buffers,
/// `part` and `parts`, and the loop runs part `part` of `parts` of the rows
/// (KernelEntryPoint::partitioned; the entry points pass 0 and 1, or a
/// thread's share).
struct LowerKernelRowLoopsPass
    : mlir::lmopt::cpu::impl::LowerKernelRowLoopsPassBase<
          LowerKernelRowLoopsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<scf::ForallOp> loops;
    func.walk([&](scf::ForallOp loop) { loops.push_back(loop); });
    if (loops.empty())
      return;
    // Before bufferization the loop's results are tensors that the rows
    // insert into; there is nothing yet to turn into a plain loop.
    bool bufferized = true;
    for (scf::ForallOp loop : loops) {
      if (loop.getNumResults() == 0)
        continue;
      loop.emitOpError("has ")
          << loop.getNumResults()
          << " tensor result(s): lmopt-lower-kernel-row-loops lowers row "
             "loops on buffers, after bufferization";
      bufferized = false;
    }
    if (!bufferized)
      return signalPassFailure();
    // Several loops split together only when lmopt-tile-kernel-rows found
    // that none reads what another writes: a thread runs its share of each
    // loop in turn, without waiting for the other threads' shares.
    bool independent = func->hasAttr(kIndependentRowLoopsAttrName);
    func->removeAttr(kIndependentRowLoopsAttrName);
    llvm::SmallDenseSet<unsigned> written = getWrittenArguments(func);
    bool partition =
        (loops.size() == 1 || independent) &&
        llvm::all_of(loops,
                     [&](scf::ForallOp loop) {
                       return loop->getParentOp() == func;
                     }) &&
        llvm::all_of(func.front(), [&](Operation &op) {
          auto loop = llvm::dyn_cast<scf::ForallOp>(op);
          return (loop && llvm::is_contained(loops, loop)) ||
                 isPrivateToCall(op, written);
        });
    Value part, parts;
    if (partition) {
      Location loc = func.getLoc();
      unsigned position = func.getNumArguments();
      IndexType index = IndexType::get(&getContext());
      if (failed(func.insertArgument(position, index, {}, loc)) ||
          failed(func.insertArgument(position + 1, index, {}, loc)))
        return signalPassFailure();
      part = func.getArgument(position);
      parts = func.getArgument(position + 1);
      func->setAttr(kPartitionedAttrName, UnitAttr::get(&getContext()));
    }
    for (scf::ForallOp loop : loops)
      lowerToLinearLoop(loop, part, parts);
  }
};

} // namespace
