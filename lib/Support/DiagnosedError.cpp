//===- DiagnosedError.cpp - A failure already shown as diagnostics --------===//

#include "lmopt/Support/DiagnosedError.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir::lmopt;

char DiagnosedError::ID = 0;

void DiagnosedError::log(llvm::raw_ostream &os) const {
  os << "failed (see the diagnostics above)";
}

std::error_code DiagnosedError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

void mlir::lmopt::printErrors(llvm::Error error, llvm::raw_ostream &os) {
  llvm::handleAllErrors(
      std::move(error), [](const DiagnosedError &) {},
      [&](const llvm::ErrorInfoBase &info) {
        os << "error: " << info.message() << "\n";
      });
}
