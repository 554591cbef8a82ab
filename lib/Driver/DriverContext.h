//===- DriverContext.h - A driver's context and diagnostics ----*- C++ -*-===//
//
// What lmopt-compile and lmopt-reduce-layers set up before reading a model:
// an MLIRContext with the dialects an imported or parsed module uses, and
// diagnostics printed to the tool's log. Private to the driver.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DRIVER_DRIVERCONTEXT_H
#define LMOPT_LIB_DRIVER_DRIVERCONTEXT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace mlir::lmopt {

class DriverContext {
public:
  /// Diagnostics go to `log`: those located only by node name (ONNX
  /// imports, loc("...")) as plain "error: ..." lines, the others with the
  /// source manager's file and line. The op is not printed with them.
  explicit DriverContext(llvm::raw_ostream &log);
  ~DriverContext();

  MLIRContext &getContext() { return *context; }
  /// Where parsed `.mlir` files live, for diagnostics that point into them.
  llvm::SourceMgr &getSources() { return sources; }

private:
  std::unique_ptr<MLIRContext> context;
  llvm::SourceMgr sources;
  std::unique_ptr<SourceMgrDiagnosticHandler> byFile;
  std::unique_ptr<ScopedDiagnosticHandler> byNode;
};

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DRIVER_DRIVERCONTEXT_H
