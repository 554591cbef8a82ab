//===- CudaTarget.cpp - The CUDA target -----------------------------------===//
//
// What the GPU runs and how: linears and matmuls are cuBLASLt steps,
// attention and gathers the runtime's own kernels (the same step operands
// and attributes as the CPU's, so one plan format serves both), reshapes
// alias, attention operands that are slices are read in place, and every
// other op goes to a kernel generated through MLIR (KernelCodegen.h). The
// finished plan moves onto device 1 (DevicePlacement.h).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/CUDA/CudaTarget.h"
#include "lmopt/Target/CUDA/KernelCodegen.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Target/Common/AttentionPlan.h"
#include "lmopt/Target/Common/DevicePlacement.h"
#include "lmopt/Target/Common/LibrarySteps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cuda;
namespace rt = ::lmopt::runtime;

/// The prefix of the `requires` line naming the compute capability the
/// kernels were compiled for (the runtime's CUDA device checks it).
static constexpr llvm::StringLiteral kCudaSmPrefix = "cuda-sm ";

static CudaCodegenOptions getCodegenOptions(const TargetOptions &options) {
  CudaCodegenOptions codegen;
  codegen.smVersion = options.cudaSmVersion;
  codegen.optLevel = std::min(options.optLevel + 1, 3u);
  return codegen;
}

//===----------------------------------------------------------------------===//
// Op roles
//===----------------------------------------------------------------------===//

static Type elementTypeOf(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getElementType();
}

/// f32, f16 or bf16: what cuBLASLt's steps and the attention kernel take.
static bool isGemmFloat(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

/// Whether `values` (null ones skipped) all have one element type that
/// isGemmFloat accepts: the GPU's library steps take no mixed types.
static bool shareGemmFloat(ArrayRef<Value> values) {
  Type common;
  for (Value value : values) {
    if (!value)
      continue;
    Type type = elementTypeOf(value);
    if (!isGemmFloat(type) || (common && type != common))
      return false;
    common = type;
  }
  return true;
}

static FailureOr<OpRole> classifyForCuda(Operation *op, bool symbolic) {
  auto unsupported = [&](const Twine &why) {
    return reportNoLowering(op, "CUDA", why);
  };
  if (std::string why =
          describeUnplannableType(op, symbolic, /*operands=*/true);
      !why.empty())
    return unsupported(why);
  if (isa<ReshapeOp, SqueezeOp, UnsqueezeOp, quant::StorageCastOp>(op))
    return OpRole::Alias;
  if (isAttentionViewOp(op))
    return OpRole::View;
  if (auto linear = dyn_cast<LinearOp>(op)) {
    if (linear.getTransposeInput())
      return unsupported("a linear that reads its input transposed "
                         "(transpose_input) runs on the CPU only so far");
    if (linear.getInputQuantization() != InputQuantization::none ||
        !shareGemmFloat({linear.getInput(), linear.getWeight(),
                         linear.getBias(), linear.getResidual(),
                         linear.getOutput()}))
      return unsupported("quantized and mixed-precision linears run on the "
                         "CPU only so far; the GPU takes an input, weight, "
                         "bias, residual and result of one type, f32, f16 "
                         "or bf16 (--precision=fp16 makes them f16)");
    return OpRole::LibraryStep;
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    if (!shareGemmFloat({attention.getQuery(), attention.getKey(),
                         attention.getValue(), attention.getOutput()}))
      return unsupported("the GPU's attention takes a query, key, value and "
                         "result of one type, f32, f16 or bf16");
    if (attention.getKvHeads() != attention.getNumHeads())
      return unsupported("grouped-query attention (" +
                         std::to_string(attention.getNumHeads()) +
                         " query heads, " +
                         std::to_string(attention.getKvHeads()) +
                         " key/value heads) runs on the CPU only so far");
    if (attention.getBias())
      return unsupported("attention with a score bias (relative-position "
                         "bias, as in T5 and MPNet) runs on the CPU only so "
                         "far");
    if (Value mask = attention.getMask(); mask &&
                                          !elementTypeOf(mask).isF32() &&
                                          !elementTypeOf(mask).isInteger(1)) {
      std::string type;
      llvm::raw_string_ostream(type) << elementTypeOf(mask);
      return unsupported("the GPU's attention takes an f32 (additive) or i1 "
                         "mask, got " +
                         type);
    }
    return OpRole::LibraryStep;
  }
  if (isa<AttentionGradOp>(op))
    return unsupported("the fused attention backward runs on the CPU only "
                       "so far; training on the GPU needs a CUDA kernel "
                       "for it");
  if (auto gather = dyn_cast<GatherOp>(op)) {
    if (llvm::isa<quant::QuantizedType>(elementTypeOf(gather.getData())))
      return unsupported("gathers from quantized tables run on the CPU only "
                         "so far");
    return OpRole::LibraryStep;
  }
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    if (!shareGemmFloat({matmul.getLhs(), matmul.getRhs(), matmul.getResult()}))
      return unsupported("the GPU's matmuls take f32, f16 or bf16 operands "
                         "of one type");
    return OpRole::LibraryStep;
  }
  return classifyAsKernel(op, "CUDA");
}

