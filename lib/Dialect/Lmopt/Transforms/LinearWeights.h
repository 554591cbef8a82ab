//===- LinearWeights.h - Constant weights of linears ------------*- C++ -*-===//
//
// A linear's constant f32 weight or bias read as a [K, N] matrix in its
// stored layout, and new constants made of chosen output columns or input
// rows of it: what lmopt-prune cuts and what the attention fusion permutes.
// Private to the Transforms library.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_LINEARWEIGHTS_H
#define LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_LINEARWEIGHTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace mlir::lmopt {

/// A constant f32 matrix of a linear, in its stored layout, seen as
/// [K, N] (N the linear's output width) whatever `transpose_weight` says.
struct WeightMatrix {
  std::vector<float> values;
  int64_t rows = 0, cols = 0;
  bool transposed = false;
  bool resource = false;

  int64_t outWidth() const { return transposed ? rows : cols; }
  int64_t inWidth() const { return transposed ? cols : rows; }
  /// Element (k, n) of the [K, N] view.
  float at(int64_t k, int64_t n) const {
    return transposed ? values[n * cols + k] : values[k * cols + n];
  }
};

/// The weight (or a rank-1 bias, as one row) of a linear, or why not.
FailureOr<WeightMatrix> readMatrix(Value value, bool transposed,
                                   std::string &why);

/// `matrix` with only the output columns `cols` of its [K, N] view (a bias:
/// its entries), in that order and its own layout.
SmallVector<char> keepOutputs(const WeightMatrix &matrix,
                              ArrayRef<int64_t> cols);

/// `matrix` with only the input rows `rows` of its [K, N] view.
SmallVector<char> keepInputs(const WeightMatrix &matrix,
                             ArrayRef<int64_t> rows);

/// A new constant for a cut matrix: `[K', N']` in the layout of `like`.
Value cutConstant(OpBuilder &builder, Value like, const WeightMatrix &matrix,
                  int64_t inWidth, int64_t outWidth, ArrayRef<char> bytes,
                  StringRef name);

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_LINEARWEIGHTS_H
