//===- QuantizeFlags.h - lmopt-compile's quantization flags -----*- C++ -*-===//
//
// `--quantize` and its companions, kept apart from the tool's other flags.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOOLS_LMOPT_COMPILE_QUANTIZEFLAGS_H
#define LMOPT_TOOLS_LMOPT_COMPILE_QUANTIZEFLAGS_H

#include "lmopt/Quantization/QuantizeDriver.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace lmopt_compile {

llvm::cl::OptionCategory &getQuantizeCategory();

/// True when any quantization flag was given.
bool isQuantizationRequested();

/// The flags as the quantization step's options.
mlir::lmopt::quantization::QuantizeDriverOptions getQuantizeDriverOptions();

/// --quantize-report: where the quantization report goes ('-' for stdout),
/// or "".
const std::string &getQuantizeReportPath();

} // namespace lmopt_compile

#endif // LMOPT_TOOLS_LMOPT_COMPILE_QUANTIZEFLAGS_H
