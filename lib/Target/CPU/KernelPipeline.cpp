//===- KernelPipeline.cpp - kernels from lmopt ops to the LLVM dialect ----===//
//
// Upstream passes do almost all the work; the few steps they lack (fusion
// with a use-count rule, fast-math flags on reductions, polynomial math,
// aliasing facts on kernel arguments) are small function passes here. They
// are internal steps of this one pipeline, so they are not registered.
//
//===----------------------------------------------------------------------===//

#include "KernelPipeline.h"

#include "lmopt/Conversion/Passes.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cpu;

void mlir::lmopt::cpu::registerKernelCodegenInterfaces(
    DialectRegistry &registry) {
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

//===----------------------------------------------------------------------===//
// Contract check and lowering diagnostics
//===----------------------------------------------------------------------===//

/// The ONNX node name a location carries (the importer's NameLoc), if any.
static std::optional<std::string> getNodeName(Location loc) {
  SmallVector<Location> worklist{loc};
  while (!worklist.empty()) {
    Location current = worklist.pop_back_val();
    if (auto named = llvm::dyn_cast<NameLoc>(current))
      return named.getName().str();
    if (auto fused = llvm::dyn_cast<FusedLoc>(current))
      for (Location inner : llvm::reverse(fused.getLocations()))
        worklist.push_back(inner);
    if (auto callSite = llvm::dyn_cast<CallSiteLoc>(current))
      worklist.push_back(callSite.getCallee());
  }
  return std::nullopt;
}

/// Why `type` cannot cross a kernel boundary, or an empty string.
static std::string checkBoundaryType(Type type) {
  auto tensorType = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return "is not a ranked tensor";
  if (!tensorType.hasStaticShape())
    return "has a dynamic shape";
  if (!llvm::isa<IntegerType, FloatType>(tensorType.getElementType()))
    return "has an element type that is neither integer nor float";
  return "";
}

FailureOr<SmallVector<KernelEntryPoint>>
mlir::lmopt::cpu::checkKernelModule(ModuleOp module) {
  SmallVector<KernelEntryPoint> entryPoints;
  bool valid = true;
  for (Operation &op : module.getBody()->getOperations()) {
    auto func = llvm::dyn_cast<func::FuncOp>(op);
    if (!func) {
      op.emitError("kernel modules hold only func.func, not '")
          << op.getName() << "'";
      valid = false;
      continue;
    }
    StringRef name = func.getSymName();
    // The entry point is a C symbol; the implementation's internal name is
    // reserved.
    if (name.empty() || llvm::isDigit(name.front()) ||
        !llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; }) ||
        name.starts_with("__lmopt")) {
      func.emitError("kernel name '")
          << name << "' is not a C identifier (or starts with '__lmopt')";
      valid = false;
      continue;
    }
    if (func.isExternal() || !func.isPublic()) {
      func.emitError("kernel '") << name << "' must be public with a body";
      valid = false;
      continue;
    }
    auto checkTypes = [&](TypeRange types, StringRef what) {
      for (auto [i, type] : llvm::enumerate(types)) {
        std::string why = checkBoundaryType(type);
        if (why.empty())
          continue;
        func.emitError("kernel '")
            << name << "' " << what << " #" << i << " of type " << type << " "
            << why << " (kernels take and return static-shaped tensors)";
        valid = false;
      }
    };
    checkTypes(func.getArgumentTypes(), "operand");
    checkTypes(func.getResultTypes(), "result");
    entryPoints.push_back(
        {name.str(), func.getNumArguments() + func.getNumResults()});
  }
  if (!valid)
    return failure();
  return entryPoints;
}

LogicalResult mlir::lmopt::cpu::lowerKernelsToLinalg(ModuleOp module) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.addPass(createConvertLmoptToLinalgPass());
  if (failed(pm.run(module)))
    return failure();
  // The pass leaves what it cannot lower; every leftover is reported.
  bool complete = true;
  for (auto func : module.getOps<func::FuncOp>()) {
    func.walk([&](Operation *op) {
      if (!llvm::isa<LmoptDialect, quant::QuantDialect>(op->getDialect()))
        return;
      InFlightDiagnostic diag = op->emitError("no CPU lowering for '")
                                << op->getName() << "' in kernel '"
                                << func.getSymName() << "'";
      if (std::optional<std::string> node = getNodeName(op->getLoc()))
        diag << " (node '" << *node << "')";
      complete = false;
    });
  }
  return success(complete);
}

//===----------------------------------------------------------------------===//
// Internal pipeline steps
//===----------------------------------------------------------------------===//

namespace {

/// Fuses elementwise generics into their consumers when the producer has no
/// other use, so a chain of ops makes one pass over memory and nothing is
/// computed twice.
struct FuseElementwiseKernelOpsPass
    : PassWrapper<FuseElementwiseKernelOpsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwiseKernelOpsPass)

  StringRef getArgument() const final { return "lmopt-fuse-kernel-ops"; }
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fusedOperand) {
          Operation *producer = fusedOperand->get().getDefiningOp();
          return producer && producer->hasOneUse();
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
struct RelaxKernelFloatSemanticsPass
    : PassWrapper<RelaxKernelFloatSemanticsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RelaxKernelFloatSemanticsPass)

  StringRef getArgument() const final { return "lmopt-relax-kernel-floats"; }
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

