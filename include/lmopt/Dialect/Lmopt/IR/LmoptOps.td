//===- LmoptOps.td - lmopt dialect ops ---------------------*- tablegen -*-===//

#ifndef LMOPT_DIALECT_LMOPT_IR_LMOPTOPS_TD
#define LMOPT_DIALECT_LMOPT_IR_LMOPTOPS_TD

include "lmopt/Dialect/Lmopt/IR/LmoptBase.td"
include "lmopt/Dialect/Lmopt/IR/LmoptOnnxOps.td"
include "lmopt/Dialect/Lmopt/IR/LmoptFusedOps.td"

#endif // LMOPT_DIALECT_LMOPT_IR_LMOPTOPS_TD
