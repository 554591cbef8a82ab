//===- DriverContext.cpp - The context and diagnostics of a driver --------===//

#include "DriverContext.h"

#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Importer/ONNX/Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::lmopt;

static bool hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location inner) {
    found = llvm::isa<FileLineColLoc>(inner);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

static void printPlainDiagnostic(llvm::raw_ostream &log, Diagnostic &diag) {
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    log << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    log << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    log << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    log << "remark: ";
    break;
  }
  log << diag << "\n";
}

DriverContext::DriverContext(llvm::raw_ostream &log) {
  DialectRegistry registry;
  registry.insert<LmoptDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
  registerONNXImportDialects(registry);
  registerGradientModels(registry);
  context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // Diagnostics name the node; the whole op would drown them.
  context->printOpOnDiagnostic(false);
  byFile =
      std::make_unique<SourceMgrDiagnosticHandler>(sources, context.get(), log);
  // Diagnostics located only by node name read better without the source
  // manager's "<unknown>:0" prefix.
  byNode = std::make_unique<ScopedDiagnosticHandler>(
      context.get(), [&log](Diagnostic &diag) {
        if (hasFileLocation(diag.getLocation()))
          return failure(); // the source manager's handler shows the line
        printPlainDiagnostic(log, diag);
        for (Diagnostic &note : diag.getNotes())
          printPlainDiagnostic(log, note);
        return success();
      });
}

DriverContext::~DriverContext() {
  // The handlers go before the context they are registered with.
  byNode.reset();
  byFile.reset();
}
