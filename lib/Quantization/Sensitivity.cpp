//===- Sensitivity.cpp - Which layers to keep f32 ------------------------===//
//
// `--sensitivity`: each layer quantized alone, ranked by how far it moves
// the outputs from f32, then the fewest worst layers to exclude for the
// outputs to reach the target cosine (docs/quantization.md, "Sensitivity").
//
//===----------------------------------------------------------------------===//

#include "QuantizeSteps.h"

#include "lmopt/Support/DiagnosedError.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;
namespace rt = ::lmopt::runtime;

llvm::Error mlir::lmopt::quantization::searchSensitivity(
    ModelRunner &runner, ModuleOp fp32, ArrayRef<std::string> layers,
    const CalibrationSet &set, const CalibrationStats &table,
    const QuantizeDriverOptions &options, llvm::json::Object &report,
    llvm::raw_ostream &log) {
  double target = options.sensitivityTarget;
  llvm::Expected<std::vector<std::vector<rt::NamedTensor>>> reference =
      runner.run(fp32, set);
  if (!reference)
    return reference.takeError();
  std::vector<std::pair<double, std::string>> damage;
  for (const std::string &layer : layers) {
    OwningOpRef<ModuleOp> variant(fp32.clone());
    std::vector<std::string> exclude = options.exclude;
    for (const std::string &other : layers)
      if (other != layer)
        exclude.push_back(literalGlob(other));
    if (failed(quantize(*variant, options, exclude, table)))
      return makeDiagnosedError();
    llvm::Expected<double> cosine =
        outputCosine(runner, *variant, set, *reference);
    if (!cosine)
      return cosine.takeError();
    damage.emplace_back(*cosine, layer);
  }
  llvm::sort(damage);
  unsigned shown = 10;
  if (!options.sensitivity->empty())
    StringRef(*options.sensitivity).getAsInteger(10, shown);
  log << "sensitivity: output cosine vs f32 with only that layer "
         "quantized (most damaging first):\n";
  llvm::json::Array damageJSON;
  for (auto [i, entry] : llvm::enumerate(damage)) {
    if (i < shown)
      log << llvm::formatv("  {0,9:f6}  {1}\n", entry.first, entry.second);
    damageJSON.push_back(
        llvm::json::Object{{"name", entry.second}, {"cosine", entry.first}});
  }
  report["sensitivity"] = std::move(damageJSON);

  // The fewest worst layers to keep f32: a binary search over k, taking
  // the output cosine as growing with k (it does up to measurement noise;
  // the answer is measured, not assumed). Keeping every layer is exact.
  auto measure = [&](size_t k) -> llvm::Expected<double> {
    if (k == damage.size())
      return 1.0;
    OwningOpRef<ModuleOp> variant(fp32.clone());
    std::vector<std::string> exclude = options.exclude;
    for (size_t i = 0; i < k; ++i)
      exclude.push_back(literalGlob(damage[i].second));
    if (failed(quantize(*variant, options, exclude, table)))
      return llvm::createStringError("quantization failed");
    return outputCosine(runner, *variant, set, *reference);
  };
  size_t low = 0, high = damage.size();
  double reached = 1.0;
  while (low < high) {
    size_t middle = (low + high) / 2;
    llvm::Expected<double> cosine = measure(middle);
    if (!cosine)
      return cosine.takeError();
    if (*cosine >= target) {
      high = middle;
      reached = *cosine;
    } else {
      low = middle + 1;
    }
  }
  std::vector<std::string> suggestion;
  for (size_t i = 0; i < high; ++i)
    suggestion.push_back(literalGlob(damage[i].second));
  if (reached < target)
    log << llvm::formatv("sensitivity: no exclude list reaches cosine {0:f6}\n",
                         target);
  else if (suggestion.empty())
    log << llvm::formatv(
        "sensitivity: all layers quantized already reach cosine {0:f6} >= "
        "{1:f6}; nothing to exclude\n",
        reached, target);
  else
    log << llvm::formatv("sensitivity: --exclude={0} reaches cosine "
                         "{1:f6} (target {2:f6}, {3} of "
                         "{4} layers kept f32)\n",
                         llvm::join(suggestion, ","), reached, target,
                         suggestion.size(), layers.size());
  report["suggested_exclude"] = llvm::json::Array(suggestion);
  report["suggested_cosine"] = reached;
  return llvm::Error::success();
}
