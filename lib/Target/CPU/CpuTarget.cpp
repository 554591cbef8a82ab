//===- CpuTarget.cpp - The CPU target -------------------------------------===//
//
// What the CPU runs and how: the op roles (which ops are library steps, which
// are read in place, which go to generated kernels), the library steps'
// operands and attributes in the layouts the runtime's CPU executors read
// (AttentionPlan, GatherPlan, QuantPlan), the row-quantization fusion, and
// kernel code generation to a shared object (KernelCodegen).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CPU/CpuTarget.h"
#include "GatherPlan.h" // and QuantPlan.h
#include "lmopt/Target/CPU/KernelCodegen.h"
#include "lmopt/Target/CPU/KernelPipeline.h"
#include "lmopt/Target/Common/AttentionPlan.h"
#include "lmopt/Target/Common/LibrarySteps.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cpu;
namespace rt = ::lmopt::runtime;

/// The prefix of the `requires` lines the CPU's kernels add.
static constexpr llvm::StringLiteral kCpuFeaturePrefix = "cpu-feature ";

static KernelCodegenOptions getCodegenOptions(const TargetOptions &options) {
  KernelCodegenOptions codegen;
  codegen.optLevel = options.optLevel;
  codegen.cpu = options.cpu;
  return codegen;
}

//===----------------------------------------------------------------------===//
// Op roles
//===----------------------------------------------------------------------===//

static bool isF32(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getElementType().isF32();
}

/// The role of an op that is not a constant, or a diagnostic naming why
/// the CPU cannot run it.
static FailureOr<OpRole> classifyForCpu(Operation *op, bool symbolic) {
  auto unsupported = [&](const Twine &why) {
    return reportNoLowering(op, "CPU", why);
  };
  // A storage cast of a constant may read sub-byte integers (i4 weights),
  // which are stored under the cast's quantized type.
  bool castsConstant = isa<quant::StorageCastOp>(op) &&
                       getConstantValue(op->getOperand(0).getDefiningOp());
  if (std::string why =
          describeUnplannableType(op, symbolic, /*operands=*/!castsConstant);
      !why.empty())
    return unsupported(why);
  // A quantized linear's weight is stored in the step's own layout
  // (QuantPlan.cpp), so the cast feeding it stores nothing.
  if (castsConstant && onlyFeedsQuantizedLinears(op))
    return OpRole::Constant;
  // A storage cast only renames the integers' type: same bytes.
  if (isa<ReshapeOp, SqueezeOp, UnsqueezeOp, quant::StorageCastOp>(op))
    return OpRole::Alias;
  if (isAttentionViewOp(op))
    return OpRole::View;
  if (auto linear = dyn_cast<LinearOp>(op)) {
    if (!isQuantizedLinear(linear) && !isBf16ProductLinear(linear) &&
        (!isF32(linear.getInput()) || !isF32(linear.getWeight())))
      return unsupported("only f32 linears and bf16 products into f32 run "
                         "on the CPU so far");
    return OpRole::LibraryStep;
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    if (!isF32(attention.getQuery()) || !isF32(attention.getKey()) ||
        !isF32(attention.getValue()))
      return unsupported("only f32 attention runs on the CPU so far");
    // The CPU step reads one head size D for query, key and value.
    auto query = llvm::cast<RankedTensorType>(attention.getQuery().getType());
    auto output = llvm::cast<RankedTensorType>(attention.getType());
    if (query.getShape().back() != output.getShape().back())
      return unsupported("the CPU attention step needs the value head size "
                         "to equal the query's (ONNX Attention with V's "
                         "head size of its own)");
    return OpRole::LibraryStep;
  }
  if (auto grad = dyn_cast<AttentionGradOp>(op)) {
    if (!isF32(grad.getQuery()))
      return unsupported("only f32 attention_grad runs on the CPU so far");
    if (ShapedType::isDynamic(
            llvm::cast<RankedTensorType>(grad.getQuery().getType())
                .getShape()
                .back()))
      return unsupported("the query's last dim (heads x head size) must be "
                         "static");
    return OpRole::LibraryStep;
  }
  // A gather_elements step checks its indices at run time, which a kernel
  // cannot: an index out of range fails the run instead of being clamped.
  if (isa<GatherOp, GatherElementsOp>(op))
    return OpRole::LibraryStep;
  // So does a scatter_nd step, before it writes.
  if (auto scatter = dyn_cast<ScatterNDOp>(op)) {
    Type element =
        llvm::cast<ShapedType>(scatter.getData().getType()).getElementType();
    if (scatter.getReduction() != ScatterReduction::none && !element.isF32() &&
        !element.isF64() && !element.isInteger(32) && !element.isInteger(64))
      return unsupported("the CPU's scatter_nd step reduces f32, f64, i32 "
                         "and i64 data");
    return OpRole::LibraryStep;
  }
  if (auto gatherGrad = dyn_cast<GatherGradOp>(op)) {
    if (!isF32(gatherGrad.getGrad()))
      return unsupported("only f32 gather_grad runs on the CPU so far");
    return OpRole::LibraryStep;
  }
  if (isa<AdamWOp>(op))
    return OpRole::LibraryStep;
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    if (!isF32(matmul.getLhs()) || !isF32(matmul.getRhs()))
      return unsupported("only f32 matmuls run on the CPU so far");
    return OpRole::LibraryStep;
  }
  // Everything else in lmopt and arith (the quantization ops and integer
  // products included) is left to the kernel generator.
  return classifyAsKernel(op, "CPU");
}

