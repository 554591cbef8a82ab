//===- GradBuilder.cpp - building backward ops with their types -----------===//

#include "GradBuilder.h"

#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cassert>

using namespace mlir;
using namespace mlir::lmopt;

int64_t mlir::lmopt::rankOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getRank();
}

Type mlir::lmopt::elementTypeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getElementType();
}

RankedTensorType GradBuilder::withShape(Value like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, elementTypeOf(like));
}

Value GradBuilder::scalar(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType))
    element = b.getFloatAttr(floatType, value);
  else
    element = b.getIntegerAttr(elementType, int64_t(value));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, element));
}

Value GradBuilder::scalarLike(double value, Value like) {
  return scalar(value, elementTypeOf(like));
}

Value GradBuilder::ints(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({int64_t(values.size())}, b.getI64Type());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
}

Value GradBuilder::broadcastBinary(StringRef name, Value lhs, Value rhs,
                                   Type resultElement) {
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(shapeOf(lhs), shapeOf(rhs));
  assert(shape && "operands of a gradient rule do not broadcast");
  auto type = RankedTensorType::get(
      *shape, resultElement ? resultElement : elementTypeOf(lhs));
  if (name == "add")
    return AddOp::create(b, loc, type, lhs, rhs);
  if (name == "sub")
    return SubOp::create(b, loc, type, lhs, rhs);
  if (name == "mul")
    return MulOp::create(b, loc, type, lhs, rhs);
  if (name == "div")
    return DivOp::create(b, loc, type, lhs, rhs);
  if (name == "greater")
    return GreaterOp::create(b, loc, type, lhs, rhs);
  assert(name == "equal");
  return EqualOp::create(b, loc, type, lhs, rhs);
}

Value GradBuilder::add(Value lhs, Value rhs) {
  return broadcastBinary("add", lhs, rhs);
}
Value GradBuilder::sub(Value lhs, Value rhs) {
  return broadcastBinary("sub", lhs, rhs);
}
Value GradBuilder::mul(Value lhs, Value rhs) {
  return broadcastBinary("mul", lhs, rhs);
}
Value GradBuilder::div(Value lhs, Value rhs) {
  return broadcastBinary("div", lhs, rhs);
}
Value GradBuilder::greater(Value lhs, Value rhs) {
  return broadcastBinary("greater", lhs, rhs, b.getI1Type());
}
Value GradBuilder::equal(Value lhs, Value rhs) {
  return broadcastBinary("equal", lhs, rhs, b.getI1Type());
}

Value GradBuilder::neg(Value x) { return NegOp::create(b, loc, x); }
Value GradBuilder::exp(Value x) { return ExpOp::create(b, loc, x); }
Value GradBuilder::erf(Value x) { return ErfOp::create(b, loc, x); }
Value GradBuilder::tanh(Value x) { return TanhOp::create(b, loc, x); }
Value GradBuilder::cos(Value x) { return CosOp::create(b, loc, x); }
Value GradBuilder::sin(Value x) { return SinOp::create(b, loc, x); }
Value GradBuilder::sqrt(Value x) { return SqrtOp::create(b, loc, x); }
Value GradBuilder::reciprocal(Value x) {
  return ReciprocalOp::create(b, loc, x);
}

Value GradBuilder::scale(Value x, double factor) {
  if (factor == 1.0)
    return x;
  return mul(x, scalarLike(factor, x));
}

Value GradBuilder::where(Value condition, Value x, Value y) {
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(shapeOf(x), shapeOf(y));
  assert(shape && "where operands do not broadcast");
  shape = broadcastShapes(*shape, shapeOf(condition));
  assert(shape && "where condition does not broadcast");
  return WhereOp::create(b, loc, withShape(x, *shape), condition, x, y);
}

Value GradBuilder::cast(Value x, Type elementType) {
  if (elementTypeOf(x) == elementType)
    return x;
  return CastOp::create(
      b, loc, RankedTensorType::get(shapeOf(x), elementType), x);
}

static SmallVector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> axes,
                                         bool keepdims) {
  SmallVector<int64_t> result;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    bool reduced = axes.empty() || llvm::is_contained(axes, int64_t(dim));
    if (!reduced)
      result.push_back(size);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

Value GradBuilder::reduceSum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  auto type = withShape(x, reducedShape(shapeOf(x), axes, keepdims));
  return ReduceSumOp::create(b, loc, type, x, b.getDenseI64ArrayAttr(axes),
                             b.getBoolAttr(keepdims));
}

Value GradBuilder::reduceMean(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  auto type = withShape(x, reducedShape(shapeOf(x), axes, keepdims));
  return ReduceMeanOp::create(b, loc, type, x, b.getDenseI64ArrayAttr(axes),
                              b.getBoolAttr(keepdims));
}

Value GradBuilder::reduceToShape(Value grad, Value like) {
  ArrayRef<int64_t> gradShape = shapeOf(grad);
  ArrayRef<int64_t> likeShape = shapeOf(like);
  int64_t lead = int64_t(gradShape.size()) - int64_t(likeShape.size());
  assert(lead >= 0 && "gradient of lower rank than its operand");
  SmallVector<int64_t> axes;
  for (int64_t dim = 0; dim < lead; ++dim)
    axes.push_back(dim);
  // A dim of 1 that met a larger (or unknown) one was stretched. A dynamic
  // dim is taken as equal to the gradient's, as the forward op's verifier
  // did.
  for (auto [index, size] : llvm::enumerate(likeShape))
    if (size == 1 && gradShape[lead + index] != 1)
      axes.push_back(lead + int64_t(index));
  if (axes.empty())
    return grad.getType() == like.getType() ? grad : reshapeLike(grad, like);
  Value summed = reduceSum(grad, axes, /*keepdims=*/true);
  if (lead == 0 && summed.getType() == like.getType())
    return summed;
  return reshapeLike(summed, like);
}

