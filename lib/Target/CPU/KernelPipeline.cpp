//===- KernelPipeline.cpp - kernels from lmopt ops to the LLVM dialect ----===//
//
// The kernel contract check, the lowering to linalg with its diagnostics,
// and the pipeline from linalg on tensors to the LLVM dialect. Upstream
// passes do almost all the work; the few steps they lack (fusion with a
// use-count rule, fast-math flags on reductions, row loops, polynomial math,
// aliasing facts on kernel arguments) are registered passes of their own
// (lmopt/Target/CPU/Passes.td), which the pipeline only composes.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CPU/KernelPipeline.h"

#include "lmopt/Conversion/Passes.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Support/FusionReport.h"
#include "lmopt/Target/CPU/Passes.h"

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
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
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
  linalg::registerTilingInterfaceExternalModels(registry);
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

/// Why `type` cannot cross a kernel boundary, or an empty string.
static std::string checkBoundaryType(Type type) {
  auto tensorType = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return "is not a ranked tensor";
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
            << why << " (kernels take and return ranked integer or float "
            << "tensors)";
        valid = false;
      }
    };
    checkTypes(func.getArgumentTypes(), "operand");
    checkTypes(func.getResultTypes(), "result");
    unsigned numSizes = 0;
    for (TypeRange types :
         {TypeRange(func.getArgumentTypes()), TypeRange(func.getResultTypes())})
      for (Type type : types)
        if (auto tensorType = llvm::dyn_cast<RankedTensorType>(type))
          numSizes += tensorType.getNumDynamicDims();
    entryPoints.push_back(
        {name.str(), func.getNumArguments() + func.getNumResults(), numSizes});
  }
  if (!valid)
    return failure();
  return entryPoints;
}

/// An index from a 0-D or one element of a 1-D integer tensor.
static Value extractIndex(OpBuilder &b, Location loc, Value tensor,
                          int64_t element) {
  auto type = llvm::cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> indices;
  if (type.getRank() == 1)
    indices.push_back(arith::ConstantIndexOp::create(b, loc, element));
  Value value = tensor::ExtractOp::create(b, loc, tensor, indices);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

static Value constantIndex(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// ONNX Range over integers with a size only known at run time:
/// max(ceil((limit - start) / delta), 0) elements.
static LogicalResult lowerDynamicRange(RangeOp op) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  auto element = llvm::dyn_cast<IntegerType>(type.getElementType());
  if (type.hasStaticShape() || !element)
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value start = extractIndex(b, loc, op.getStart(), 0);
  Value limit = extractIndex(b, loc, op.getLimit(), 0);
  Value delta = extractIndex(b, loc, op.getDelta(), 0);
  Value span = arith::SubIOp::create(b, loc, limit, start);
  Value count = arith::CeilDivSIOp::create(b, loc, span, delta);
  count = arith::MaxSIOp::create(b, loc, count, constantIndex(b, loc, 0));
  auto generate = tensor::GenerateOp::create(
      b, loc, type, ValueRange{count},
      [&](OpBuilder &nb, Location nloc, ValueRange indices) {
        Value step = arith::MulIOp::create(nb, nloc, indices[0], delta);
        Value value = arith::AddIOp::create(nb, nloc, start, step);
        tensor::YieldOp::create(
            nb, nloc, arith::IndexCastOp::create(nb, nloc, element, value));
      });
  op.replaceAllUsesWith(generate.getResult());
  op.erase();
  return success();
}

/// ONNX Slice with unit steps and constant axes whose result size is only
/// known at run time: a view with clamped bounds.
static LogicalResult lowerDynamicSlice(SliceOp op) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  if (type.hasStaticShape())
    return failure();
  auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = inputType.getRank();
  auto numSliced =
      llvm::cast<RankedTensorType>(op.getStarts().getType()).getNumElements();
  SmallVector<int64_t> axes;
  if (op.getAxes()) {
    DenseIntElementsAttr attr;
    if (!matchPattern(op.getAxes(), m_Constant(&attr)))
      return failure();
    for (const APInt &axis : attr.getValues<APInt>())
      axes.push_back(axis.getSExtValue() < 0 ? axis.getSExtValue() + rank
                                             : axis.getSExtValue());
  } else {
    for (int64_t i = 0; i < numSliced; ++i)
      axes.push_back(i);
  }
  if (op.getSteps()) {
    DenseIntElementsAttr attr;
    if (!matchPattern(op.getSteps(), m_Constant(&attr)) ||
        llvm::any_of(attr.getValues<APInt>(),
                     [](const APInt &step) { return !step.isOne(); }))
      return failure();
  }
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(
        tensor::DimOp::create(b, loc, op.getInput(), d).getResult());
  Value zero = constantIndex(b, loc, 0);
  for (auto [k, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank)
      return failure();
    Value dim = llvm::cast<Value>(sizes[axis]);
    // Negative bounds count from the end; both clamp into [0, dim].
    auto normalize = [&](Value index) {
      Value negative =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
      Value fromEnd = arith::AddIOp::create(b, loc, index, dim);
      index = arith::SelectOp::create(b, loc, negative, fromEnd, index);
      index = arith::MaxSIOp::create(b, loc, index, zero);
      return arith::MinSIOp::create(b, loc, index, dim).getResult();
    };
    Value first = normalize(extractIndex(b, loc, op.getStarts(), k));
    Value last = normalize(extractIndex(b, loc, op.getEnds(), k));
    Value size = arith::SubIOp::create(b, loc, last, first);
    offsets[axis] = first;
    sizes[axis] = arith::MaxSIOp::create(b, loc, size, zero).getResult();
  }
  Value slice = tensor::ExtractSliceOp::create(b, loc, op.getInput(), offsets,
                                               sizes, strides);
  if (slice.getType() != type)
    slice = tensor::CastOp::create(b, loc, type, slice);
  op.replaceAllUsesWith(slice);
  op.erase();
  return success();
}

