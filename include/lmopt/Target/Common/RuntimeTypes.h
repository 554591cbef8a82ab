//===- RuntimeTypes.h - MLIR element types to runtime dtypes ----*- C++ -*-===//
//
// Which runtime dtype (lmopt/Format/Plan.h) holds elements of an MLIR type:
// the plan builder's, the calibration runner's and every target's answer.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_RUNTIMETYPES_H
#define LMOPT_TARGET_COMMON_RUNTIMETYPES_H

#include "lmopt/Format/Plan.h"

#include "mlir/IR/Types.h"

#include <optional>

namespace mlir::lmopt {

/// The runtime dtype that holds elements of `type` (i1 as Bool), if any.
/// Quantized types map to their storage integers (sub-byte widths one per
/// byte).
std::optional<::lmopt::runtime::DType> getRuntimeDType(Type type);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_RUNTIMETYPES_H
