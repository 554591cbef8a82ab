//===- LmoptDialect.h - lmopt dialect ---------------------------*- C++ -*-===//

#ifndef LMOPT_DIALECT_LMOPT_IR_LMOPTDIALECT_H
#define LMOPT_DIALECT_LMOPT_IR_LMOPTDIALECT_H

#include "lmopt/Support/FusionReport.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/Dialect.h"

#include <memory>

#include "lmopt/Dialect/Lmopt/IR/LmoptOpsDialect.h.inc"

#include "lmopt/Dialect/Lmopt/IR/LmoptEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "lmopt/Dialect/Lmopt/IR/LmoptAttrs.h.inc"

namespace mlir::lmopt {
/// The fusion report of `context`, loading the lmopt dialect if needed.
FusionReport &getFusionReport(MLIRContext *context);
} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_IR_LMOPTDIALECT_H