/// ONNX Expand whose result size is only known at run time: each dim is
/// the target's where the input's is 1, the input's otherwise.
static LogicalResult lowerDynamicExpand(ExpandOp op) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = type.getRank(), inputRank = inputType.getRank();
  if (type.hasStaticShape() || inputRank > rank)
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value one = constantIndex(b, loc, 1);
  SmallVector<Value> inputDims, isOne, extents;
  for (int64_t d = 0; d < rank; ++d) {
    Value target = extractIndex(b, loc, op.getShape(), d);
    int64_t inputDim = d - (rank - inputRank);
    Value out = target;
    if (inputDim >= 0) {
      Value dim = tensor::DimOp::create(b, loc, op.getInput(), inputDim);
      Value unit =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dim, one);
      out = arith::SelectOp::create(b, loc, unit, target, dim);
      isOne.push_back(unit);
    }
    if (type.isDynamicDim(d))
      extents.push_back(out);
  }
  Value zero = constantIndex(b, loc, 0);
  auto generate = tensor::GenerateOp::create(
      b, loc, type, extents,
      [&](OpBuilder &nb, Location nloc, ValueRange indices) {
        SmallVector<Value> source;
        for (int64_t d = 0; d < inputRank; ++d)
          source.push_back(arith::SelectOp::create(
              nb, nloc, isOne[d], zero, indices[d + rank - inputRank]));
        tensor::YieldOp::create(
            nb, nloc,
            tensor::ExtractOp::create(nb, nloc, op.getInput(), source));
      });
  op.replaceAllUsesWith(generate.getResult());
  op.erase();
  return success();
}

/// ONNX ConstantOfShape: each dynamic dim read from the shape operand
/// (negative sizes as 0), every element the value attribute.
static LogicalResult lowerConstantOfShape(ConstantOfShapeOp op) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  TypedAttr value = llvm::cast<TypedAttr>(op.getValueAttr());
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value)) {
    if (dense.getNumElements() != 1)
      return failure();
    value = dense.getSplatValue<TypedAttr>();
  }
  if (!value || value.getType() != type.getElementType())
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value zero = constantIndex(b, loc, 0);
  SmallVector<Value> extents;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      extents.push_back(arith::MaxSIOp::create(
          b, loc, extractIndex(b, loc, op.getShape(), d), zero));
  auto generate = tensor::GenerateOp::create(
      b, loc, type, extents, [&](OpBuilder &nb, Location nloc, ValueRange) {
        tensor::YieldOp::create(nb, nloc,
                                arith::ConstantOp::create(nb, nloc, value));
      });
  op.replaceAllUsesWith(generate.getResult());
  op.erase();
  return success();
}

