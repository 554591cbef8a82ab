//===- Registration.cpp - attaching every gradient rule -------------------===//

#include "Rules.h"

#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"

using namespace mlir;
using namespace mlir::lmopt;

void mlir::lmopt::registerGradientModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, LmoptDialect *) {
    attachElementwiseRules(*context);
    attachStructureRules(*context);
    attachLayerRules(*context);
  });
}
