//===- BlockImportance.h - Encoder layer importance for pruning -*- C++ -*-===//
//
// The block importance lmopt-prune's `layers=N` ranks encoder layers by
// (PruneImportance.h), measured on calibration samples through the target
// (ModelRunner.h). lmopt-compile's calibration step and lmopt-reduce-layers
// call it.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_QUANTIZATION_BLOCKIMPORTANCE_H
#define LMOPT_QUANTIZATION_BLOCKIMPORTANCE_H

#include "lmopt/Quantization/Calibration.h"
#include "lmopt/Quantization/ModelRunner.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::lmopt::quantization {

/// Runs `module` (static shapes) with each post-norm encoder layer's input
/// and output exposed on every sample of `set` and attaches to each layer's
/// attention its block importance (1 - mean cosine between the two over
/// the text tokens) as `lmopt.block_importance`; prints a summary.
llvm::Error measureBlockImportance(ModelRunner &runner, ModuleOp module,
                                   const CalibrationSet &set,
                                   llvm::raw_ostream &log);

} // namespace mlir::lmopt::quantization

#endif // LMOPT_QUANTIZATION_BLOCKIMPORTANCE_H