/// Shape arithmetic on dynamic dims, which folds away when they are static:
/// `lmopt.shape` reads the sizes the kernel was given; range, slice,
/// expand and constant_of_shape compute their result sizes from their
/// operands. What does not
/// match is left for convert-lmopt-to-linalg, which reports it.
static void lowerDynamicShapeOps(ModuleOp module) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<RangeOp, SliceOp, ExpandOp, ConstantOfShapeOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (auto range = dyn_cast<RangeOp>(op))
      (void)lowerDynamicRange(range);
    else if (auto slice = dyn_cast<SliceOp>(op))
      (void)lowerDynamicSlice(slice);
    else if (auto expand = dyn_cast<ExpandOp>(op))
      (void)lowerDynamicExpand(expand);
    else if (auto fill = dyn_cast<ConstantOfShapeOp>(op))
      (void)lowerConstantOfShape(fill);
  }
  SmallVector<ShapeOp> shapeOps;
  module.walk([&](ShapeOp op) { shapeOps.push_back(op); });
  for (ShapeOp op : shapeOps) {
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    if (inputType.hasStaticShape())
      continue; // folds in the lowering
    int64_t rank = inputType.getRank();
    auto clamp = [&](int64_t index) {
      return std::clamp<int64_t>(index < 0 ? index + rank : index, 0, rank);
    };
    int64_t start = clamp(op.getStart());
    int64_t end = clamp(op.getEnd() ? int64_t(*op.getEnd()) : rank);
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<Value> dims;
    for (int64_t d = start; d < end; ++d) {
      Value size = tensor::DimOp::create(b, loc, op.getInput(), d);
      dims.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), size));
    }
    auto type = llvm::cast<RankedTensorType>(op.getType());
    if (type.getNumElements() != int64_t(dims.size()))
      continue; // left for the lowering, which reports it
    op.replaceAllUsesWith(
        tensor::FromElementsOp::create(b, loc, type, dims).getResult());
    op.erase();
  }
}

LogicalResult mlir::lmopt::cpu::lowerKernelsToLinalg(ModuleOp module,
                                                     StringRef target) {
  lowerDynamicShapeOps(module);
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
      InFlightDiagnostic diag = op->emitError("no ")
                                << target << " lowering for '"
                                << op->getName() << "' in kernel '"
                                << func.getSymName() << "'";
      if (std::optional<std::string> node = findNodeName(op->getLoc()))
        diag << " (node '" << *node << "')";
      complete = false;
    });
  }
  return success(complete);
}

void mlir::lmopt::cpu::buildKernelBufferizePasses(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  pm.addNestedPass<func::FuncOp>(createCopyRepeatedResultsPass());
  bufferization::BufferResultsToOutParamsPassOptions outParamsOptions;
  outParamsOptions.hoistStaticAllocs = true;
  // Results with run-time sizes too: the caller's buffer has them.
  outParamsOptions.hoistDynamicAllocs = true;
  outParamsOptions.modifyPublicFunctions = true;
  pm.addPass(
      bufferization::createBufferResultsToOutParamsPass(outParamsOptions));
}

void mlir::lmopt::cpu::buildKernelBufferizationPipeline(OpPassManager &pm) {
  // Fusion on tensors, where use-def chains show what can be fused.
  pm.addNestedPass<func::FuncOp>(createFuseKernelOpsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createRelaxKernelFloatsPass());
  // Reducing kernels: one loop over rows, each row through every generic;
  // every other kernel: one loop per independent result, so that its rows
  // (or columns, for a column sum) can be split between threads.
  TileKernelRowsPassOptions tileOptions;
  tileOptions.independentRoots = true;
  pm.addNestedPass<func::FuncOp>(createTileKernelRowsPass(tileOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Buffers: results become the caller's buffers (no copy when the result
  // is computed in place), temporaries are freed before returning.
  buildKernelBufferizePasses(pm);
  pm.addPass(createAnnotateKernelArgsPass());
  pm.addPass(createCanonicalizerPass());
  // Row loops run sequentially within a call (a thread's share of the rows),
  // so a row's temporaries are allocated once per call, before the loop.
  pm.addNestedPass<func::FuncOp>(createLowerKernelRowLoopsPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
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
  pm.addPass(createPassDynamicSizesPass());
  // Loops and scalar math; LLVM vectorizes the innermost loops.
  pm.addNestedPass<func::FuncOp>(createLowerStridedCopiesPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addNestedPass<func::FuncOp>(createExpandKernelMathPass());
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
