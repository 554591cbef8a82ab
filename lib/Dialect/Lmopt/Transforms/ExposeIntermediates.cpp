//===- ExposeIntermediates.cpp - Intermediate values as results -----------===//
//
// Appends chosen values of @main to its results (Passes.td,
// lmopt-expose-intermediates): the ops named in `values=`, or with
// `hidden-states` each post-norm encoder layer's input and the last
// layer's output.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "PruneScores.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_EXPOSEINTERMEDIATESPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

/// The first name in `loc`, or "".
static StringRef locationName(Location loc) {
  StringRef name;
  loc->walk([&](Location inner) {
    if (auto named = llvm::dyn_cast<NameLoc>(inner)) {
      name = named.getName().getValue();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

namespace {

struct ExposeIntermediatesPass
    : lmopt::impl::ExposeIntermediatesPassBase<ExposeIntermediatesPass> {
  using ExposeIntermediatesPassBase::ExposeIntermediatesPassBase;

  void runOnOperation() override {
    ModuleOp module = llvm::dyn_cast<ModuleOp>(getOperation());
    auto main = module ? module.lookupSymbol<func::FuncOp>("main") : nullptr;
    if (!main || main.isExternal()) {
      getOperation()->emitError()
          << "lmopt-expose-intermediates: no func.func @main to add results to";
      return signalPassFailure();
    }
    SmallVector<std::pair<Value, std::string>> exposed;
    if (hiddenStates && failed(addHiddenStates(main, exposed)))
      return signalPassFailure();
    if (failed(addNamedValues(main, exposed)))
      return signalPassFailure();
    if (exposed.empty())
      return;
    auto ret = llvm::cast<func::ReturnOp>(main.getBody().back().getTerminator());
    SmallVector<Value> results(ret.getOperands());
    SmallVector<std::string> names = getGraphOutputNames(main);
    llvm::StringSet<> taken;
    for (const std::string &name : names)
      taken.insert(name);
    for (auto &[value, name] : exposed) {
      if (!taken.insert(name).second) {
        main.emitError() << "lmopt-expose-intermediates: '" << name
                         << "' names a result already";
        return signalPassFailure();
      }
      results.push_back(value);
      names.push_back(name);
    }
    OpBuilder builder(ret);
    func::ReturnOp::create(builder, ret.getLoc(), results);
    ret.erase();
    main.setFunctionType(FunctionType::get(&getContext(),
                                           main.getArgumentTypes(),
                                           ValueRange(results).getTypes()));
    SmallVector<Attribute> nameAttrs;
    for (const std::string &name : names)
      nameAttrs.push_back(StringAttr::get(&getContext(), name));
    main->setAttr(kGraphOutputNamesAttr, ArrayAttr::get(&getContext(), nameAttrs));
  }

  LogicalResult addHiddenStates(func::FuncOp main,
                                SmallVectorImpl<std::pair<Value, std::string>> &exposed) {
    SmallVector<AttentionOp> attentions;
    main.walk([&](AttentionOp op) { attentions.push_back(op); });
    if (attentions.empty())
      return main.emitError() << "lmopt-expose-intermediates: hidden-states "
                                 "needs encoder layers; @main has no "
                                 "attention";
    Value last;
    for (auto [i, attention] : llvm::enumerate(attentions)) {
      std::string why;
      FailureOr<prune::EncoderLayer> layer =
          prune::matchEncoderLayer(attention, why);
      if (failed(layer))
        return attention.emitError()
               << "lmopt-expose-intermediates: hidden-states: layer " << i
               << " is not a post-norm encoder layer: " << why;
      if (last && layer->input != last)
        return attention.emitError()
               << "lmopt-expose-intermediates: hidden-states: layer " << i
               << " does not read layer " << i - 1 << "'s output";
      exposed.push_back({layer->input, "hidden_state." + std::to_string(i)});
      last = layer->output;
    }
    exposed.push_back(
        {last, "hidden_state." + std::to_string(attentions.size())});
    return success();
  }

  LogicalResult addNamedValues(func::FuncOp main,
                               SmallVectorImpl<std::pair<Value, std::string>> &exposed) {
    for (const std::string &name : values) {
      Operation *found = nullptr;
      main.walk([&](Operation *op) {
        if (op->getNumResults() && locationName(op->getLoc()) == name) {
          found = op;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (!found)
        return main.emitError()
               << "lmopt-expose-intermediates: no op of @main is named '"
               << name << "' (after the graph pipeline, a fused node's "
                          "name may be gone)";
      // A fused op's extra results nothing reads (a skip_layer_norm's
      // sum) are not the node's value.
      SmallVector<OpResult> read;
      for (OpResult result : found->getResults())
        if (!result.use_empty())
          read.push_back(result);
      if (read.empty())
        read.assign(found->getResults().begin(), found->getResults().end());
      if (read.size() == 1) {
        exposed.push_back({read.front(), name});
        continue;
      }
      for (OpResult result : read)
        exposed.push_back(
            {result, name + ":" + std::to_string(result.getResultNumber())});
    }
    return success();
  }
};

} // namespace
