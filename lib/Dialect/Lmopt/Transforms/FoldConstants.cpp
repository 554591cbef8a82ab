//===- FoldConstants.cpp - compile-time evaluation of constant ops --------===//
//
// Ops that read constants only compute the same values on every run; this
// pass computes them once. DeBERTa projects its (constant, layer-normed)
// relative-position embeddings through every layer's Q and K weights: 512
// rows through a 768x1536 product per layer, more than the model's own 128
// rows at batch 1, all of it the same on every run.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Reference/Evaluator.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <vector>

namespace mlir::lmopt {
#define GEN_PASS_DEF_FOLDCONSTANTSPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;
using reference::Tensor;

static constexpr int64_t kMaxFoldedElements = 16 << 20;
/// A constant this small may be read elsewhere too (exporters share one
/// unit layer-norm scale between layers): keeping it costs nothing.
static constexpr int64_t kSmallConstantBytes = 64 << 10;

static int64_t bytesOf(Type type) {
  auto shaped = llvm::cast<ShapedType>(type);
  return shaped.getNumElements() *
         std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

/// Whether `op` reads only constants and yields static f32 tensors no
/// larger than what it reads, each constant one that dies with the fold
/// (read by `op` only, computed by an earlier fold, or small): a reshape of
/// a weight stays a view of it, and a weight read elsewhere too is not
/// stored twice.
static bool isFoldable(Operation *op,
                       const llvm::SmallPtrSetImpl<Operation *> &folded) {
  if (llvm::isa<ConstantOp>(op) || op->getNumResults() == 0 ||
      op->getNumOperands() == 0 || op->getNumRegions() != 0 ||
      !llvm::isa<LmoptDialect>(op->getDialect()) || !isPure(op))
    return false;
  // A view of a model constant stays a view (the plan names the constant's
  // bytes); a view of a folded value folds with it.
  if (llvm::isa<ReshapeOp, SqueezeOp, UnsqueezeOp, IdentityOp>(op) &&
      !folded.contains(op->getOperand(0).getDefiningOp()))
    return false;
  // Each distinct operand once: a Tile imported as a concat of copies of
  // one constant grows it, however many times it is read.
  int64_t in = 0, out = 0;
  llvm::SmallPtrSet<void *, 4> seen;
  for (Value operand : op->getOperands()) {
    auto type = llvm::dyn_cast<RankedTensorType>(operand.getType());
    auto constant = operand.getDefiningOp<ConstantOp>();
    if (!type || !type.hasStaticShape() || !constant)
      return false;
    if (!folded.contains(constant) && bytesOf(type) > kSmallConstantBytes &&
        llvm::any_of(operand.getUsers(),
                     [&](Operation *user) { return user != op; }))
      return false;
    if (seen.insert(operand.getAsOpaquePointer()).second)
      in += bytesOf(type);
  }
  for (Type result : op->getResultTypes()) {
    auto type = llvm::dyn_cast<RankedTensorType>(result);
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
        type.getNumElements() > kMaxFoldedElements)
      return false;
    out += bytesOf(type);
  }
  return out <= in;
}

namespace {
/// The values of constants, read once: a fold's result is kept as computed
/// for the folds that read it next.
class ConstantValues {
public:
  const Tensor *get(Value constant) {
    auto it = values.find(constant);
    if (it != values.end())
      return &it->second;
    FailureOr<Tensor> tensor = Tensor::fromAttr(
        constant.getDefiningOp<ConstantOp>().getValue(), constant.getLoc());
    if (failed(tensor))
      return nullptr;
    return &values.try_emplace(constant, std::move(*tensor)).first->second;
  }
  void set(Value constant, Tensor value) {
    values.try_emplace(constant, std::move(value));
  }

private:
  DenseMap<Value, Tensor> values;
};
} // namespace

static FailureOr<std::vector<float>> floatsOf(ConstantValues &constants,
                                              Value constant) {
  const Tensor *tensor = constants.get(constant);
  if (!tensor || !tensor->isFloat())
    return failure();
  return std::vector<float>(tensor->getFloats().begin(),
                            tensor->getFloats().end());
}

/// `input x W + bias` in f32 (f32 accumulation, as the runtime's GEMM),
/// for a linear without activation or residual.
static FailureOr<std::vector<float>> computeLinear(ConstantValues &constants,
                                                   LinearOp op) {
  if (op.getActivation() != Activation::none || op.getResidual() ||
      op.getTransposeInput() ||
      !getElementTypeOrSelf(op.getWeight().getType()).isF32() ||
      !getElementTypeOrSelf(op.getInput().getType()).isF32())
    return failure();
  FailureOr<std::vector<float>> input = floatsOf(constants, op.getInput());
  FailureOr<std::vector<float>> weight = floatsOf(constants, op.getWeight());
  if (failed(input) || failed(weight))
    return failure();
  std::vector<float> bias;
  if (op.getBias()) {
    FailureOr<std::vector<float>> b = floatsOf(constants, op.getBias());
    if (failed(b))
      return failure();
    bias = std::move(*b);
  }
  ArrayRef<int64_t> weightShape = shapeOf(op.getWeight());
  int64_t k = weightShape[op.getTransposeWeight() ? 1 : 0];
  int64_t n = weightShape[op.getTransposeWeight() ? 0 : 1];
  int64_t m = int64_t(input->size()) / k;
  // W as [K, N], so the inner loop runs along a row of it and the output.
  std::vector<float> w = std::move(*weight);
  if (op.getTransposeWeight()) {
    std::vector<float> stored = std::move(w);
    w.assign(size_t(k * n), 0.0f);
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c)
        w[size_t(r * n + c)] = stored[size_t(c * k + r)];
  }
  std::vector<float> out(size_t(m * n), 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    float *row = out.data() + i * n;
    if (!bias.empty())
      std::copy(bias.begin(), bias.end(), row);
    for (int64_t r = 0; r < k; ++r) {
      float x = (*input)[size_t(i * k + r)];
      const float *wr = w.data() + r * n;
      for (int64_t c = 0; c < n; ++c)
        row[c] += x * wr[c];
    }
  }
  return out;
}

