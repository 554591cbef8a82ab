//===- GradientCheck.cpp - autodiff against finite differences ------------===//
//
// lmopt-test-gradient-check: the unit test of every gradient rule. The
// gradients come from a clone of the function differentiated by
// buildGradients; the reference is a central difference of the original
// function's loss, both evaluated by the reference evaluator (double
// precision for f64 functions, which the lit tests use).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Reference/Evaluator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace mlir::lmopt {
#define GEN_PASS_DEF_TESTGRADIENTCHECKPASS
#include "lmopt/Dialect/Lmopt/Autodiff/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;
using reference::Tensor;

namespace {

struct TestGradientCheckPass
    : mlir::lmopt::impl::TestGradientCheckPassBase<TestGradientCheckPass> {
  using Base::Base;

  FailureOr<SmallVector<Tensor>> makeArguments(func::FuncOp func) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    SmallVector<Tensor> args;
    for (BlockArgument arg : func.getArguments()) {
      auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape())
        return func.emitError("argument ")
               << arg.getArgNumber() << " needs a static tensor type";
      Tensor tensor(type.getElementType(), type.getShape());
      auto values = func.getArgAttrOfType<DenseElementsAttr>(
          arg.getArgNumber(), "lmopt.test_values");
      if (values && values.getNumElements() != tensor.getNumElements())
        return func.emitError("lmopt.test_values of argument ")
               << arg.getArgNumber() << " has the wrong element count";
      for (int64_t i = 0; i < tensor.getNumElements(); ++i) {
        if (values && tensor.isFloat())
          tensor.setDouble(i, values.getValues<APFloat>()[i].convertToDouble());
        else if (values)
          tensor.setInt(i, values.getValues<APInt>()[i].getSExtValue());
        else if (tensor.isFloat())
          tensor.setDouble(i, scale * uniform(rng));
        else
          tensor.setInt(i, 0);
      }
      tensor.roundToElementType();
      args.push_back(std::move(tensor));
    }
    return args;
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<unsigned> wrt;
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), kTrainableAttrName))
        wrt.push_back(arg.getArgNumber());
    if (wrt.empty())
      return;
    FailureOr<SmallVector<Tensor>> args = makeArguments(func);
    if (failed(args))
      return signalPassFailure();

    // The gradients, from a differentiated clone.
    OpBuilder builder(func);
    auto clone = llvm::cast<func::FuncOp>(builder.clone(*func));
    auto eraseClone = llvm::make_scope_exit([&] { clone.erase(); });
    auto ret =
        llvm::cast<func::ReturnOp>(clone.getBody().front().getTerminator());
    SmallVector<Value> wrtValues;
    for (unsigned index : wrt)
      wrtValues.push_back(clone.getArgument(index));
    FailureOr<SmallVector<Value>> grads =
        buildGradients(clone, ret.getOperand(0), wrtValues);
    if (failed(grads))
      return signalPassFailure();
    SmallVector<Value> results{ret.getOperand(0)};
    llvm::append_range(results, *grads);
    ret->setOperands(results);
    clone.setType(FunctionType::get(&getContext(), clone.getArgumentTypes(),
                                    ValueRange(results).getTypes()));
    FailureOr<SmallVector<Tensor>> analytic =
        reference::evaluateFunction(clone, *args);
    if (failed(analytic))
      return signalPassFailure();

    auto lossAt = [&](SmallVector<Tensor> &values) -> FailureOr<double> {
      FailureOr<SmallVector<Tensor>> out =
          reference::evaluateFunction(func, values);
      if (failed(out))
        return failure();
      return (*out)[0].getDouble(0);
    };
    double worst = 0.0;
    int64_t checked = 0;
    for (auto [position, index] : llvm::enumerate(wrt)) {
      const Tensor &grad = (*analytic)[1 + position];
      Tensor &arg = (*args)[index];
      for (int64_t i = 0; i < arg.getNumElements(); ++i) {
        double saved = arg.getDouble(i);
        arg.setDouble(i, saved + step);
        FailureOr<double> plus = lossAt(*args);
        arg.setDouble(i, saved - step);
        FailureOr<double> minus = lossAt(*args);
        arg.setDouble(i, saved);
        if (failed(plus) || failed(minus))
          return signalPassFailure();
        double numeric = (*plus - *minus) / (2.0 * step);
        double value = grad.getDouble(i);
        double error =
            std::abs(value - numeric) / std::max(1.0, std::abs(value));
        worst = std::max(worst, error);
        ++checked;
      }
    }
    llvm::outs() << "gradient check @" << func.getSymName() << ": " << checked
                 << " elements, max error " << llvm::format("%.2e", worst)
                 << ": " << (worst <= tolerance ? "PASS" : "FAIL") << "\n";
  }
};

} // namespace
