//===- BuildUtils.h - shared builders for lmopt to linalg -------*- C++ -*-===//
//
// Broadcasting indexing maps, destination tensors sized from the inputs and
// elementwise generics, shared by the elementwise and reduction patterns.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_CONVERSION_LMOPTTOLINALG_BUILDUTILS_H
#define LMOPT_CONVERSION_LMOPTTOLINALG_BUILDUTILS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir::lmopt::linalg_lowering {

using ScalarBodyFn =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// The type statistics and transcendental math run in: f32 for narrower
/// floats, the element type otherwise.
Type getComputeType(Type elementType);

/// Extends or truncates a float scalar, or returns it unchanged.
Value convertFloat(OpBuilder &b, Location loc, Value value, Type to);

/// Why `operandTypes` cannot be lowered as numpy-broadcast to `resultType`
/// with static indexing maps, or an empty string when they can.
std::string checkBroadcast(RankedTensorType resultType,
                           ArrayRef<RankedTensorType> operandTypes);

/// The map from the result's iteration space (rank `resultRank`) to an
/// operand, aligned on the right, reading index 0 in dims of static size 1
/// that the result stretches.
AffineMap getBroadcastMap(RankedTensorType operandType,
                          RankedTensorType resultType);

/// The broadcasting map of each operand for `resultType`.
SmallVector<AffineMap> getBroadcastMaps(RankedTensorType resultType,
                                        ValueRange operands);

/// Emits `cf.assert`s that dynamic dims meeting at one result position are
/// equal at run time (a run-time 1 would need a broadcast the maps lack).
void buildDynamicDimChecks(OpBuilder &b, Location loc, int64_t resultRank,
                           ValueRange operands);

/// A `tensor.empty` of `resultType` whose dynamic dims are read from the
/// operand that supplies that (right-aligned) dim.
Value buildEmptyForBroadcast(OpBuilder &b, Location loc,
                             RankedTensorType resultType, ValueRange operands);

/// One all-parallel `linalg.generic` computing `body` elementwise over the
/// broadcast `operands` into a fresh tensor of `resultType`.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange operands, ScalarBodyFn body);

} // namespace mlir::lmopt::linalg_lowering

#endif // LMOPT_CONVERSION_LMOPTTOLINALG_BUILDUTILS_H
