//===- GradBuilder.h - building backward ops with their types ---*- C++ -*-===//
//
// The gradient rules build many small lmopt ops whose result types follow
// from their operands (broadcasts, reductions, matmuls); GradBuilder
// computes those types so that each rule reads as its formula. Dims the
// operands leave dynamic stay dynamic; reshapes to another value's shape go
// through `lmopt.shape` so they hold at run time.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DIALECT_LMOPT_AUTODIFF_GRADBUILDER_H
#define LMOPT_LIB_DIALECT_LMOPT_AUTODIFF_GRADBUILDER_H

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::lmopt {

class GradBuilder {
public:
  GradBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  OpBuilder &getBuilder() { return b; }
  Location getLoc() const { return loc; }

  /// A rank-0 constant of `elementType` (float or integer).
  Value scalar(double value, Type elementType);
  /// The same, with `like`'s element type.
  Value scalarLike(double value, Value like);
  /// A 1-D i64 constant.
  Value ints(ArrayRef<int64_t> values);

  Value add(Value lhs, Value rhs);
  Value sub(Value lhs, Value rhs);
  Value mul(Value lhs, Value rhs);
  Value div(Value lhs, Value rhs);
  Value neg(Value x);
  Value exp(Value x);
  Value erf(Value x);
  Value tanh(Value x);
  Value cos(Value x);
  Value sin(Value x);
  Value sqrt(Value x);
  Value reciprocal(Value x);
  /// `x * factor` for a compile-time factor.
  Value scale(Value x, double factor);
  Value where(Value condition, Value x, Value y);
  Value greater(Value lhs, Value rhs);
  Value equal(Value lhs, Value rhs);
  Value cast(Value x, Type elementType);

  /// Sum (mean) over `axes` (non-negative); all dims when empty.
  Value reduceSum(Value x, ArrayRef<int64_t> axes, bool keepdims);
  Value reduceMean(Value x, ArrayRef<int64_t> axes, bool keepdims);
  /// Sums `grad` over the dims a broadcast of `like` to `grad`'s shape
  /// stretched, giving `like`'s type: the gradient of a broadcast operand.
  Value reduceToShape(Value grad, Value like);

  Value matmul(Value lhs, Value rhs);
  Value transpose(Value x, ArrayRef<int64_t> perm);
  /// `x` with its last two dims swapped.
  Value transposeLast(Value x);
  /// `x` reshaped by the constant ONNX shape `shape` (0 copies a dim, -1
  /// infers one) to a tensor of dims `resultShape`.
  Value reshape(Value x, ArrayRef<int64_t> shape,
                ArrayRef<int64_t> resultShape);
  /// `x` reshaped to `like`'s shape (read at run time when dynamic).
  Value reshapeLike(Value x, Value like);
  /// `x` broadcast to `like`'s shape.
  Value expandLike(Value x, Value like);
  Value unsqueeze(Value x, ArrayRef<int64_t> axes);
  /// Zeros of `like`'s type.
  Value zerosLike(Value like);
  /// `[rows, x.dims.back()]`: every dim but the last folded into rows.
  Value flattenRows(Value x);
  /// `x W^T` when `transposeWeight` (W is [N, K]), else `x W` (W is [K,
  /// N]): a linear with no bias.
  Value linear(Value x, Value weight, bool transposeWeight);
  Value softmax(Value x, int64_t axis);
  Value shapeTensor(Value x);
  /// Dim `dim` of `x` as a rank-0 i64 value.
  Value dimOf(Value x, int64_t dim);

private:
  RankedTensorType withShape(Value like, ArrayRef<int64_t> shape);
  Value broadcastBinary(StringRef name, Value lhs, Value rhs,
                        Type resultElement = {});

  OpBuilder &b;
  Location loc;
};

/// The rank of `value`'s ranked tensor type.
int64_t rankOf(Value value);
/// The element type of `value`'s tensor type.
Type elementTypeOf(Value value);

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DIALECT_LMOPT_AUTODIFF_GRADBUILDER_H