Value GradBuilder::matmul(Value lhs, Value rhs) {
  std::optional<SmallVector<int64_t>> shape =
      matmulShape(shapeOf(lhs), shapeOf(rhs));
  assert(shape && "matmul operands of a gradient rule do not match");
  return MatMulOp::create(b, loc, withShape(lhs, *shape), lhs, rhs);
}

Value GradBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t dim : perm)
    shape.push_back(shapeOf(x)[dim]);
  return TransposeOp::create(b, loc, withShape(x, shape), x,
                             b.getDenseI64ArrayAttr(perm));
}

Value GradBuilder::transposeLast(Value x) {
  int64_t rank = rankOf(x);
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(x, perm);
}

Value GradBuilder::reshape(Value x, ArrayRef<int64_t> shape,
                           ArrayRef<int64_t> resultShape) {
  return ReshapeOp::create(b, loc, withShape(x, resultShape), x, ints(shape),
                           b.getBoolAttr(false));
}

Value GradBuilder::shapeTensor(Value x) {
  auto type = RankedTensorType::get({rankOf(x)}, b.getI64Type());
  return ShapeOp::create(b, loc, type, x, b.getI64IntegerAttr(0),
                         IntegerAttr());
}

Value GradBuilder::dimOf(Value x, int64_t dim) {
  auto type = RankedTensorType::get({}, b.getI64Type());
  if (!ShapedType::isDynamic(lmopt::shapeOf(x)[dim]))
    return scalar(double(lmopt::shapeOf(x)[dim]), b.getI64Type());
  Value shape = shapeTensor(x);
  return GatherOp::create(b, loc, type, shape,
                          scalar(double(dim), b.getI64Type()),
                          b.getI64IntegerAttr(0));
}

Value GradBuilder::reshapeLike(Value x, Value like) {
  auto type = withShape(x, lmopt::shapeOf(like));
  if (x.getType() == type)
    return x;
  auto likeType = llvm::cast<RankedTensorType>(like.getType());
  Value shape = likeType.hasStaticShape() ? ints(likeType.getShape())
                                          : shapeTensor(like);
  return ReshapeOp::create(b, loc, type, x, shape, b.getBoolAttr(false));
}

Value GradBuilder::expandLike(Value x, Value like) {
  auto likeType = llvm::cast<RankedTensorType>(like.getType());
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(lmopt::shapeOf(x), likeType.getShape());
  assert(shape && "expand to a shape the value does not broadcast to");
  Value target = likeType.hasStaticShape() ? ints(likeType.getShape())
                                           : shapeTensor(like);
  return ExpandOp::create(b, loc, withShape(x, *shape), x, target);
}

Value GradBuilder::unsqueeze(Value x, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape(lmopt::shapeOf(x));
  SmallVector<int64_t> sorted(axes);
  llvm::sort(sorted);
  for (int64_t axis : sorted)
    shape.insert(shape.begin() + axis, 1);
  return UnsqueezeOp::create(b, loc, withShape(x, shape), x,
                             b.getDenseI64ArrayAttr(axes));
}

Value GradBuilder::zerosLike(Value like) {
  auto type = llvm::cast<RankedTensorType>(like.getType());
  Type element = type.getElementType();
  if (type.hasStaticShape())
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type, b.getFloatAttr(element, 0.0)));
  return expandLike(scalar(0.0, element), like);
}

Value GradBuilder::flattenRows(Value x) {
  ArrayRef<int64_t> shape = lmopt::shapeOf(x);
  if (shape.size() == 2)
    return x;
  int64_t rows = 1;
  for (int64_t size : shape.drop_back())
    rows = ShapedType::isDynamic(size) || ShapedType::isDynamic(rows)
               ? ShapedType::kDynamic
               : rows * size;
  if (!ShapedType::isDynamic(shape.back()))
    return reshape(x, {-1, shape.back()}, {rows, shape.back()});
  // [-1, the last dim read at run time].
  auto i64 = b.getI64Type();
  Value last = ShapeOp::create(b, loc, RankedTensorType::get({1}, i64), x,
                               b.getI64IntegerAttr(int64_t(shape.size()) - 1),
                               IntegerAttr());
  Value target = ConcatOp::create(b, loc, RankedTensorType::get({2}, i64),
                                  ValueRange{ints({-1}), last},
                                  b.getI64IntegerAttr(0));
  return ReshapeOp::create(b, loc, withShape(x, {rows, shape.back()}), x,
                           target, b.getBoolAttr(false));
}

Value GradBuilder::linear(Value x, Value weight, bool transposeWeight) {
  SmallVector<int64_t> shape(lmopt::shapeOf(x));
  ArrayRef<int64_t> w = lmopt::shapeOf(weight);
  shape.back() = transposeWeight ? w[0] : w[1];
  return LinearOp::create(b, loc, withShape(x, shape), x, weight, Value(),
                          Value(), b.getBoolAttr(transposeWeight),
                          ActivationAttr::get(b.getContext(), Activation::none),
                          InputQuantizationAttr::get(b.getContext(),
                                                     InputQuantization::none));
}

Value GradBuilder::softmax(Value x, int64_t axis) {
  return SoftmaxOp::create(b, loc, x, b.getI64IntegerAttr(axis));
}
