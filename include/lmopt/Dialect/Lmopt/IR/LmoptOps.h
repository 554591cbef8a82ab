//===- LmoptOps.h - lmopt dialect ops ---------------------------*- C++ -*-===//

#ifndef LMOPT_DIALECT_LMOPT_IR_LMOPTOPS_H
#define LMOPT_DIALECT_LMOPT_IR_LMOPTOPS_H

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h.inc"

#endif // LMOPT_DIALECT_LMOPT_IR_LMOPTOPS_H