/// Polynomial approximations (f32; narrower floats computed in f32) instead
/// of libm calls, so the math vectorizes with the loop around it; bf16
/// conversions as integer arithmetic, since CPUs without AVX-512 BF16 would
/// call `__truncsfbf2`, which older libgcc lacks.
struct ExpandKernelMathPass
    : PassWrapper<ExpandKernelMathPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandKernelMathPass)

  StringRef getArgument() const final { return "lmopt-expand-kernel-math"; }
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

/// A kernel may return one value twice; each result needs its own buffer
/// (buffer-results-to-out-params would hoist one allocation into two
/// out-params), so every repeat becomes a copy into a fresh allocation.
struct CopyRepeatedResultsPass
    : PassWrapper<CopyRepeatedResultsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CopyRepeatedResultsPass)

  StringRef getArgument() const final { return "lmopt-copy-repeated-results"; }
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = llvm::dyn_cast<MemRefType>(operand.get().getType());
        if (!type || seen.insert(operand.get()).second)
          continue;
        Value copy = memref::AllocOp::create(b, ret.getLoc(), type,
                                             b.getI64IntegerAttr(64));
        memref::CopyOp::create(b, ret.getLoc(), operand.get(), copy);
        operand.set(copy);
      }
    });
  }
};

/// A memref.copy between strided views (slices, concatenation) would lower
/// to a call into MLIR's runtime library, which kernels do not link; as a
/// linalg.copy it becomes loops like everything else. Contiguous copies stay
/// (they lower to llvm.memcpy).
struct LowerStridedCopiesPass
    : PassWrapper<LowerStridedCopiesPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerStridedCopiesPass)

  StringRef getArgument() const final { return "lmopt-lower-strided-copies"; }
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto isIdentity = [](Type type) {
        return llvm::cast<MemRefType>(type).getLayout().isIdentity();
      };
      if (!isIdentity(copy.getSource().getType()) ||
          !isIdentity(copy.getTarget().getType()))
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

/// Kernel buffers are distinct (results never alias operands) and 64-byte
/// aligned; telling LLVM lets it keep accumulators in registers and use
/// aligned vector accesses.
struct AnnotateKernelArgumentsPass
    : PassWrapper<AnnotateKernelArgumentsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AnnotateKernelArgumentsPass)

  StringRef getArgument() const final { return "lmopt-annotate-kernel-args"; }
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        if (!llvm::isa<MemRefType>(func.getArgument(i).getType()))
          continue;
        func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                        b.getUnitAttr());
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(64));
      }
    }
  }
};

} // namespace

void mlir::lmopt::cpu::buildKernelBufferizationPipeline(OpPassManager &pm) {
  // Fusion on tensors, where use-def chains show what can be fused.
  pm.addNestedPass<func::FuncOp>(
      std::make_unique<FuseElementwiseKernelOpsPass>());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(
      std::make_unique<RelaxKernelFloatSemanticsPass>());

  // Buffers: results become the caller's buffers (no copy when the result
  // is computed in place), temporaries are freed before returning.
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  pm.addNestedPass<func::FuncOp>(std::make_unique<CopyRepeatedResultsPass>());
  bufferization::BufferResultsToOutParamsPassOptions outParamsOptions;
  outParamsOptions.hoistStaticAllocs = true;
  outParamsOptions.modifyPublicFunctions = true;
  pm.addPass(
      bufferization::createBufferResultsToOutParamsPass(outParamsOptions));
  pm.addPass(std::make_unique<AnnotateKernelArgumentsPass>());
  pm.addPass(createCanonicalizerPass());
  // Statistics (a mean per row) live on the stack; a kernel may run on a
  // thread-pool thread, so the bound stays far below any thread's stack.
  bufferization::PromoteBuffersToStackPassOptions stackOptions;
  stackOptions.maxAllocSizeInBytes = 16 * 1024;
  stackOptions.maxRankOfAllocatedMemRef = 4;
  pm.addNestedPass<func::FuncOp>(
      bufferization::createPromoteBuffersToStackPass(stackOptions));
  bufferization::buildBufferDeallocationPipeline(pm);
}

void mlir::lmopt::cpu::buildKernelToLLVMPipeline(OpPassManager &pm) {
  // Loops and scalar math; LLVM vectorizes the innermost loops.
  pm.addNestedPass<func::FuncOp>(std::make_unique<LowerStridedCopiesPass>());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addNestedPass<func::FuncOp>(std::make_unique<ExpandKernelMathPass>());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // To the LLVM dialect. Math LLVM has intrinsics for goes there first; the
  // rest (f64 erf, tanh, ...) becomes libm calls.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
}
