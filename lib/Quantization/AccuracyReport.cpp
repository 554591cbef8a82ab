//===- AccuracyReport.cpp - Quantized against f32, layer by layer ---------===//
//
// The quantized module and the f32 one run side by side on the calibration
// samples, each linear's output probed: per layer and per model output, the
// largest and relative errors and the cosine, worst first.
//
//===----------------------------------------------------------------------===//

#include "QuantizeSteps.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;
namespace rt = ::lmopt::runtime;

llvm::Expected<double> mlir::lmopt::quantization::outputCosine(
    ModelRunner &runner, ModuleOp module, const CalibrationSet &set,
    const std::vector<std::vector<rt::NamedTensor>> &reference) {
  llvm::Expected<std::vector<std::vector<rt::NamedTensor>>> outputs =
      runner.run(module, set);
  if (!outputs)
    return outputs.takeError();
  std::vector<ErrorMeasure> errors(reference.front().size());
  for (size_t s = 0; s < reference.size(); ++s)
    for (size_t o = 0; o < errors.size(); ++o)
      if (reference[s][o].tensor.dtype == rt::DType::F32)
        errors[o].add(floatData(reference[s][o]), floatData((*outputs)[s][o]),
                      reference[s][o].tensor.elementCount());
  double worst = 1.0;
  for (const ErrorMeasure &error : errors)
    worst = std::min(worst, error.cosine());
  return worst;
}

namespace {
/// Layer rows and output rows of the accuracy report.
struct Row {
  std::string name;
  ErrorMeasure error;
};
} // namespace

static void printRows(llvm::raw_ostream &log, llvm::StringRef title,
                      std::vector<Row> &rows) {
  if (rows.empty()) {
    log << "  (no " << title << ")\n";
    return;
  }
  llvm::sort(rows, [](const Row &a, const Row &b) {
    return a.error.cosine() < b.error.cosine();
  });
  size_t width = title.size();
  for (const Row &row : rows)
    width = std::max(width, row.name.size());
  auto padded = [&](llvm::StringRef text) {
    return text.str() + std::string(width - text.size(), ' ');
  };
  log << llvm::formatv("  {0}  {1,12}  {2,10}  {3,9}\n", padded(title),
                       "max abs err", "rel err", "cosine");
  for (const Row &row : rows)
    log << llvm::formatv("  {0}  {1,12:e3}  {2,10:e3}  {3,9:f6}\n",
                         padded(row.name), row.error.maxAbsError(),
                         row.error.relativeError(), row.error.cosine());
}

static llvm::json::Array rowsToJSON(const std::vector<Row> &rows) {
  llvm::json::Array array;
  for (const Row &row : rows)
    array.push_back(
        llvm::json::Object{{"name", row.name},
                           {"max_abs_error", row.error.maxAbsError()},
                           {"relative_error", row.error.relativeError()},
                           {"cosine", row.error.cosine()}});
  return array;
}

llvm::Error mlir::lmopt::quantization::reportAccuracy(
    ModelRunner &runner, ModuleOp fp32, ModuleOp quantized,
    const CalibrationSet &set, llvm::json::Object &report,
    llvm::raw_ostream &log) {
  ProbeLayout fp32Layout, quantizedLayout;
  OwningOpRef<ModuleOp> fp32Probed =
      addLinearProbes(fp32, false, true, fp32Layout);
  OwningOpRef<ModuleOp> quantizedProbed =
      addLinearProbes(quantized, false, true, quantizedLayout);
  // The quantize pass keeps the linears and their order.
  std::vector<std::pair<std::string, bool>> weights =
      getQuantizedLinears(quantized);
  if (weights.size() != fp32Layout.linears.size())
    return llvm::createStringError(
        "the quantized model has " + llvm::Twine(weights.size()) +
        " linears, the f32 one " + llvm::Twine(fp32Layout.linears.size()));
  std::vector<Row> layers, outputs;
  std::vector<std::pair<int, int>> layerSlots;
  for (auto [i, linear] : llvm::enumerate(quantizedLayout.linears)) {
    int reference = fp32Layout.linears[i].output;
    if (!weights[i].second || linear.output < 0 || reference < 0)
      continue;
    layers.push_back({linear.name, {}});
    layerSlots.emplace_back(reference, linear.output);
  }
  std::vector<unsigned> outputSlots;
  auto add = [](ErrorMeasure &error, const rt::NamedTensor &expected,
                const rt::NamedTensor &actual) {
    error.add(floatData(expected), floatData(actual),
              expected.tensor.elementCount());
  };
  llvm::Error error = runner.runEach(
      {*fp32Probed, *quantizedProbed}, set,
      [&](size_t sample, ArrayRef<std::vector<rt::NamedTensor>> results) {
        const std::vector<rt::NamedTensor> &expected = results[0];
        const std::vector<rt::NamedTensor> &actual = results[1];
        if (sample == 0)
          for (unsigned o = 0; o < fp32Layout.numModelOutputs; ++o)
            if (expected[o].tensor.dtype == rt::DType::F32) {
              outputs.push_back({expected[o].name, {}});
              outputSlots.push_back(o);
            }
        for (auto [row, slots] : llvm::zip(layers, layerSlots))
          add(row.error, expected[slots.first], actual[slots.second]);
        for (auto [row, o] : llvm::zip(outputs, outputSlots))
          add(row.error, expected[o], actual[o]);
      });
  if (error)
    return error;
  log << "accuracy against f32 on " << set.samples.size()
      << " calibration samples (worst first):\n";
  printRows(log, "layer", layers);
  printRows(log, "output", outputs);
  report["layers"] = rowsToJSON(layers);
  report["outputs"] = rowsToJSON(outputs);
  return llvm::Error::success();
}
