//===- BlockImportance.cpp - Encoder layer importance for pruning ---------===//
//
// lmopt-prune's `layers=N` keeps the encoder layers that change their
// input most: ShortGPT's Block Influence, 1 - the mean over calibration
// tokens of the cosine between a layer's input and output hidden states
// (docs/compression.md, "Layer selection"). The module runs with every
// layer's input and the last one's output exposed
// (lmopt-expose-intermediates hidden-states); padding that an
// `attention_mask` input masks out does not count.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Quantization/BlockImportance.h"

#include "QuantizeSteps.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;
namespace rt = ::lmopt::runtime;

/// Adds, per row of `input` and `output` ([rows, width]) that `keep` (when
/// given) keeps, the cosine of the two rows to `sum`; returns the rows
/// counted. A zero row has cosine 0 with anything.
static int64_t addCosines(const rt::Tensor &input, const rt::Tensor &output,
                          const std::vector<bool> *keep, double &sum) {
  int64_t width = int64_t(input.shape.back());
  int64_t rows = int64_t(input.elementCount()) / width;
  const float *a = input.as<float>(), *b = output.as<float>();
  int64_t counted = 0;
  for (int64_t t = 0; t < rows; ++t) {
    if (keep && !(*keep)[t])
      continue;
    double dot = 0.0, na = 0.0, nb = 0.0;
    for (int64_t j = 0; j < width; ++j) {
      double x = a[t * width + j], y = b[t * width + j];
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
    double norms = std::sqrt(na) * std::sqrt(nb);
    sum += norms > 0.0 ? dot / norms : 0.0;
    ++counted;
  }
  return counted;
}

llvm::Error mlir::lmopt::quantization::measureBlockImportance(
    ModelRunner &runner, ModuleOp module, const CalibrationSet &set,
    llvm::raw_ostream &log) {
  auto start = std::chrono::steady_clock::now();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  SmallVector<AttentionOp> attentions;
  main.walk([&](AttentionOp attention) { attentions.push_back(attention); });
  unsigned numOutputs = main.getNumResults();
  OwningOpRef<ModuleOp> probed(module.clone());
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  ExposeIntermediatesPassOptions expose;
  expose.hiddenStates = true;
  pm.addPass(createExposeIntermediatesPass(expose));
  if (failed(pm.run(*probed)))
    return llvm::createStringError(
        "--prune layers=N measures each encoder layer's block importance "
        "from its hidden states, which the model does not expose (above)");
  size_t numLayers = attentions.size();
  std::vector<double> sums(numLayers, 0.0);
  std::vector<int64_t> tokens(numLayers, 0);
  bool shapesAgree = true;
  llvm::Error error = runner.runEach(
      {*probed}, set,
      [&](size_t sample, ArrayRef<std::vector<rt::NamedTensor>> results) {
        std::optional<std::vector<bool>> keep =
            calibrationTokenMask(set, sample);
        for (size_t layer = 0; layer < numLayers; ++layer) {
          const rt::Tensor &in = results[0][numOutputs + layer].tensor;
          const rt::Tensor &out = results[0][numOutputs + layer + 1].tensor;
          if (in.dtype != rt::DType::F32 || out.dtype != rt::DType::F32 ||
              in.shape != out.shape || in.shape.empty() ||
              in.shape.back() == 0) {
            shapesAgree = false;
            continue;
          }
          int64_t rows = int64_t(in.elementCount() / in.shape.back());
          bool masked =
              keep && in.shape.size() == 3 && int64_t(keep->size()) == rows;
          tokens[layer] +=
              addCosines(in, out, masked ? &*keep : nullptr, sums[layer]);
        }
      });
  if (error)
    return error;
  if (!shapesAgree)
    return llvm::createStringError(
        "--prune layers=N: an encoder layer's input and output hidden "
        "states are not f32 tensors of one shape");
  for (auto [layer, attention] : llvm::enumerate(attentions)) {
    if (tokens[layer] == 0)
      return llvm::createStringError(
          "--prune layers=N: the calibration samples have no unmasked "
          "token to measure layer " +
          std::to_string(layer) + " on");
    double importance = 1.0 - sums[layer] / double(tokens[layer]);
    attention->setAttr(
        kBlockImportanceAttr,
        FloatAttr::get(Float64Type::get(module.getContext()), importance));
  }
  log << llvm::formatv(
      "calibration: {0} samples, block importance of {1} encoder layers "
      "for pruning ({2:f1} s)\n",
      set.samples.size(), numLayers,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return llvm::Error::success();
}
