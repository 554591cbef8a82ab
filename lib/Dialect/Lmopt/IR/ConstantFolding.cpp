//===- ConstantFolding.cpp - elementwise ops on constants -----------------===//
//
// Elementwise ops whose operands are all constants fold to a constant, so
// that values exports compute at run time from constants (an attention scale
// of 1/sqrt(head_dim), a mask fill value) are constants by the time the
// fusion patterns look at them. Values are computed in double and rounded to
// the result's element type, which gives the correctly rounded result for
// + - * / and sqrt. Results over kMaxFoldElements elements are left alone so
// folding never materializes a second copy of a weight.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::lmopt;

static constexpr int64_t kMaxFoldElements = 1 << 16;

namespace {
/// One constant operand, readable as doubles at any index of the result.
struct ConstantOperand {
  DenseElementsAttr attr;
  SmallVector<int64_t> shape;
  SmallVector<double> values; // empty for a splat
  double splat = 0.0;

  double at(ArrayRef<int64_t> resultIndex) const {
    if (values.empty())
      return splat;
    // Broadcast: align right, dims of 1 repeat their one entry.
    int64_t offset = 0, stride = 1;
    size_t lead = resultIndex.size() - shape.size();
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      int64_t i = shape[d] == 1 ? 0 : resultIndex[lead + d];
      offset += i * stride;
      stride *= shape[d];
    }
    return values[offset];
  }
};
} // namespace

static std::optional<double> toDouble(Attribute element) {
  if (auto f = llvm::dyn_cast<FloatAttr>(element))
    return f.getValueAsDouble();
  if (auto i = llvm::dyn_cast<IntegerAttr>(element))
    return static_cast<double>(i.getValue().getSExtValue());
  return std::nullopt;
}

static std::optional<ConstantOperand> readOperand(Attribute attr) {
  auto dense = llvm::dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense || !dense.getType().hasStaticShape())
    return std::nullopt;
  Type elementType = dense.getElementType();
  if (!llvm::isa<FloatType>(elementType) &&
      !(elementType.isSignlessInteger() && !elementType.isInteger(1)))
    return std::nullopt;
  ConstantOperand operand{dense, SmallVector<int64_t>(dense.getType().getShape()),
                          {}, 0.0};
  if (dense.isSplat()) {
    std::optional<double> v = toDouble(dense.getSplatValue<Attribute>());
    if (!v)
      return std::nullopt;
    operand.splat = *v;
    return operand;
  }
  if (dense.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  for (Attribute element : dense.getValues<Attribute>()) {
    std::optional<double> v = toDouble(element);
    if (!v)
      return std::nullopt;
    operand.values.push_back(*v);
  }
  return operand;
}

/// Builds the result attribute, rounding each value to the element type.
static Attribute buildResult(RankedTensorType type, ArrayRef<double> values) {
  Type elementType = type.getElementType();
  SmallVector<Attribute> elements;
  elements.reserve(values.size());
  for (double v : values) {
    if (auto floatType = llvm::dyn_cast<FloatType>(elementType)) {
      elements.push_back(FloatAttr::get(floatType, v));
    } else {
      if (!std::isfinite(v))
        return {};
      elements.push_back(
          IntegerAttr::get(elementType, static_cast<int64_t>(v)));
    }
  }
  return DenseElementsAttr::get(type, elements);
}

/// Folds an elementwise op with constant operands into a constant of the
/// result type; `fn` maps the operands' values at one index to the result.
static Attribute foldElementwise(ArrayRef<Attribute> operands, Type resultType,
                                 llvm::function_ref<double(ArrayRef<double>)> fn) {
  auto type = llvm::dyn_cast<RankedTensorType>(resultType);
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<ConstantOperand> inputs;
  for (Attribute attr : operands) {
    std::optional<ConstantOperand> operand = readOperand(attr);
    if (!operand)
      return {};
    inputs.push_back(std::move(*operand));
  }
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> index(shape.size(), 0);
  SmallVector<double> values, args(inputs.size());
  values.reserve(type.getNumElements());
  for (int64_t n = 0; n < type.getNumElements(); ++n) {
    for (auto [i, input] : llvm::enumerate(inputs))
      args[i] = input.at(index);
    values.push_back(fn(args));
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return buildResult(type, values);
}

static bool isFloatResult(Type type) {
  return llvm::isa<FloatType>(llvm::cast<ShapedType>(type).getElementType());
}

#define LMOPT_FOLD_UNARY(OP, EXPR)                                             \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldElementwise(adaptor.getOperands(), getType(),                   \
                           [](ArrayRef<double> a) { return (EXPR); });         \
  }

LMOPT_FOLD_UNARY(NegOp, -a[0])
LMOPT_FOLD_UNARY(AbsOp, std::fabs(a[0]))
LMOPT_FOLD_UNARY(ReluOp, a[0] > 0.0 ? a[0] : 0.0)
LMOPT_FOLD_UNARY(SignOp, a[0] > 0.0 ? 1.0 : a[0] < 0.0 ? -1.0 : a[0])
LMOPT_FOLD_UNARY(ExpOp, std::exp(a[0]))
LMOPT_FOLD_UNARY(LogOp, std::log(a[0]))
LMOPT_FOLD_UNARY(SqrtOp, std::sqrt(a[0]))
LMOPT_FOLD_UNARY(ReciprocalOp, 1.0 / a[0])
LMOPT_FOLD_UNARY(TanhOp, std::tanh(a[0]))
LMOPT_FOLD_UNARY(ErfOp, std::erf(a[0]))
LMOPT_FOLD_UNARY(SigmoidOp, 1.0 / (1.0 + std::exp(-a[0])))
LMOPT_FOLD_UNARY(CosOp, std::cos(a[0]))
LMOPT_FOLD_UNARY(SinOp, std::sin(a[0]))
LMOPT_FOLD_UNARY(CeilOp, std::ceil(a[0]))
LMOPT_FOLD_UNARY(FloorOp, std::floor(a[0]))
LMOPT_FOLD_UNARY(RoundOp, std::nearbyint(a[0]))
LMOPT_FOLD_UNARY(AddOp, a[0] + a[1])
LMOPT_FOLD_UNARY(SubOp, a[0] - a[1])
LMOPT_FOLD_UNARY(MulOp, a[0] * a[1])
LMOPT_FOLD_UNARY(MaxOp, std::max(a[0], a[1]))
LMOPT_FOLD_UNARY(MinOp, std::min(a[0], a[1]))

#undef LMOPT_FOLD_UNARY

// Integer division and power have rounding rules of their own; only the
// float forms fold.
OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (!isFloatResult(getType()))
    return {};
  return foldElementwise(adaptor.getOperands(), getType(),
                         [](ArrayRef<double> a) { return a[0] / a[1]; });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (!isFloatResult(getType()))
    return {};
  return foldElementwise(adaptor.getOperands(), getType(),
                         [](ArrayRef<double> a) { return std::pow(a[0], a[1]); });
}

// Cast of a constant: buildResult rounds to nearest even for floats and
// truncates toward zero for integers, as ONNX Cast does. Casts to and from
// bool are left to the importer.
OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  if (getType().getElementType().isInteger(1))
    return {};
  return foldElementwise(adaptor.getOperands(), getType(),
                         [](ArrayRef<double> a) { return a[0]; });
}
