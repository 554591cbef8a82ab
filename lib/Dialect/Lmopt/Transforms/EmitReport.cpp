//===- EmitReport.cpp - write the fusion report ---------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::lmopt {
#define GEN_PASS_DEF_EMITREPORTPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;

namespace {

struct EmitReportPass : lmopt::impl::EmitReportPassBase<EmitReportPass> {
  using Base::Base;

  void runOnOperation() override {
    const lmopt::FusionReport &report = lmopt::getFusionReport(&getContext());
    if (output == "-") {
      report.writeTable(llvm::outs());
      return;
    }
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &error);
    if (!file) {
      getOperation().emitError("cannot write the fusion report to '")
          << output << "': " << error;
      return signalPassFailure();
    }
    if (llvm::sys::path::extension(output) == ".json")
      report.writeJSON(file->os());
    else
      report.writeTable(file->os());
    file->keep();
  }
};

} // namespace
