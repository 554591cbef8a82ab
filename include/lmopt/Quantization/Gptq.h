//===- Gptq.h - GPTQ error-compensating weight quantization -----*- C++ -*-===//
//
// GPTQ (Frantar et al. 2022) for the block-wise int4 weights of
// `lmopt-quantize`: the columns of a weight (along K) are quantized in order
// and each one's rounding error is moved onto the columns not yet quantized,
// weighted by the calibration inputs' second moments H = sum x x^T, so that
// the layer's output on those inputs changes least. The grid (scales, zero
// points, clip search) is the quantize pass's RoundingGrid; this unit only
// does the linear algebra. No MLIR or BLAS dependency (docs/quantization.md,
// "GPTQ"); GptqRounder.h connects it to the pass.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_QUANTIZATION_GPTQ_H
#define LMOPT_QUANTIZATION_GPTQ_H

#include "lmopt/Dialect/Lmopt/Transforms/RoundingGrid.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lmopt::quantization {

/// H = sum over rows x of x x^T for one linear input of width K, in double.
class Hessian {
public:
  explicit Hessian(int64_t k) : k(k), h(k * (k + 1) / 2, 0.0) {}

  /// Adds `rows` input rows of `k` floats each (row-major).
  void add(const float *x, int64_t rows);
  /// Adds another Hessian of the same width.
  void add(const Hessian &other);

  int64_t size() const { return k; }
  int64_t rows() const { return numRows; }
  /// Element (i, j), either triangle.
  double at(int64_t i, int64_t j) const {
    return i <= j ? h[rowStart(i) + j - i] : h[rowStart(j) + i - j];
  }

private:
  /// Where row i's elements (i, i..k) start in `h`.
  int64_t rowStart(int64_t i) const { return i * k - i * (i - 1) / 2; }

  int64_t k;
  int64_t numRows = 0;
  /// The upper triangle (j >= i), packed row by row.
  std::vector<double> h;
};

struct GptqOptions {
  /// Elements per block along K (the grid's parameters are chosen at each
  /// block's first column).
  int64_t blockSize = 32;
  /// Dampening: lambda = percentDamp * mean(diag H) is added to the diagonal
  /// (1 when diag H is all zero).
  double percentDamp = 0.01;
  /// Columns per lazy batch update.
  int64_t lazyBatch = 128;
};

struct GptqStats {
  /// The dampening finally used (raised tenfold while H + lambda I was not
  /// numerically positive definite).
  double lambda = 0.0;
  int attempts = 0;
};

/// Quantizes `w` ([rows, k] row-major: one output channel per row, K along
/// the row; `k` = h.size(), a multiple of `options.blockSize`) onto `grid`,
/// columns in order, with GPTQ's error compensation: each block's parameters
/// are chosen on its error-updated values. Returns false (grid
/// untouched) when H + lambda I is not positive definite even after five
/// tenfold raises of lambda (non-finite H).
bool gptqQuantize(const Hessian &h, const float *w, int64_t rows,
                  RoundingGrid &grid, const GptqOptions &options,
                  GptqStats &stats);

} // namespace mlir::lmopt::quantization

#endif // LMOPT_QUANTIZATION_GPTQ_H
