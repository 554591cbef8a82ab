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

/// The entries (k, n) of `matrix`'s [K, N] view for k in `ins` and n in
/// `outs`, in its own layout.
static SmallVector<char> select(const WeightMatrix &matrix,
                                ArrayRef<int64_t> ins, ArrayRef<int64_t> outs) {
  SmallVector<float> out;
  out.reserve(ins.size() * outs.size());
  ArrayRef<int64_t> major = matrix.transposed ? outs : ins;
  ArrayRef<int64_t> minor = matrix.transposed ? ins : outs;
  for (int64_t a : major)
    for (int64_t b : minor)
      out.push_back(matrix.transposed ? matrix.at(b, a) : matrix.at(a, b));
  const char *bytes = reinterpret_cast<const char *>(out.data());
  return SmallVector<char>(bytes, bytes + out.size() * sizeof(float));
}

SmallVector<char> mlir::lmopt::keepOutputs(const WeightMatrix &matrix,
                                           ArrayRef<int64_t> cols) {
  SmallVector<int64_t> ins =
      llvm::to_vector(llvm::seq<int64_t>(0, matrix.inWidth()));
  return select(matrix, ins, cols);
}

SmallVector<char> mlir::lmopt::keepInputs(const WeightMatrix &matrix,
                                          ArrayRef<int64_t> rows) {
  SmallVector<int64_t> outs =
      llvm::to_vector(llvm::seq<int64_t>(0, matrix.outWidth()));
  return select(matrix, rows, outs);
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