//===----------------------------------------------------------------------===//
// CudaTargetBackend
//===----------------------------------------------------------------------===//

namespace {
class CudaTargetBackend : public TargetBackend {
public:
  StringRef getName() const override { return "cuda"; }
  StringRef getDescription() const override {
    return "NVIDIA GPUs: cuBLASLt matrix products, fused attention, kernels "
           "MLIR compiles for --cuda-arch";
  }
  StringRef getDeviceName() const override { return "cuda"; }

  FailureOr<OpRole> classify(Operation *op, bool symbolic) const override {
    return classifyForCuda(op, symbolic);
  }

  llvm::Error checkPrecision(const TargetOptions &) const override {
    return llvm::Error::success(); // fp32, fp16 and bf16
  }

  LogicalResult emitStep(Operation *op, PlanEmitter &emitter) const override {
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](LinearOp linear) { return emitLinearStep(linear, emitter); })
        .Case([&](AttentionOp attention) {
          return emitAttentionStep(attention, emitter);
        })
        .Case([&](GatherOp gather) {
          return success(succeeded(emitGatherStep(gather, emitter)));
        })
        .Case([&](MatMulOp matmul) { return emitMatMulStep(matmul, emitter); })
        .Default([](Operation *) -> LogicalResult {
          llvm_unreachable("the GPU classified no other op a library step");
        });
  }

  void rewritePlan(TargetPlan &plan, const TargetOptions &) const override {
    unsigned copies = placeOnDevice(plan, /*device=*/1);
    plan.rewrites.push_back(
        {"host_device_copies",
         "copies between the host's inputs and outputs and the GPU", copies});
  }

  void buildKernelPipeline(OpPassManager &,
                           const TargetOptions &) const override {
    // compileCudaKernels runs its pipeline itself (KernelCodegen.h).
  }

  FailureOr<std::vector<uint8_t>>
  serializeKernels(ModuleOp kernels,
                   const TargetOptions &options) const override {
    return compileCudaKernels(kernels, getCodegenOptions(options));
  }

  llvm::Expected<std::vector<std::string>>
  getRequirements(const BundlePlan &,
                  const TargetOptions &options) const override {
    // The runtime's own kernels and cuBLASLt run on any GPU the runtime
    // supports; the generated kernels need what they were compiled for.
    return std::vector<std::string>{
        (kCudaSmPrefix + llvm::Twine(options.cudaSmVersion)).str()};
  }

  std::string
  describeRequirements(ArrayRef<std::string> requirements) const override {
    for (StringRef line : requirements)
      if (line.consume_front(kCudaSmPrefix)) {
        unsigned sm = 0;
        if (!line.getAsInteger(10, sm))
          return "needs a GPU of compute capability " +
                 std::to_string(sm / 10) + "." + std::to_string(sm % 10) +
                 " or newer";
      }
    return "";
  }
};
} // namespace

std::unique_ptr<TargetBackend> mlir::lmopt::cuda::createCudaTargetBackend() {
  return std::make_unique<CudaTargetBackend>();
}

void mlir::lmopt::cuda::registerCudaTargetBackend() {
  registerTargetBackend(createCudaTargetBackend());
}
