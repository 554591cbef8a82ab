//===- QuantVerifiers.h - checks of quantized operand types -----*- C++ -*-===//
//
// Quantized-operand rules that ops other than lmopt.linear share with its
// verifier (LmoptFusedOps.cpp), so that each rule lives in one place.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DIALECT_LMOPT_IR_QUANTVERIFIERS_H
#define LMOPT_LIB_DIALECT_LMOPT_IR_QUANTVERIFIERS_H

#include "mlir/IR/Operation.h"

namespace mlir::lmopt {

/// Checks a row-quantized gather table, one gathered into a result element
/// type other than its own (docs/dialect.md, "Quantized embedding
/// tables"): 8-bit storage expressing f32, quantized per axis 0
/// with one scale per row (`rows`, possibly dynamic), gathered along
/// `axis` 0 into an f32 `result` element type.
LogicalResult verifyRowQuantizedTable(Operation *op, Type tableElement,
                                      int64_t rows, int64_t axis,
                                      Type resultElement);

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DIALECT_LMOPT_IR_QUANTVERIFIERS_H
