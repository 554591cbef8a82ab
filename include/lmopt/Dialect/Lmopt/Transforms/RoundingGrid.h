//===- RoundingGrid.h - the grid a weight is rounded onto -------*- C++ -*-===//
//
// The quantize pass owns the int4 grid (per-block scales and zero points from
// its clip search); what walks the weight and feeds the grid values may be
// the pass itself (round to nearest) or an error-compensating rounder that
// updates the values first (GPTQ in lib/Quantization, through WeightRounder
// in Quantize.h). Plain C++ so that such a rounder's arithmetic needs no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_ROUNDINGGRID_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_ROUNDINGGRID_H

#include <cstdint>

namespace mlir::lmopt {

/// A block-wise grid over a weight held as [N, K] (one output channel per
/// row). Callers visit each row's columns in order and choose a block's
/// parameters at its first column.
class RoundingGrid {
public:
  virtual ~RoundingGrid() = default;
  /// Chooses the parameters of the block of row `row` that starts at column
  /// `col`, from its `count` current values.
  virtual void chooseBlock(int64_t row, int64_t col, const float *values,
                           int64_t count) = 0;
  /// Quantizes element (`row`, `col`), currently `value`, with its block's
  /// parameters and returns the dequantized value.
  virtual float quantize(int64_t row, int64_t col, float value) = 0;
};

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_ROUNDINGGRID_H
