//===- KernelPasses.cpp - the kernel pipeline's small steps ---------------===//
//
// The steps of the kernel pipeline that upstream lacks, except the row loops
// (KernelRowLoops.cpp): fusion with a use-count rule, fast-math flags on
// reductions, polynomial math, and the buffer and ABI fix-ups (repeated
// results, aliasing facts, run-time sizes, strided copies). Each is a few
// dozen lines with nothing shared, so they share a file; Passes.td states
// what each expects and produces.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CPU/Passes.h"
#include "lmopt/Target/Common/PlanBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lmopt::cpu {
#define GEN_PASS_DEF_ANNOTATEKERNELARGSPASS
#define GEN_PASS_DEF_COPYREPEATEDRESULTSPASS
#define GEN_PASS_DEF_EXPANDKERNELMATHPASS
#define GEN_PASS_DEF_FUSEKERNELOPSPASS
#define GEN_PASS_DEF_LOWERSTRIDEDCOPIESPASS
#define GEN_PASS_DEF_PASSDYNAMICSIZESPASS
#define GEN_PASS_DEF_RELAXKERNELFLOATSPASS
#include "lmopt/Target/CPU/Passes.h.inc"
} // namespace mlir::lmopt::cpu

using namespace mlir;
using namespace mlir::lmopt::cpu;

namespace {

/// Fuses elementwise generics into their consumers when the producer has no
/// other use and the consumer reads each of its elements once (not through a
/// broadcast), so a chain of ops makes one pass over memory and nothing is
/// computed twice: a per-row statistic stays one value per row.
struct FuseKernelOpsPass
    : mlir::lmopt::cpu::impl::FuseKernelOpsPassBase<FuseKernelOpsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fusedOperand) {
          Operation *producer = fusedOperand->get().getDefiningOp();
          if (!producer || !producer->hasOneUse())
            return false;
          auto consumer =
              llvm::dyn_cast<linalg::LinalgOp>(fusedOperand->getOwner());
          return consumer &&
                 consumer.getMatchingIndexingMap(fusedOperand).isPermutation();
        });
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

/// Float arithmetic may contract to FMAs, and the combiners of reductions may
/// be reassociated: that is what lets LLVM vectorize a reduction loop. Nothing
/// else is relaxed (NaN and infinity semantics stay, softmax masks use -inf).
struct RelaxKernelFloatsPass
    : mlir::lmopt::cpu::impl::RelaxKernelFloatsPassBase<RelaxKernelFloatsPass> {
  void runOnOperation() override {
    getOperation().walk([](linalg::GenericOp generic) {
      Block *body = generic.getBody();
      DenseSet<Operation *> combiners;
      if (generic.getNumReductionLoops() > 0)
        for (Value yielded : body->getTerminator()->getOperands())
          if (Operation *def = yielded.getDefiningOp())
            combiners.insert(def);
      for (Operation &op : body->without_terminator()) {
        // Conversions keep their rounding: contract on an extf/truncf pair
        // lets arith fold away the rounding a narrow result type requires.
        auto fastMath = llvm::dyn_cast<arith::ArithFastMathInterface>(&op);
        if (!fastMath || llvm::isa<arith::ExtFOp, arith::TruncFOp>(op))
          continue;
        // Ops whose flags are optional (extf, truncf) may have none yet.
        arith::FastMathFlagsAttr current = fastMath.getFastMathFlagsAttr();
        arith::FastMathFlags flags =
            (current ? current.getValue() : arith::FastMathFlags::none) |
            arith::FastMathFlags::contract;
        if (combiners.contains(&op))
          flags = flags | arith::FastMathFlags::reassoc;
        op.setAttr(fastMath.getFastMathAttrName(),
                   arith::FastMathFlagsAttr::get(op.getContext(), flags));
      }
    });
  }
};

/// A kernel may return one value twice; each result needs its own buffer
/// (buffer-results-to-out-params would hoist one allocation into two
/// out-params), so every repeat becomes a copy into a fresh allocation.
struct CopyRepeatedResultsPass
    : mlir::lmopt::cpu::impl::CopyRepeatedResultsPassBase<
          CopyRepeatedResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      DenseSet<Value> seen;
      OpBuilder b(ret);
      Location loc = ret.getLoc();
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = llvm::dyn_cast<MemRefType>(operand.get().getType());
        if (!type || seen.insert(operand.get()).second)
          continue;
        SmallVector<Value> dynamicSizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            dynamicSizes.push_back(
                memref::DimOp::create(b, loc, operand.get(), d));
        Value copy = memref::AllocOp::create(b, loc, type, dynamicSizes,
                                             b.getI64IntegerAttr(64));
        memref::CopyOp::create(b, loc, operand.get(), copy);
        operand.set(copy);
      }
    });
  }
};

