//===- PatternUtils.cpp - matching helpers for fusion patterns ------------===//

#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;

std::optional<double> lmopt::getSplatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || (!dense.isSplat() && dense.getNumElements() != 1))
    return std::nullopt;
  Type elementType = dense.getElementType();
  if (llvm::isa<FloatType>(elementType))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (elementType.isSignlessInteger() && !elementType.isInteger(1))
    return static_cast<double>(
        (*dense.getValues<APInt>().begin()).getSExtValue());
  return std::nullopt;
}

bool lmopt::isSplatNear(Value value, double expected, double tolerance) {
  std::optional<double> actual = getSplatValue(value);
  if (!actual)
    return false;
  double scale = std::max(1.0, std::fabs(expected));
  return std::fabs(*actual - expected) <= tolerance * scale;
}

bool lmopt::isConstant(Value value) {
  return static_cast<bool>(value.getDefiningOp<ConstantOp>());
}

using DimRef = std::pair<Value, int64_t>;

static ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getShape();
}

/// The first dim a Shape op reads, with ONNX's negative start resolved.
static int64_t shapeStart(ShapeOp op) {
  auto start = static_cast<int64_t>(op.getStart());
  int64_t rank = shapeOf(op.getInput()).size();
  return std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
}

/// The value of a one-element integer constant.
static std::optional<double> getScalarIndex(Value value) {
  auto type = llvm::dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() != 1)
    return std::nullopt;
  return lmopt::getSplatValue(value);
}

/// Element `index` of a 1-D i64 shape tensor, followed through Concat,
/// Unsqueeze, Cast and Gather of a Shape.
std::optional<lmopt::ShapeElement> lmopt::getShapeElement(Value shape,
                                                          int64_t index) {
  for (int step = 0; step < 16; ++step) {
    Operation *op = shape.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto constant = llvm::dyn_cast<ConstantOp>(op)) {
      auto dense = llvm::dyn_cast<DenseIntElementsAttr>(constant.getValue());
      if (!dense || index >= dense.getNumElements())
        return std::nullopt;
      return ShapeElement{
          (*std::next(dense.getValues<APInt>().begin(), index)).getSExtValue(),
          {},
          0};
    }
    if (auto concat = llvm::dyn_cast<ConcatOp>(op)) {
      Value next;
      for (Value input : concat.getInputs()) {
        ArrayRef<int64_t> inputShape = shapeOf(input);
        int64_t size = inputShape.empty() ? 1 : inputShape[0];
        if (inputShape.size() > 1 || ShapedType::isDynamic(size))
          return std::nullopt;
        if (index < size) {
          next = input;
          break;
        }
        index -= size;
      }
      if (!next)
        return std::nullopt;
      shape = next;
      continue;
    }
    if (auto unsqueeze = llvm::dyn_cast<UnsqueezeOp>(op)) {
      if (!shapeOf(unsqueeze.getInput()).empty() || index != 0)
        return std::nullopt;
      shape = unsqueeze.getInput();
      continue;
    }
    if (auto cast = llvm::dyn_cast<CastOp>(op)) {
      shape = cast.getInput();
      continue;
    }
    if (auto shapeOp = llvm::dyn_cast<ShapeOp>(op))
      return ShapeElement{std::nullopt, shapeOp.getInput(),
                          shapeStart(shapeOp) + index};
    if (auto gather = llvm::dyn_cast<GatherOp>(op)) {
      auto source = gather.getData().getDefiningOp<ShapeOp>();
      std::optional<double> at = getScalarIndex(gather.getIndices());
      if (!source || !at || gather.getAxis() != 0 || *at < 0)
        return std::nullopt;
      return ShapeElement{std::nullopt, source.getInput(),
                          shapeStart(source) + static_cast<int64_t>(*at)};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// The (value, dim) pairs whose size equals dim `dim` of `value`, found by
/// walking producers that carry that dim through. Where two operands of an
/// elementwise op both have the dim and neither is statically 1, both are
/// followed: a dynamic dim broadcast from 1 against a larger one is the one
/// case this does not rule out, and exporters never produce it in attention.
static SmallVector<DimRef> traceDim(Value value, int64_t dim) {
  SmallVector<DimRef> seen = {{value, dim}};
  SmallVector<DimRef> worklist = {{value, dim}};
  auto push = [&](Value v, int64_t d) {
    if (seen.size() < 64 && !llvm::is_contained(seen, DimRef{v, d})) {
      seen.push_back({v, d});
      worklist.push_back({v, d});
    }
  };
  while (!worklist.empty()) {
    auto [current, d] = worklist.pop_back_val();
    Operation *op = current.getDefiningOp();
    if (!op)
      continue;
    int64_t rank = shapeOf(current).size();
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](TransposeOp t) { push(t.getInput(), t.getPerm()[d]); })
        .Case<AddOp, SubOp, MulOp, DivOp>([&](auto binary) {
          for (Value operand : {binary.getLhs(), binary.getRhs()}) {
            ArrayRef<int64_t> shape = shapeOf(operand);
            if (shape.size() == static_cast<size_t>(rank) && shape[d] != 1)
              push(operand, d);
          }
        })
        .Case([&](MatMulOp m) {
          if (shapeOf(m.getLhs()).size() == static_cast<size_t>(rank) &&
              d < rank - 1 &&
              (d == rank - 2 || shapeOf(m.getRhs()).size() <= 2))
            push(m.getLhs(), d);
        })
        .Case([&](LinearOp l) {
          if (d < rank - 1)
            push(l.getInput(), d);
        })
        .Case([&](GatherOp g) {
          int64_t indicesRank = shapeOf(g.getIndices()).size();
          if (g.getAxis() == 0 && d < indicesRank)
            push(g.getIndices(), d);
        })
        .Case([&](SplitOp s) {
          if (normalizeAxis(s.getAxis(), rank) != d)
            push(s.getInput(), d);
        })
        .Case<LayerNormOp, SkipLayerNormOp, RmsNormOp, SoftmaxOp, CastOp,
              IdentityOp, GeluOp, DropoutOp>(
            [&](Operation *same) { push(same->getOperand(0), d); })
        .Case([&](ReshapeOp r) {
          std::optional<ShapeElement> element =
              getShapeElement(r.getShape(), d);
          if (!element)
            return;
          if (element->constant == 0 && !r.getAllowzero())
            push(r.getInput(), d);
          else if (element->source && element->dim >= 0 &&
                   element->dim <
                       static_cast<int64_t>(shapeOf(element->source).size()))
            push(element->source, element->dim);
        });
  }
  return seen;
}

