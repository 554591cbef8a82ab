//===- DiagnosedError.h - A failure shown as diagnostics --------*- C++ -*-===//
//
// Library drivers return llvm::Error so that environment failures (files,
// linkers) carry their message to the tool; a failure that was reported as
// MLIR diagnostics (a bad model, an op no target runs) is this error, which
// the tool drops instead of printing a second message.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_SUPPORT_DIAGNOSEDERROR_H
#define LMOPT_SUPPORT_DIAGNOSEDERROR_H

#include "llvm/Support/Error.h"

namespace mlir::lmopt {

class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
};

/// A DiagnosedError.
inline llvm::Error makeDiagnosedError() {
  return llvm::make_error<DiagnosedError>();
}

/// Prints "error: <message>" to `os` for each error in `error` that is not
/// a DiagnosedError; what tools do with a driver's error before exiting.
void printErrors(llvm::Error error, llvm::raw_ostream &os);

} // namespace mlir::lmopt

#endif // LMOPT_SUPPORT_DIAGNOSEDERROR_H
