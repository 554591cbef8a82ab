//===- LinearWeights.cpp - Constant weights of linears --------------------===//

#include "LinearWeights.h"

#include "QuantizeWeights.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::lmopt;

/// The weight (or a rank-1 bias, as one row) of a linear, or why not.
FailureOr<WeightMatrix> mlir::lmopt::readMatrix(Value value, bool transposed,
                                    std::string &why) {
  FailureOr<std::vector<float>> values = readF32Constant(value);
  if (failed(values)) {
    why = "its weight or bias is not a constant f32 with static dims";
    return failure();
  }
  auto type = llvm::cast<ShapedType>(value.getType());
  WeightMatrix matrix;
  matrix.values = std::move(*values);
  matrix.rows = type.getRank() == 2 ? type.getDimSize(0) : 1;
  matrix.cols = type.getDimSize(type.getRank() - 1);
  matrix.transposed = transposed;
  if (auto constant = value.getDefiningOp<ConstantOp>())
    matrix.resource = llvm::isa<DenseResourceElementsAttr>(constant.getValue());
  return matrix;
}

/// `matrix` with only the output columns `cols` of its [K, N] view (a bias:
/// its entries), in its own layout.
SmallVector<char> mlir::lmopt::keepOutputs(const WeightMatrix &matrix,
                                     ArrayRef<int64_t> cols) {
  SmallVector<float> out;
  int64_t k = matrix.inWidth();
  out.reserve(k * cols.size());
  if (matrix.transposed) {
    for (int64_t n : cols)
      for (int64_t i = 0; i < k; ++i)
        out.push_back(matrix.at(i, n));
  } else {
    for (int64_t i = 0; i < k; ++i)
      for (int64_t n : cols)
        out.push_back(matrix.at(i, n));
  }
  const char *bytes = reinterpret_cast<const char *>(out.data());
  return SmallVector<char>(bytes, bytes + out.size() * sizeof(float));
}

/// `matrix` with only the input rows `rows` of its [K, N] view.
SmallVector<char> mlir::lmopt::keepInputs(const WeightMatrix &matrix,
                                    ArrayRef<int64_t> rows) {
  SmallVector<float> out;
  int64_t n = matrix.outWidth();
  out.reserve(n * rows.size());
  if (matrix.transposed) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k : rows)
        out.push_back(matrix.at(k, j));
  } else {
    for (int64_t k : rows)
      for (int64_t j = 0; j < n; ++j)
        out.push_back(matrix.at(k, j));
  }
  const char *bytes = reinterpret_cast<const char *>(out.data());
  return SmallVector<char>(bytes, bytes + out.size() * sizeof(float));
}

/// A new constant for a cut matrix: `[K', N']` in the layout of `like`.
Value mlir::lmopt::cutConstant(OpBuilder &builder, Value like,
                               const WeightMatrix &matrix,
                         int64_t inWidth, int64_t outWidth,
                         ArrayRef<char> bytes, StringRef name) {
  auto type = llvm::cast<ShapedType>(like.getType());
  SmallVector<int64_t> shape;
  if (type.getRank() == 1)
    shape = {outWidth};
  else if (matrix.transposed)
    shape = {outWidth, inWidth};
  else
    shape = {inWidth, outWidth};
  return buildConstant(builder, like.getLoc(),
                       RankedTensorType::get(shape, type.getElementType()),
                       bytes, name, matrix.resource);
}

