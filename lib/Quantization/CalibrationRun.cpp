//===- CalibrationRun.cpp - Ranges and Hessians from the samples ----------===//
//
// The module runs on the calibration samples with every linear's input
// probed: the observers give each input's range (int8-static), and for GPTQ
// each input's second moments H = X^T X over its rows (int4-weight).
//
//===----------------------------------------------------------------------===//

#include "QuantizeSteps.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;
namespace rt = ::lmopt::runtime;

/// Adds one sample's probed linear inputs to their Hessians, one per probed
/// input (the rows: the input's elements over its last dim, K).
static void
accumulateHessians(const ProbeLayout &layout, ArrayRef<rt::NamedTensor> results,
                   std::map<int, std::shared_ptr<Hessian>> &hessians) {
  std::set<int> inputs;
  for (const ProbeLayout::Linear &linear : layout.linears)
    if (linear.input >= 0)
      inputs.insert(linear.input);
  for (int input : inputs) {
    const rt::Tensor &tensor = results[input].tensor;
    if (tensor.dtype != rt::DType::F32 || tensor.shape.empty() ||
        tensor.shape.back() == 0)
      continue;
    int64_t k = tensor.shape.back();
    std::shared_ptr<Hessian> &hessian = hessians[input];
    if (!hessian)
      hessian = std::make_shared<Hessian>(k);
    hessian->add(tensor.as<float>(), int64_t(tensor.elementCount()) / k);
  }
}

/// The Hessians by layer name; linears of one name (rare) on different
/// inputs of the same width share the sum, as their ranges join.
static llvm::StringMap<std::shared_ptr<const Hessian>>
hessiansByName(const ProbeLayout &layout,
               const std::map<int, std::shared_ptr<Hessian>> &hessians) {
  llvm::StringMap<std::vector<int>> inputsByName;
  for (const ProbeLayout::Linear &linear : layout.linears) {
    std::vector<int> &inputs = inputsByName[linear.name];
    if (hessians.count(linear.input) &&
        !llvm::is_contained(inputs, linear.input))
      inputs.push_back(linear.input);
  }
  llvm::StringMap<std::shared_ptr<const Hessian>> byName;
  for (const auto &[name, inputs] : inputsByName) {
    if (inputs.empty())
      continue;
    std::shared_ptr<Hessian> first = hessians.at(inputs.front());
    if (inputs.size() == 1) {
      byName[name] = first;
      continue;
    }
    auto sum = std::make_shared<Hessian>(*first);
    bool sameWidth = true;
    for (int input : llvm::ArrayRef(inputs).drop_front()) {
      const Hessian &other = *hessians.at(input);
      sameWidth &= other.size() == sum->size();
      if (sameWidth)
        sum->add(other);
    }
    if (sameWidth) // else no entry: the pass names the layer
      byName[name] = std::move(sum);
  }
  return byName;
}

llvm::Expected<CalibrationStats> mlir::lmopt::quantization::calibrate(
    ModelRunner &runner, ModuleOp module, const CalibrationSet &set,
    const CalibrationMethod &method, bool gptq, StringRef tableOut,
    llvm::raw_ostream &log) {
  CalibrationStats stats;
  auto start = std::chrono::steady_clock::now();
  ProbeLayout layout;
  OwningOpRef<ModuleOp> probed = addLinearProbes(module, true, false, layout);
  // Linears of one name (rare) share an entry: their ranges join.
  std::map<std::string, RangeObserver> observers;
  // One Hessian per probed input, so that linears sharing it share one.
  std::map<int, std::shared_ptr<Hessian>> inputHessians;
  llvm::Error error = runner.runEach(
      {*probed}, set,
      [&](size_t, ArrayRef<std::vector<rt::NamedTensor>> results) {
        for (const ProbeLayout::Linear &linear : layout.linears) {
          RangeObserver &observer = observers[linear.name];
          if (linear.input >= 0)
            observer.observe(floatData(results[0][linear.input]),
                             results[0][linear.input].tensor.elementCount());
        }
        if (gptq)
          accumulateHessians(layout, results[0], inputHessians);
      });
  if (error)
    return std::move(error);
  if (gptq)
    stats.hessians = hessiansByName(layout, inputHessians);
  for (const auto &[name, observer] : observers) {
    if (observer.empty())
      continue;
    auto [lo, hi] = observer.range(method);
    stats.ranges[name] = {lo, hi};
  }
  if (!tableOut.empty()) {
    std::string message;
    std::unique_ptr<llvm::ToolOutputFile> file =
        mlir::openOutputFile(tableOut, &message);
    if (!file)
      return llvm::createStringError("cannot write the calibration table: " +
                                     message);
    file->os() << llvm::formatv("{0:2}",
                                buildCalibrationTable(observers, method,
                                                      set.samples.size()))
               << "\n";
    file->keep();
  }
  log << llvm::formatv(
      "calibration: {0} samples, {1} linears, method {2} ({3:f1} s)\n",
      set.samples.size(), layout.linears.size(), method.str(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return std::move(stats);
}
