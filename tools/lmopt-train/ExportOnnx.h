//===- ExportOnnx.h - trained weights into the source ONNX model -*- C++ -*-===//

#ifndef LMOPT_TOOLS_LMOPT_TRAIN_EXPORTONNX_H
#define LMOPT_TOOLS_LMOPT_TRAIN_EXPORTONNX_H

#include "lmopt/Format/Npy.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

/// Writes `outPath` (atomically): the ONNX model at `sourcePath` with each
/// initializer named like one of `parameters` holding its value. Fails,
/// naming it, on a parameter no f32 initializer of that name and shape
/// holds, an initializer stored as external data, or a file that is not
/// an ONNX model.
llvm::Error
exportTrainedOnnx(const std::string &sourcePath, const std::string &outPath,
                  const std::vector<lmopt::runtime::NamedTensor> &parameters);

#endif // LMOPT_TOOLS_LMOPT_TRAIN_EXPORTONNX_H