/// Kernel buffers are distinct (results never alias operands, but for the
/// pairs a step writes in place) and 64-byte aligned; telling LLVM lets it
/// keep accumulators in registers and use aligned vector accesses.
struct AnnotateKernelArgsPass
    : mlir::lmopt::cpu::impl::AnnotateKernelArgsPassBase<
          AnnotateKernelArgsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      ArrayRef<int64_t> shared;
      if (auto attr = func->getAttrOfType<DenseI64ArrayAttr>(
              mlir::lmopt::kInPlaceArgsAttrName))
        shared = attr.asArrayRef();
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        if (!llvm::isa<MemRefType>(func.getArgument(i).getType()))
          continue;
        if (!llvm::is_contained(shared, int64_t(i)))
          func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                          b.getUnitAttr());
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(64));
      }
    }
  }
};

/// Bare pointers carry no sizes: each memref argument with dynamic dims
/// becomes a rank-0 memref (a bare pointer) reinterpreted, dense and
/// row-major, with sizes from index arguments appended in argument then dim
/// order (the runtime's sizes array, docs/cpu-backend.md). A static
/// argument of zero elements (a reduction over an empty axis) is
/// reinterpreted the same way from constant sizes.
struct PassDynamicSizesPass
    : mlir::lmopt::cpu::impl::PassDynamicSizesPassBase<PassDynamicSizesPass> {
  void runOnOperation() override {
    bool valid = true;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.front();
      unsigned numArguments = func.getNumArguments();
      Location loc = func.getLoc();
      OpBuilder b(&entry, entry.begin());
      for (unsigned i = 0; i < numArguments; ++i) {
        BlockArgument arg = func.getArgument(i);
        auto type = llvm::dyn_cast<MemRefType>(arg.getType());
        // A static buffer of no elements has no bare-pointer form in
        // MLIR's lowering either: it takes the same path, with constant
        // sizes.
        if (!type || (type.hasStaticShape() && type.getNumElements() != 0))
          continue;
        // The sizes alone describe only a dense row-major buffer.
        if (!type.getLayout().isIdentity()) {
          emitError(arg.getLoc(), "kernel '")
              << func.getSymName() << "' argument #" << i << " of type " << type
              << " has dynamic dims but not the identity layout";
          valid = false;
          continue;
        }
        SmallVector<OpFoldResult> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d)) {
            sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
            continue;
          }
          if (failed(func.insertArgument(func.getNumArguments(),
                                         b.getIndexType(), {}, loc))) {
            signalPassFailure();
            return;
          }
          sizes.push_back(func.getArgument(func.getNumArguments() - 1));
        }
        // Row-major strides: static while the dims after are.
        SmallVector<OpFoldResult> strides(type.getRank());
        OpFoldResult stride = b.getIndexAttr(1);
        for (int64_t d = type.getRank() - 1; d >= 0; --d) {
          strides[d] = stride;
          std::optional<int64_t> known = getConstantIntValue(stride);
          std::optional<int64_t> size = getConstantIntValue(sizes[d]);
          if (known && size) {
            stride = b.getIndexAttr(*known * *size);
            continue;
          }
          Value lhs = getValueOrCreateConstantIndexOp(b, loc, stride);
          Value rhs = getValueOrCreateConstantIndexOp(b, loc, sizes[d]);
          stride = arith::MulIOp::create(b, loc, lhs, rhs).getResult();
        }
        arg.setType(MemRefType::get({}, type.getElementType()));
        Value view = memref::ReinterpretCastOp::create(
            b, loc, type, arg, b.getIndexAttr(0), sizes, strides);
        arg.replaceAllUsesExcept(view, view.getDefiningOp());
      }
      func.setType(FunctionType::get(
          func.getContext(), entry.getArgumentTypes(), func.getResultTypes()));
    }
    if (!valid)
      signalPassFailure();
  }
};

/// A memref.copy between strided views (slices, concatenation) would lower
/// to a call into MLIR's runtime library, which kernels do not link; as a
/// linalg.copy it becomes loops like everything else. Contiguous copies stay
/// (they lower to llvm.memcpy).
struct LowerStridedCopiesPass
    : mlir::lmopt::cpu::impl::LowerStridedCopiesPassBase<
          LowerStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      // linalg.copy takes ranked memrefs only.
      auto source = llvm::dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = llvm::dyn_cast<MemRefType>(copy.getTarget().getType());
      if (source && target &&
          (!source.getLayout().isIdentity() ||
           !target.getLayout().isIdentity()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

/// Polynomial approximations (f32; narrower floats computed in f32) instead
/// of libm calls, so the math vectorizes with the loop around it; bf16
/// conversions as integer arithmetic, since CPUs without AVX-512 BF16 would
/// call `__truncsfbf2`, which older libgcc lacks.
struct ExpandKernelMathPass
    : mlir::lmopt::cpu::impl::ExpandKernelMathPassBase<ExpandKernelMathPass> {
  void runOnOperation() override {
    auto approximated = [](StringRef name) {
      return llvm::is_contained(
          {math::ErfOp::getOperationName(), math::ExpOp::getOperationName(),
           math::ExpM1Op::getOperationName(), math::LogOp::getOperationName(),
           math::Log1pOp::getOperationName(), math::Log2Op::getOperationName(),
           math::TanhOp::getOperationName()},
          name);
    };
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, approximated);
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
