//===- QuantizeWeights.h - weight quantization arithmetic -------*- C++ -*-===//
//
// The numbers behind `lmopt-quantize`: scales, zero points and integer
// values of a weight matrix, and the `quant` types that carry them.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_QUANTIZEWEIGHTS_H
#define LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_QUANTIZEWEIGHTS_H

#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Value.h"

#include <vector>

namespace mlir::lmopt {

/// A quantized weight: its element type and storage values (row-major, in
/// the weight's own layout, one per element).
struct QuantizedWeight {
  quant::QuantizedType type;
  std::vector<int8_t> values;
  /// Packed size with parameters (docs/quantization.md).
  int64_t bytes = 0;
};

/// The elements of `value` when it is an `lmopt.constant` of f32 (`dense`
/// or `dense_resource` with its blob present).
FailureOr<std::vector<float>> readF32Constant(Value value);

/// Symmetric int8 (values in [-127, 127], zero point 0, round half to even):
/// scale `max|w| / 127` per output channel (`outAxis` of the rank-2
/// `shape`), or one for the whole matrix when `perTensor`.
QuantizedWeight quantizeInt8Weight(MLIRContext *context, ArrayRef<float> w,
                                   ArrayRef<int64_t> shape, int64_t outAxis,
                                   bool perTensor);

/// `x` (>= 0) rounded to the nearest f16 value, ties to even (subnormals
/// included, 65504 at most), returned as f32.
float roundToF16(float x);

/// 4-bit blocks of `block` elements along K (the axis other than
/// `outAxis`): symmetric `i4` (scale `roundToF16(a * max|w| / 7)`, values
/// in [-7, 7]) or asymmetric `u4` (range widened to 0, each end shrunk by
/// its own ratio, scale `roundToF16((a_hi * max - a_lo * min) / 15)`, zero
/// point `round(-a_lo * min / scale)` in [0, 15]), the ratios `a` from
/// 1.0 down to 0.5 in steps of 0.05 chosen per block for the least squared
/// error (docs/quantization.md). `block` must divide K. Rounds to nearest,
/// or, when given, through `round` (a WeightRounder: the weight as [N, K],
/// N, and the grid, whose block parameters are then searched on the values
/// it passes); fails only when `round` does.
FailureOr<QuantizedWeight> quantizeInt4Weight(
    MLIRContext *context, ArrayRef<float> w, ArrayRef<int64_t> shape,
    int64_t outAxis, int64_t block, bool symmetric,
    function_ref<LogicalResult(ArrayRef<float>, int64_t, RoundingGrid &)>
        round = nullptr);

/// The per-tensor `u8` type of an input observed in `range`: the range
/// widened to 0, scale `(max - min) / 255`, zero point `round(-min / scale)`.
quant::UniformQuantizedType getStaticInputType(MLIRContext *context,
                                               InputRange range);

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_QUANTIZEWEIGHTS_H
