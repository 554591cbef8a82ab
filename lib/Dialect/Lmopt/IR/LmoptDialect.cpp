//===- LmoptDialect.cpp - lmopt dialect -----------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::lmopt;

#include "lmopt/Dialect/Lmopt/IR/LmoptOpsDialect.cpp.inc"

#include "lmopt/Dialect/Lmopt/IR/LmoptEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "lmopt/Dialect/Lmopt/IR/LmoptAttrs.cpp.inc"

void LmoptDialect::initialize() {
  fusionReport = std::make_unique<FusionReport>();
  addOperations<
#define GET_OP_LIST
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "lmopt/Dialect/Lmopt/IR/LmoptAttrs.cpp.inc"
      >();
}

Operation *LmoptDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

FusionReport &mlir::lmopt::getFusionReport(MLIRContext *context) {
  return context->getOrLoadDialect<LmoptDialect>()->getFusionReport();
}