/// True when dim `ad` of `a` provably equals dim `bd` of `b`.
bool lmopt::dimsEqual(Value a, int64_t ad, Value b, int64_t bd) {
  int64_t sa = shapeOf(a)[ad], sb = shapeOf(b)[bd];
  if (!ShapedType::isDynamic(sa) && sa == sb)
    return true;
  SmallVector<DimRef> ta = traceDim(a, ad), tb = traceDim(b, bd);
  return llvm::any_of(ta, [&](DimRef r) { return llvm::is_contained(tb, r); });
}

/// True when output dim `i` of `reshape` provably copies dim `i` of its
/// input, or of one of `equivalents` (values known to share that dim).
bool lmopt::reshapeKeepsDim(ReshapeOp reshape, int64_t i,
                            ArrayRef<Value> equivalents) {
  Value input = reshape.getInput();
  int64_t in = shapeOf(input)[i], out = shapeOf(reshape)[i];
  if (!ShapedType::isDynamic(in) && in == out)
    return true;
  std::optional<ShapeElement> element = getShapeElement(reshape.getShape(), i);
  if (!element)
    return false;
  if (element->constant)
    return (*element->constant == 0 && !reshape.getAllowzero()) ||
           (!ShapedType::isDynamic(in) && *element->constant == in);
  if (element->dim < 0 ||
      element->dim >= (int64_t)shapeOf(element->source).size())
    return false;
  if (dimsEqual(element->source, element->dim, input, i))
    return true;
  return llvm::any_of(equivalents, [&](Value v) {
    return dimsEqual(element->source, element->dim, v, i);
  });
}
