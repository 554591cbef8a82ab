//===- ReduceLayers.h - A student model from a teacher's layers -*- C++ -*-===//
//
// lmopt-reduce-layers as a library (docs/compression.md, "A student as
// ONNX"): imports an ONNX model, runs the graph pipeline, drops the encoder
// layers lmopt-prune's keep-layers (or layers=N by block importance on
// calibration samples) leaves out, and exports the result as ONNX, weights
// copied, embeddings and head kept.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DRIVER_REDUCELAYERS_H
#define LMOPT_DRIVER_REDUCELAYERS_H

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lmopt {

struct ReduceLayersOptions {
  /// The teacher (.onnx) and the student to write (.onnx).
  std::string inputPath, outputPath;
  /// --keep: the encoder layers to keep, ascending (numbered from 0 in
  /// program order).
  std::vector<int64_t> keep;
  /// --layers: how many layers to keep by block importance, a count or a
  /// fraction in (0, 1) as written; empty without it.
  std::string layers;
  /// --calibration: the samples block importance is measured on.
  std::string calibrationFile;
  /// --external-data: the initializers' file, next to the output.
  std::string externalDataFile;
};

/// Writes the student; prints what was kept (the pruning report) to `log`.
/// Every problem is printed to `log` first and returned as a
/// DiagnosedError; nothing is written then.
llvm::Error reduceLayers(const ReduceLayersOptions &options,
                         llvm::raw_ostream &log);

} // namespace mlir::lmopt

#endif // LMOPT_DRIVER_REDUCELAYERS_H
