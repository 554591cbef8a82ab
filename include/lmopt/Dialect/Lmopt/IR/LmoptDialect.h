//===- LmoptDialect.h - lmopt dialect ---------------------------*- C++ -*-===//

#ifndef LMOPT_DIALECT_LMOPT_IR_LMOPTDIALECT_H
#define LMOPT_DIALECT_LMOPT_IR_LMOPTDIALECT_H

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/Dialect.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOpsDialect.h.inc"

#include "lmopt/Dialect/Lmopt/IR/LmoptEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "lmopt/Dialect/Lmopt/IR/LmoptAttrs.h.inc"

#endif // LMOPT_DIALECT_LMOPT_IR_LMOPTDIALECT_H
