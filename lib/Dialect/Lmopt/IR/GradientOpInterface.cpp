//===- GradientOpInterface.cpp - an op's reverse-mode rule ----------------===//

#include "lmopt/Dialect/Lmopt/IR/GradientOpInterface.h"

#include "lmopt/Dialect/Lmopt/IR/GradientOpInterface.cpp.inc"
