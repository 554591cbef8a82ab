//===- ShapeUtils.h - ONNX shape rules shared by verifiers ------*- C++ -*-===//
//
// Shape rules of ONNX operators over MLIR shapes, where ShapedType::kDynamic
// stands for an unknown dim. Verifiers, the importer's type inference and the
// graph passes all use these so that the rules live in one place.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_IR_SHAPEUTILS_H
#define LMOPT_DIALECT_LMOPT_IR_SHAPEUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir::lmopt {

/// The shape of `value`, which must have a ranked tensor type (every lmopt
/// operand and result has one).
ArrayRef<int64_t> shapeOf(Value value);

/// Multidirectional (numpy) broadcast of two shapes; nullopt when two static
/// dims differ and neither is 1.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                    ArrayRef<int64_t> rhs);

/// True when `actual` could be `expected` once dynamic dims are known: equal
/// rank and every pair of dims equal or one of them dynamic.
bool isCompatibleShape(ArrayRef<int64_t> actual, ArrayRef<int64_t> expected);

/// One sliced axis with ONNX's bounds resolved: `count` elements from
/// `start` by `step`.
struct SliceAxis {
  int64_t start = 0, count = 0, step = 1;
};

/// ONNX Slice's resolution of one axis of static size `dim`: negative bounds
/// count from the end, then bounds are clamped ([0, dim] for positive steps,
/// [-1, dim - 1] for negative ones), as the reference evaluator does. A step
/// longer than the axis takes one element either way; it is shortened so
/// that the count cannot overflow.
SliceAxis resolveSliceAxis(int64_t dim, int64_t start, int64_t end,
                           int64_t step);

/// The entries of a constant integer tensor, or nullopt when `value` is null
/// or not a constant.
std::optional<SmallVector<int64_t>> getConstantInts(Value value);

/// A Slice of one axis by constants: the axis in [0, rank) and its range.
struct SingleAxisSlice {
  int64_t axis = 0;
  SliceAxis range;
};

/// The operands of a Slice (`axes` and `steps` may be null: every leading
/// axis, step 1) as a SingleAxisSlice resolved on the axis' static size;
/// nullopt when an operand is not constant, more than one axis is sliced
/// or the axis' size is dynamic.
std::optional<SingleAxisSlice> getSingleAxisSlice(Value input, Value starts,
                                                  Value ends, Value axes,
                                                  Value steps);

/// Maps `axis` in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Shape of numpy matmul of `lhs` by `rhs` (rank-1 promotion, batch
/// broadcast); nullopt when the contraction dims or batch dims disagree.
std::optional<SmallVector<int64_t>> matmulShape(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);

/// Formats a shape as "2x?x768" for diagnostics.
std::string formatShape(ArrayRef<int64_t> shape);

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_IR_SHAPEUTILS_H
