//===- ExportOnnx.h - trained weights into the source ONNX model -*- C++ -*-===//

#ifndef LMOPT_TRAINING_EXPORTONNX_H
#define LMOPT_TRAINING_EXPORTONNX_H

#include "lmopt/Format/Npy.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace lmopt::training {

/// Writes `outPath` (atomically): the ONNX model at `sourcePath` with each
/// initializer named like one of `parameters` holding its value. With
/// `newShapes` (an FFN-pruned student's smaller matrices) an initializer
/// may take the parameter's dims, and the graph's value_info (intermediate
/// shapes the exporter recorded, now stale) is dropped. Fails, naming it,
/// on a parameter no f32 initializer of that name (and, without
/// `newShapes`, shape) holds, an initializer stored as external data, or a
/// file that is not an ONNX model.
llvm::Error
exportTrainedOnnx(const std::string &sourcePath, const std::string &outPath,
                  const std::vector<::lmopt::runtime::NamedTensor> &parameters,
                  bool newShapes = false);

/// An input of the inference bundle: its name, dims (-1 where symbolic)
/// and the dims at the symbols' bounds.
struct BundleInput {
  std::string name;
  std::vector<int64_t> dims, maxDims;
};

/// Compiles `onnxPath` into the inference bundle `outPath` with
/// `compiler` (lmopt-compile), each input pinned to its static dims or
/// bounded by its dims' bounds, as the training bundle's eval entry takes
/// them. Fails, with lmopt-compile's status, when it cannot run or fails.
llvm::Error compileInferenceBundle(const std::string &compiler,
                                   const std::string &onnxPath,
                                   const std::string &outPath,
                                   const std::vector<BundleInput> &inputs);

} // namespace lmopt::training

#endif // LMOPT_TRAINING_EXPORTONNX_H