//===----------------------------------------------------------------------===//
// Library steps
//===----------------------------------------------------------------------===//

/// The step and its repacked constants come from QuantPlan.cpp.
static LogicalResult emitQuantLinear(LinearOp op, PlanEmitter &emitter) {
  std::string name = describeNode(op.getLoc());
  FailureOr<QuantLinearLowering> lowering = lowerQuantizedLinear(op, name);
  FailureOr<uint32_t> input = emitter.getTensor(op.getInput());
  if (failed(lowering) || failed(input))
    return failure();
  SmallVector<uint32_t> operands = {*input};
  for (const QuantConstant &constant : lowering->constants) {
    FailureOr<uint32_t> id =
        emitter.addConstant(constant.name, constant.value, op.getLoc());
    if (failed(id))
      return failure();
    operands.push_back(*id);
  }
  for (Value value : {op.getBias(), op.getResidual()}) {
    if (!value)
      continue;
    FailureOr<uint32_t> id = emitter.getTensor(value);
    if (failed(id))
      return failure();
    operands.push_back(*id);
  }
  uint32_t output = emitter.addResult(op.getOutput(), name);
  rt::PlanStep &step = emitter.addStep(rt::StepKind::QuantLinear, name);
  step.operands.assign(operands.begin(), operands.end());
  step.results = {output};
  step.attrs = std::move(lowering->attrs);
  return success();
}

static LogicalResult emitGather(GatherOp op, PlanEmitter &emitter) {
  FailureOr<rt::PlanStep *> added = emitGatherStep(op, emitter);
  if (failed(added))
    return failure();
  rt::PlanStep &step = **added;
  std::string name = describeNode(op.getLoc());
  // A quantized table's row scales are a third operand (GatherPlan.cpp).
  if (!isQuantizedGather(op))
    return success();
  FailureOr<QuantConstant> scales = lowerQuantizedGather(op, name);
  FailureOr<uint32_t> id =
      failed(scales)
          ? FailureOr<uint32_t>(failure())
          : emitter.addConstant(scales->name, scales->value, op.getLoc());
  if (failed(id))
    return failure();
  step.operands.push_back(*id);
  PlanEmitter::addIntAttr(step, "row_scales", 1);
  return success();
}

//===----------------------------------------------------------------------===//
// CpuTargetBackend
//===----------------------------------------------------------------------===//

/// One adamw step per parameter, writing the parameter and its moments in
/// place (the states optimizer_step reads and returns).
static LogicalResult emitAdamWStep(AdamWOp op, PlanEmitter &emitter) {
  FailureOr<std::vector<uint32_t>> operands =
      emitter.getTensors(op->getOperands());
  if (failed(operands))
    return failure();
  std::string name = describeNode(op.getLoc());
  std::vector<uint32_t> results;
  std::string inPlace;
  // Results 0, 1, 2 replace operands 0 (param), 2 (m), 3 (v).
  const unsigned replacedOperand[] = {0, 2, 3};
  for (unsigned r = 0; r < 3; ++r) {
    bool written = false;
    results.push_back(emitter.addInPlaceStateResult(
        op->getResult(r), op->getOperand(replacedOperand[r]), name,
        &written));
    if (written)
      inPlace += (inPlace.empty() ? "" : ",") + std::to_string(r) + ":" +
                 std::to_string(replacedOperand[r]);
  }
  rt::PlanStep &step = emitter.addStep(rt::StepKind::AdamW, name);
  step.operands = std::move(*operands);
  step.results = std::move(results);
  if (!inPlace.empty())
    PlanEmitter::addStringAttr(step, "in_place", inPlace);
  PlanEmitter::addFloatAttr(step, "beta1", op.getBeta1().convertToDouble());
  PlanEmitter::addFloatAttr(step, "beta2", op.getBeta2().convertToDouble());
  PlanEmitter::addFloatAttr(step, "epsilon", op.getEpsilon().convertToDouble());
  PlanEmitter::addFloatAttr(step, "weight_decay",
                            op.getWeightDecay().convertToDouble());
  return success();
}

