//===- Tensor.h - concrete tensors of the reference evaluator ---*- C++ -*-===//
//
// The reference evaluator computes on dense, row-major tensors whose values
// are held exactly: floats as double (rounded to the element type after every
// op), integers and booleans as int64. Clarity over speed: this is the
// semantic reference the importer and every pass are checked against.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_REFERENCE_TENSOR_H
#define LMOPT_REFERENCE_TENSOR_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lmopt::reference {

/// A concrete tensor: element type, shape and values.
class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(Type elementType, ArrayRef<int64_t> shape);

  Type getElementType() const { return elementType; }
  ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getRank() const { return shape.size(); }
  int64_t getNumElements() const;
  /// True for float element types; false for integers, i1 and quantized
  /// storage.
  bool isFloat() const { return floatElements; }

  /// Element `index` (row-major) as a double or as an int64, whatever the
  /// storage; integer to double is exact up to 2^53.
  double getDouble(int64_t index) const {
    return floatElements ? floats[index] : static_cast<double>(ints[index]);
  }
  int64_t getInt(int64_t index) const {
    return floatElements ? static_cast<int64_t>(floats[index]) : ints[index];
  }
  void setDouble(int64_t index, double value) { floats[index] = value; }
  void setInt(int64_t index, int64_t value) { ints[index] = value; }

  /// Sets element `index` to element `fromIndex` of `from`.
  void copyElement(int64_t index, const Tensor &from, int64_t fromIndex) {
    if (floatElements)
      floats[index] = from.getDouble(fromIndex);
    else
      ints[index] = from.getInt(fromIndex);
  }

  std::vector<double> &getFloats() { return floats; }
  const std::vector<double> &getFloats() const { return floats; }
  std::vector<int64_t> &getInts() { return ints; }
  const std::vector<int64_t> &getInts() const { return ints; }

  /// A tensor of `shape` whose element i is element `indices[i]` of this one.
  Tensor take(ArrayRef<int64_t> indices, ArrayRef<int64_t> shape) const;
  /// The same values under another shape of as many elements.
  Tensor reshaped(ArrayRef<int64_t> shape) const;
  /// The values converted to `type` with ONNX Cast semantics.
  Tensor castTo(Type type) const;
  /// Rounds (floats) or wraps (integers) every value to the element type.
  void roundToElementType();

  /// The contents of a constant: dense and dense_resource attributes.
  static FailureOr<Tensor> fromAttr(ElementsAttr attr, Location loc);

private:
  Type elementType;
  SmallVector<int64_t> shape;
  bool floatElements = false;
  std::vector<double> floats;
  std::vector<int64_t> ints;
};

/// Product of `shape` (1 for a scalar).
int64_t getNumElements(ArrayRef<int64_t> shape);
/// Row-major strides of `shape`.
SmallVector<int64_t> getStrides(ArrayRef<int64_t> shape);
/// Numpy broadcast of two shapes; failure when they disagree.
FailureOr<SmallVector<int64_t>> broadcast(ArrayRef<int64_t> lhs,
                                          ArrayRef<int64_t> rhs);
/// For every element of `outShape` (row-major), the index of the element of
/// a tensor of `inShape` that broadcasts to it. `inShape` must broadcast to
/// `outShape`.
std::vector<int64_t> broadcastIndices(ArrayRef<int64_t> inShape,
                                      ArrayRef<int64_t> outShape);
/// Formats a shape as "2x3x4" ("scalar" for rank 0).
std::string formatShape(ArrayRef<int64_t> shape);

} // namespace mlir::lmopt::reference

#endif // LMOPT_REFERENCE_TENSOR_H
