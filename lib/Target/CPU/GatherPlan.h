//===- GatherPlan.h - Row-quantized gather to a gather step ----*- C++ -*-===//
//
// The plan builder's part for a gather from a row-quantized table
// (docs/dialect.md, "Quantized embedding tables"): the table's int8 bytes
// are stored as the constant holds them (through its storage cast), and
// its row scales become an f32 weight tensor that the gather step reads as
// a third operand (docs/bundle-format.md, "gather").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_TARGET_CPU_GATHERPLAN_H
#define LMOPT_LIB_TARGET_CPU_GATHERPLAN_H

#include "QuantPlan.h"

namespace mlir::lmopt::cpu {

/// True for a gather that dequantizes the rows of a quantized table (a
/// gather of quantized values into the same type only moves integers).
bool isQuantizedGather(GatherOp op);

/// The row scales of `op`'s table as an f32 [rows] constant named
/// "<node>.scales", or a diagnostic on `op` naming its node when the CPU
/// cannot run that form (it runs signed 8-bit tables with zero points 0).
FailureOr<QuantConstant> lowerQuantizedGather(GatherOp op, StringRef node);

} // namespace mlir::lmopt::cpu

#endif // LMOPT_LIB_TARGET_CPU_GATHERPLAN_H