namespace {
class CpuTargetBackend : public TargetBackend {
public:
  StringRef getName() const override { return "cpu"; }
  StringRef getDescription() const override {
    return "library steps on oneDNN, kernels LLVM compiles for --cpu";
  }
  StringRef getDeviceName() const override { return "cpu"; }

  FailureOr<OpRole> classify(Operation *op, bool symbolic) const override {
    return classifyForCpu(op, symbolic);
  }

  llvm::Error checkPrecision(const TargetOptions &options) const override {
    if (options.precision == Precision::FP32)
      return llvm::Error::success();
    // The CPU's half-precision form is the weight-only linear of
    // lmopt-quantize (f32 bias, result and arithmetic around it).
    StringRef name = stringifyPrecision(options.precision);
    return llvm::createStringError(
        "--precision=" + name +
        " is for --target=cuda; on the CPU use --quantize=" + name +
        " (half-precision linear weights, f32 everywhere else)");
  }

  LogicalResult emitStep(Operation *op, PlanEmitter &emitter) const override {
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](LinearOp linear) {
          return isQuantizedLinear(linear) ? emitQuantLinear(linear, emitter)
                                           : emitLinearStep(linear, emitter);
        })
        .Case([&](AttentionOp attention) {
          return emitAttentionStep(attention, emitter);
        })
        .Case([&](AttentionGradOp grad) {
          return emitAttentionGradStep(grad, emitter);
        })
        .Case([&](GatherOp gather) { return emitGather(gather, emitter); })
        .Case([&](GatherElementsOp gather) {
          return emitGatherElementsStep(gather, emitter);
        })
        .Case([&](ScatterNDOp scatter) {
          return emitScatterNDStep(scatter, emitter);
        })
        .Case([&](MatMulOp matmul) { return emitMatMulStep(matmul, emitter); })
        .Case([&](AdamWOp op) { return emitAdamWStep(op, emitter); })
        .Case([&](GatherGradOp op) {
          return failure(failed(emitter.addLibraryStep(
              op, op->getOperands(), op.getOutput(),
              rt::StepKind::GatherGrad)));
        })
        .Default([](Operation *) -> LogicalResult {
          llvm_unreachable("the CPU classified no other op a library step");
        });
  }

  void rewritePlan(TargetPlan &plan,
                   const TargetOptions &options) const override {
    unsigned fused = options.fuseRowQuantization
                         ? fuseRowQuantization(plan.plan, plan.aliasRoot)
                         : 0;
    plan.rewrites.push_back(
        {"fused_row_quantizations",
         "int8 linears writing their output quantized for the next", fused});
    plan.rewrites.push_back(
        {"fused_bf16_outputs",
         "bf16 linears and attentions writing their output in bf16 for the "
         "next",
         options.fuseBf16Outputs ? fuseBf16Outputs(plan) : 0});
    plan.rewrites.push_back(
        {"fused_bf16_attention_inputs",
         "attentions reading their query, key and value in bf16 from a bf16 "
         "or int8 linear",
         options.fuseBf16Outputs
             ? fuseBf16AttentionInputs(plan.plan, plan.aliasRoot)
             : 0});
    plan.rewrites.push_back(
        {"fused_static_outputs",
         "int8 linears and attentions writing their output statically "
         "quantized for the next",
         options.fuseStaticOutputs ? fuseStaticOutputs(plan) : 0});
  }

  void buildKernelPipeline(OpPassManager &pm,
                           const TargetOptions &) const override {
    buildKernelBufferizationPipeline(pm);
    buildKernelToLLVMPipeline(pm);
  }

  FailureOr<std::vector<uint8_t>>
  serializeKernels(ModuleOp kernels,
                   const TargetOptions &options) const override {
    return compileKernels(kernels, getCodegenOptions(options));
  }

  llvm::Expected<std::vector<std::string>>
  getRequirements(const BundlePlan &plan,
                  const TargetOptions &options) const override {
    std::vector<std::string> lines;
    if (plan.numKernels == 0)
      return lines; // only the generated kernels are compiled for `cpu`
    llvm::Expected<std::vector<std::string>> features =
        getKernelCpuFeatures(getCodegenOptions(options));
    if (!features)
      return features.takeError();
    for (const std::string &feature : *features)
      lines.push_back((kCpuFeaturePrefix + feature).str());
    return lines;
  }

  std::string
  describeRequirements(ArrayRef<std::string> requirements) const override {
    std::vector<StringRef> features;
    for (StringRef line : requirements)
      if (line.consume_front(kCpuFeaturePrefix))
        features.push_back(line);
    if (features.empty())
      return "";
    return "kernels need CPU features: " + llvm::join(features, ", ");
  }
};
} // namespace

std::unique_ptr<TargetBackend> mlir::lmopt::cpu::createCpuTargetBackend() {
  return std::make_unique<CpuTargetBackend>();
}

void mlir::lmopt::cpu::registerCpuTargetBackend() {
  registerTargetBackend(createCpuTargetBackend());
}
