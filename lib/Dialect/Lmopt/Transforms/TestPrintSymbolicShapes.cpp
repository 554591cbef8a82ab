//===- TestPrintSymbolicShapes.cpp - remarks from SymbolicShapes ----------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/SymbolicShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_TESTPRINTSYMBOLICSHAPESPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static std::string printList(ArrayRef<SymExpr> exprs,
                             ArrayRef<std::string> names) {
  std::string out = "[";
  for (auto [i, expr] : llvm::enumerate(exprs)) {
    if (i != 0)
      out += ", ";
    out += expr.print(names);
  }
  return out + "]";
}

namespace {
struct TestPrintSymbolicShapesPass
    : lmopt::impl::TestPrintSymbolicShapesPassBase<
          TestPrintSymbolicShapesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SymbolicShapes shapes(func);
    func.walk([&](Operation *op) {
      if (isa<ConstantOp>(op))
        return;
      for (Value result : op->getResults()) {
        std::optional<ArrayRef<SymExpr>> dims = shapes.getDims(result);
        if (!dims)
          continue;
        std::string message;
        if (op->getNumResults() > 1)
          message =
              "result " +
              std::to_string(llvm::cast<OpResult>(result).getResultNumber()) +
              " ";
        message += "dims " + printList(*dims, shapes.getNames());
        if (std::optional<ArrayRef<SymExpr>> values = shapes.getValues(result))
          message += " values " + printList(*values, shapes.getNames());
        op->emitRemark(message);
      }
    });
    markAllAnalysesPreserved();
  }
};
} // namespace
