//===- lmopt-opt.cpp - lmopt pass driver ----------------------------------===//
//
// mlir-opt for lmopt: registers the dialects a model passes through and every
// lmopt pass and pipeline; all behaviour lives in the libraries.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::lmopt::registerAllLmoptPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::lmopt::LmoptDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::quant::QuantDialect,
                  mlir::tensor::TensorDialect>();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "lmopt optimizer driver\n", registry));
}
