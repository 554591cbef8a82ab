//===- ActivationStats.cpp - Linear input statistics for pruning ----------===//
//
// lmopt-prune's `wanda` and `activation` criteria rank units by what the
// calibration samples make of each linear's input (PruneImportance.h). The
// module runs with every linear's input probed; per input feature k the
// L2 norm over all tokens and the mean magnitude, and for the output
// projection of an attention the mean over tokens of each head's L2 norm.
// With an `attention_mask` input, padded tokens are left out.
//
//===----------------------------------------------------------------------===//

#include "QuantizeSteps.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;
namespace rt = ::lmopt::runtime;

namespace {
/// The sums over one probed input's tokens.
struct InputSums {
  std::vector<double> squares, magnitudes, headNorms;
  int64_t tokens = 0;
  int64_t heads = 0;

  /// Adds the `rows` rows of `data` for which `keep` (when given) is set.
  void add(const float *data, int64_t rows, int64_t k,
           const std::vector<bool> *keep) {
    if (squares.empty()) {
      squares.assign(k, 0.0);
      magnitudes.assign(k, 0.0);
      headNorms.assign(heads, 0.0);
    }
    int64_t headDim = heads ? k / heads : 0;
    for (int64_t t = 0; t < rows; ++t) {
      if (keep && !(*keep)[t])
        continue;
      ++tokens;
      const float *row = data + t * k;
      for (int64_t j = 0; j < k; ++j) {
        double x = row[j];
        squares[j] += x * x;
        magnitudes[j] += std::fabs(x);
      }
      for (int64_t h = 0; h < heads; ++h) {
        double norm = 0.0;
        for (int64_t d = h * headDim; d < (h + 1) * headDim; ++d)
          norm += double(row[d]) * row[d];
        headNorms[h] += std::sqrt(norm);
      }
    }
  }

  DictionaryAttr toAttr(MLIRContext *context) const {
    SmallVector<float> l2, absMean, headMean;
    for (double sum : squares)
      l2.push_back(float(std::sqrt(sum)));
    for (double sum : magnitudes)
      absMean.push_back(float(sum / double(tokens)));
    for (double sum : headNorms)
      headMean.push_back(float(sum / double(tokens)));
    Builder builder(context);
    SmallVector<NamedAttribute> entries{
        builder.getNamedAttr(kStatsL2, builder.getDenseF32ArrayAttr(l2)),
        builder.getNamedAttr(kStatsAbsMean,
                             builder.getDenseF32ArrayAttr(absMean))};
    if (heads)
      entries.push_back(builder.getNamedAttr(
          kStatsHeadL2Mean, builder.getDenseF32ArrayAttr(headMean)));
    return builder.getDictionaryAttr(entries);
  }
};
} // namespace

std::optional<std::vector<bool>>
mlir::lmopt::quantization::calibrationTokenMask(const CalibrationSet &set,
                                                size_t sample) {
  // Padding is not text: with an `attention_mask` input of [batch, seq],
  // the tokens it masks out do not count.
  auto maskIndex = llvm::find(set.inputNames, "attention_mask");
  if (maskIndex == set.inputNames.end())
    return std::nullopt;
  const rt::Tensor &mask =
      set.samples[sample][maskIndex - set.inputNames.begin()].tensor;
  if (mask.shape.size() != 2)
    return std::nullopt;
  std::vector<bool> keep(mask.elementCount());
  for (size_t i = 0; i < keep.size(); ++i) {
    if (mask.dtype == rt::DType::I64)
      keep[i] = mask.as<int64_t>()[i] != 0;
    else if (mask.dtype == rt::DType::I32)
      keep[i] = mask.as<int32_t>()[i] != 0;
    else
      return std::nullopt;
  }
  return keep;
}

llvm::Error mlir::lmopt::quantization::measureActivationStats(
    ModelRunner &runner, ModuleOp module, const CalibrationSet &set,
    llvm::raw_ostream &log) {
  auto start = std::chrono::steady_clock::now();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  SmallVector<LinearOp> linears;
  main.walk([&](LinearOp linear) { linears.push_back(linear); });
  ProbeLayout layout;
  OwningOpRef<ModuleOp> probed = addLinearProbes(module, true, false, layout);
  // One entry per probed input; linears reading one value share it.
  std::map<int, InputSums> sums;
  for (auto [linear, probe] : llvm::zip_equal(linears, layout.linears)) {
    if (probe.input < 0)
      continue;
    InputSums &entry = sums[probe.input];
    auto type = llvm::cast<ShapedType>(linear.getInput().getType());
    if (auto attention = linear.getInput().getDefiningOp<AttentionOp>())
      if (type.getDimSize(type.getRank() - 1) % attention.getNumHeads() == 0)
        entry.heads = attention.getNumHeads();
  }
  llvm::Error error = runner.runEach(
      {*probed}, set,
      [&](size_t sample, ArrayRef<std::vector<rt::NamedTensor>> results) {
        std::optional<std::vector<bool>> keep =
            calibrationTokenMask(set, sample);
        for (auto &[input, entry] : sums) {
          const rt::Tensor &tensor = results[0][input].tensor;
          if (tensor.dtype != rt::DType::F32 || tensor.shape.empty() ||
              tensor.shape.back() == 0)
            continue;
          int64_t k = tensor.shape.back();
          int64_t rows = int64_t(tensor.elementCount()) / k;
          // Rows that are the mask's tokens, in order ([batch, seq, k]).
          bool masked = keep && tensor.shape.size() == 3 &&
                        int64_t(keep->size()) == rows;
          entry.add(tensor.as<float>(), rows, k, masked ? &*keep : nullptr);
        }
      });
  if (error)
    return error;
  int64_t measured = 0;
  for (auto [linear, probe] : llvm::zip_equal(linears, layout.linears)) {
    auto found = sums.find(probe.input);
    if (found == sums.end() || found->second.tokens == 0)
      continue;
    linear->setAttr(kActivationStatsAttr,
                    found->second.toAttr(module.getContext()));
    ++measured;
  }
  log << llvm::formatv(
      "calibration: {0} samples, activation statistics of {1} linears for "
      "pruning ({2:f1} s)\n",
      set.samples.size(), measured,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return llvm::Error::success();
}