namespace {

struct FoldConstantsPass
    : lmopt::impl::FoldConstantsPassBase<FoldConstantsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    ConstantValues constants;
    llvm::SmallPtrSet<Operation *, 16> created;
    // In order: a folded op's users see a constant operand next.
    getOperation()->walk([&](Operation *op) {
      if (!isFoldable(op, created))
        return;

      SmallVector<SmallVector<float>, 1> results;
      if (auto linear = llvm::dyn_cast<LinearOp>(op)) {
        FailureOr<std::vector<float>> out = computeLinear(constants, linear);
        if (failed(out))
          return;
        results.emplace_back(out->begin(), out->end());
        ++numLinears;
      } else {
        SmallVector<Tensor> operands;
        for (Value operand : op->getOperands()) {
          const Tensor *tensor = constants.get(operand);
          if (!tensor)
            return;
          operands.push_back(*tensor);
        }
        // The evaluator reports what it refuses at the op; a fold that
        // cannot be made leaves the op to run.
        ScopedDiagnosticHandler quiet(op->getContext(),
                                      [](Diagnostic &) { return success(); });
        FailureOr<SmallVector<Tensor>> values =
            reference::evaluateOp(op, operands);
        if (failed(values))
          return;
        for (Tensor &value : *values) {
          if (!value.isFloat())
            return;
          results.emplace_back(value.getFloats().begin(),
                               value.getFloats().end());
        }
      }
      OpBuilder builder(op);
      std::string name = "folded." + describeNode(op->getLoc());
      for (auto [result, values] : llvm::zip(op->getResults(), results)) {
        auto type = llvm::cast<RankedTensorType>(result.getType());
        ArrayRef<char> bytes(reinterpret_cast<const char *>(values.data()),
                             values.size() * sizeof(float));
        Value constant = buildConstant(builder, op->getLoc(), type, bytes, name,
                                       /*asResource=*/true);
        Tensor value(type.getElementType(), type.getShape());
        std::copy(values.begin(), values.end(), value.getFloats().begin());
        constants.set(constant, std::move(value));
        created.insert(constant.getDefiningOp());
        result.replaceAllUsesWith(constant);
      }
      candidates.push_back(op);
      ++numFolded;
    });
    // The folded ops, then the constants only they (or a later fold) read.
    SetVector<Operation *> constantsRead;
    for (Operation *op : candidates)
      for (Value operand : op->getOperands())
        constantsRead.insert(operand.getDefiningOp());
    for (Operation *op : llvm::reverse(candidates))
      op->erase();
    for (Operation *constant : llvm::reverse(constantsRead))
      if (constant->use_empty())
        constant->erase();
  }
};

} // namespace
