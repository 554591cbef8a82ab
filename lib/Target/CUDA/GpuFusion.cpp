//===- GpuFusion.cpp - fusion that recomputes instead of storing ----------===//
//
// The CPU keeps a value read twice (x - mean in a layer norm, a mask bias
// broadcast over heads) in a temporary and computes it once. On a GPU such a
// temporary sits between two loops distributed differently over threads, so
// the second would need a grid-wide barrier; recomputing the value in each
// consumer costs a few instructions instead. So: every elementwise generic
// with several uses is cloned per use, then every elementwise producer fuses
// into its (single) consumer, through broadcasts too.
//
//===----------------------------------------------------------------------===//

#include "KernelMapping.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::lmopt;

/// Past this many generics a kernel stops cloning producers (the clones of a
/// deep diamond-shaped chain multiply).
static constexpr unsigned kMaxGenericsPerKernel = 512;

namespace {

/// tensor.generate as a linalg.generic whose body reads linalg.index, so
/// that it fuses like any elementwise op instead of becoming a temporary.
struct GenerateToGeneric : OpRewritePattern<tensor::GenerateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::GenerateOp op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type,
                                          op.getDynamicExtents());
    int64_t rank = type.getRank();
    SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{empty}, maps,
        iterators, [&](OpBuilder &b, Location nested, ValueRange) {
          IRMapping mapping;
          Block &body = op.getBody().front();
          for (int64_t d = 0; d < rank; ++d)
            mapping.map(body.getArgument(d),
                        linalg::IndexOp::create(b, nested, d).getResult());
          for (Operation &inner : body.without_terminator())
            b.clone(inner, mapping);
          auto yield = llvm::cast<tensor::YieldOp>(body.getTerminator());
          linalg::YieldOp::create(b, nested,
                                  mapping.lookupOrDefault(yield.getValue()));
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// tensor.extract of an element of an elementwise generic's result: that
/// element computed in place (an expand or gather reads its input this way,
/// and the input would otherwise be a temporary of run-time size).
struct ExtractOfElementwise : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getTensor().getDefiningOp<linalg::GenericOp>();
    if (!producer || !producer.hasPureTensorSemantics() ||
        producer.getNumResults() != 1 ||
        producer.getNumLoops() != producer.getNumParallelLoops())
      return rewriter.notifyMatchFailure(op, "not an elementwise generic");
    OpOperand &init = producer.getDpsInitsMutable()[0];
    AffineMap outMap = producer.getMatchingIndexingMap(&init);
    if (!outMap.isPermutation() || producer.payloadUsesValueFromOperand(&init))
      return rewriter.notifyMatchFailure(op, "the output is not a permutation");
    Location loc = op.getLoc();
    // Loop d is the index of the output dim that reads it.
    SmallVector<Value> loops(producer.getNumLoops());
    for (auto [position, expr] : llvm::enumerate(outMap.getResults()))
      loops[llvm::cast<AffineDimExpr>(expr).getPosition()] =
          op.getIndices()[position];
    IRMapping mapping;
    for (OpOperand *input : producer.getDpsInputOperands()) {
      Value value = input->get();
      if (llvm::isa<RankedTensorType>(value.getType())) {
        AffineMap map = producer.getMatchingIndexingMap(input);
        SmallVector<Value> indices;
        for (AffineExpr expr : map.getResults())
          indices.push_back(affine::makeComposedAffineApply(
                                rewriter, loc, AffineMap::get(map.getNumDims(),
                                                              0, expr),
                                getAsOpFoldResult(loops))
                                .getResult());
        value = tensor::ExtractOp::create(rewriter, loc, value, indices);
      }
      mapping.map(producer.getMatchingBlockArgument(input), value);
    }
    Block *body = producer.getBody();
    for (Operation &inner : body->without_terminator()) {
      if (auto index = llvm::dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), loops[index.getDim()]);
        continue;
      }
      rewriter.clone(inner, mapping);
    }
    rewriter.replaceOp(
        op, mapping.lookupOrDefault(body->getTerminator()->getOperand(0)));
    return success();
  }
};

} // namespace

static bool isElementwiseGeneric(Operation *op) {
  auto generic = llvm::dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.hasPureTensorSemantics() &&
         generic.getNumLoops() == generic.getNumParallelLoops() &&
         generic.getNumResults() == 1;
}

/// True when `op`'s result is a kernel result whose every other reader is
/// an elementwise generic that is itself a kernel result (a layer norm's
/// output returned both in f32 and cast to f16): cloned, the two copies
/// would be two loops over the rows; kept shared, row tiling computes both
/// in one row loop (the returned producer is yielded from it).
static bool feedsOnlyReturnedElementwise(Operation *op) {
  bool returned = false;
  for (Operation *user : op->getResult(0).getUsers()) {
    if (llvm::isa<func::ReturnOp>(user)) {
      returned = true;
      continue;
    }
    if (!isElementwiseGeneric(user) ||
        !llvm::any_of(user->getResult(0).getUsers(), [](Operation *reader) {
          return llvm::isa<func::ReturnOp>(reader);
        }))
      return false;
  }
  return returned;
}

/// Gives every use of an elementwise generic its own copy, walking the body
/// backwards so that a clone's operands are cloned in turn.
static void cloneSharedProducers(func::FuncOp func) {
  unsigned numGenerics = 0;
  func.walk([&](linalg::GenericOp) { ++numGenerics; });
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    ops.push_back(&op);
  OpBuilder b(func.getContext());
  for (Operation *op : llvm::reverse(ops)) {
    if (!isElementwiseGeneric(op) || feedsOnlyReturnedElementwise(op))
      continue;
    Value result = op->getResult(0);
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : result.getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      if (numGenerics >= kMaxGenericsPerKernel)
        return;
      b.setInsertionPoint(op);
      Operation *clone = b.clone(*op);
      use->set(clone->getResult(0));
      ++numGenerics;
    }
  }
}

LogicalResult mlir::lmopt::cuda::fuseKernelOpsForGpu(ModuleOp module) {
  MLIRContext *context = module.getContext();
  {
    RewritePatternSet patterns(context);
    linalg::populateLinalgNamedOpsGeneralizationPatterns(patterns);
    patterns.add<GenerateToGeneric>(context);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return module.emitError("CUDA kernel fusion: generalization diverged");
  }
  for (auto func : module.getOps<func::FuncOp>())
    cloneSharedProducers(func);
  RewritePatternSet patterns(context);
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [](OpOperand *fusedOperand) {
        Operation *producer = fusedOperand->get().getDefiningOp();
        return producer && producer->hasOneUse();
      });
  patterns.add<ExtractOfElementwise>(context);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
  tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
  if (failed(applyPatternsGreedily(module, std::move(patterns))))
    return module.emitError("CUDA kernel fusion: fusion diverged");
  return success();
}
