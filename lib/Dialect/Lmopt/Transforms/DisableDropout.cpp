//===- DisableDropout.cpp - turn dropout off in training graphs -----------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_DISABLEDROPOUTPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;

namespace {

struct DisableDropoutPass
    : lmopt::impl::DisableDropoutPassBase<DisableDropoutPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::StringSet<> keepNames;
    for (const std::string &name : keep)
      keepNames.insert(name);
    llvm::StringSet<> seen;
    Builder builder(&getContext());
    getOperation()->walk([&](lmopt::DropoutOp op) {
      std::string node = lmopt::describeNode(op.getLoc());
      if (keepNames.contains(node)) {
        seen.insert(node);
        return;
      }
      op.setRatioAttr(builder.getF32FloatAttr(0.0f));
    });
    // A name that matches nothing is almost always a typo: say so rather
    // than silently disabling the dropout the user meant to keep.
    bool unmatched = false;
    for (const std::string &name : keep) {
      if (seen.contains(name))
        continue;
      getOperation()->emitError("keep names '")
          << name << "', which is not the node name of any dropout";
      unmatched = true;
    }
    if (unmatched)
      signalPassFailure();
  }
};

} // namespace
