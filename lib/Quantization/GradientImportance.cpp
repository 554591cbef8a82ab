//===- GradientImportance.cpp - Unit importance from loss gradients -------===//
//
// lmopt-prune's `gradient` criterion (PruneImportance.h): a unit's
// importance is the sum over the labelled calibration samples of |dL/dm|,
// m a mask of ones on the unit (Michel et al., "Are Sixteen Heads Really
// Better than One?", for heads; the same mask on an FFN neuron's
// activation). With x the input of the linear that reads the unit and g
// the loss's gradient with respect to x, dL/dm_k = sum_t x_tk g_tk for a
// feature k and the sum over the head's features for a head. The module
// gets the training loss (TrainingEntries.h, appendModelLoss), its
// backward pass (buildGradients) and, per probed linear input, the [K]
// vector of those sums as a result; the target runs it like any
// calibration module.
//
//===----------------------------------------------------------------------===//

#include "QuantizeSteps.h"

#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"
#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"
#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"
#include "lmopt/Support/DiagnosedError.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;
namespace rt = ::lmopt::runtime;

namespace {

/// A linear input whose features (or heads) the criterion scores.
struct MaskProbe {
  Value input;
  /// The attention's head count when an attention makes the input, else 0.
  int64_t heads = 0;
  /// Indices (program order) of the linears that read it.
  SmallVector<size_t> linears;
  /// Per feature k, and per head, the sum over samples of |dL/dm|.
  std::vector<double> features, headScores;
};

} // namespace

/// The inputs lmopt-prune cuts units of: each linear's f32 input that an
/// attention (heads) or another linear (FFN neurons) makes, with a static
/// last dim.
static std::vector<MaskProbe>
findMaskProbes(MutableArrayRef<LinearOp> linears) {
  std::vector<MaskProbe> probes;
  llvm::DenseMap<Value, size_t> index;
  for (auto [i, linear] : llvm::enumerate(linears)) {
    Value input = linear.getInput();
    Operation *producer = input.getDefiningOp();
    auto type = llvm::dyn_cast<RankedTensorType>(input.getType());
    if (!llvm::isa_and_nonnull<AttentionOp, LinearOp>(producer) || !type ||
        !type.getElementType().isF32() || type.getRank() < 2 ||
        ShapedType::isDynamic(type.getShape().back()))
      continue;
    auto [it, inserted] = index.try_emplace(input, probes.size());
    if (inserted) {
      MaskProbe probe;
      probe.input = input;
      int64_t width = type.getShape().back();
      if (auto attention = llvm::dyn_cast<AttentionOp>(producer))
        if (width % attention.getNumHeads() == 0)
          probe.heads = attention.getNumHeads();
      probe.features.assign(width, 0.0);
      probe.headScores.assign(probe.heads, 0.0);
      probes.push_back(std::move(probe));
    }
    probes[it->second].linears.push_back(i);
  }
  return probes;
}

/// Makes `main` return the loss, then per probe sum over all but the last
/// dim of x * dL/dx.
static LogicalResult buildMaskGradients(func::FuncOp main,
                                        ArrayRef<MaskProbe> probes,
                                        const TrainingOptions &lossOptions) {
  FailureOr<Value> loss = appendModelLoss(main, lossOptions);
  if (failed(loss))
    return failure();
  SmallVector<Value> inputs;
  for (const MaskProbe &probe : probes)
    inputs.push_back(probe.input);
  FailureOr<SmallVector<Value>> grads = buildGradients(main, *loss, inputs);
  if (failed(grads))
    return failure();
  Block &block = main.getBody().front();
  Operation *ret = block.getTerminator();
  OpBuilder b(ret);
  SmallVector<Value> results{*loss};
  SmallVector<Attribute> names{b.getStringAttr("loss")};
  for (auto [i, probe] : llvm::enumerate(probes)) {
    Value x = probe.input, g = (*grads)[i];
    auto type = llvm::cast<RankedTensorType>(x.getType());
    Value product = MulOp::create(b, x.getLoc(), type, x, g);
    auto axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank() - 1));
    results.push_back(ReduceSumOp::create(
        b, x.getLoc(),
        RankedTensorType::get({type.getShape().back()}, type.getElementType()),
        product, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false)));
    names.push_back(b.getStringAttr("mask_grad" + std::to_string(i)));
  }
  ret->setOperands(results);
  main.setFunctionType(FunctionType::get(main.getContext(),
                                         main.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  main.removeResAttrsAttr();
  main->setAttr(kGraphOutputNamesAttr, b.getArrayAttr(names));
  eraseDeadOps(block);
  return success();
}

/// `linear`'s activation statistics with `key` set to `values`.
static void setStat(LinearOp linear, StringRef key, ArrayRef<double> values) {
  MLIRContext *context = linear.getContext();
  NamedAttrList stats;
  if (auto old = linear->getAttrOfType<DictionaryAttr>(kActivationStatsAttr))
    stats.append(old.getValue());
  SmallVector<float> narrowed(values.begin(), values.end());
  stats.set(key, DenseF32ArrayAttr::get(context, narrowed));
  linear->setAttr(kActivationStatsAttr, stats.getDictionary(context));
}

llvm::Error mlir::lmopt::quantization::measureGradientImportance(
    ModelRunner &runner, ModuleOp module, StringRef calibrationFile,
    const TrainingOptions &lossOptions, llvm::raw_ostream &log,
    std::optional<CalibrationSet> &unlabelled) {
  auto start = std::chrono::steady_clock::now();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  SmallVector<LinearOp> linears;
  main.walk([&](LinearOp linear) { linears.push_back(linear); });

  OwningOpRef<ModuleOp> probed(module.clone());
  auto probedMain = probed->lookupSymbol<func::FuncOp>("main");
  SmallVector<LinearOp> probedLinears;
  probedMain.walk([&](LinearOp linear) { probedLinears.push_back(linear); });
  std::vector<MaskProbe> probes = findMaskProbes(probedLinears);
  if (probes.empty())
    return llvm::createStringError(
        "--prune criterion=gradient: no linear reads an attention's output "
        "or another linear's, so there is no head or FFN neuron to rank");
  unsigned numModelInputs = probedMain.getNumArguments();
  if (failed(buildMaskGradients(probedMain, probes, lossOptions)))
    return makeDiagnosedError();

  llvm::Expected<CalibrationSet> set =
      loadCalibrationSet(calibrationFile, probedMain);
  if (!set) {
    std::string message = llvm::toString(set.takeError());
    if (llvm::StringRef(message).contains("'" + lossOptions.labels + "'"))
      message += " (--prune criterion=gradient reads the loss's labels '" +
                 lossOptions.labels + "' from the calibration samples)";
    return llvm::createStringError(message);
  }

  double lossSum = 0.0;
  std::optional<size_t> badSample;
  llvm::Error error = runner.runEach(
      {*probed}, *set,
      [&](size_t sample, ArrayRef<std::vector<rt::NamedTensor>> results) {
        const std::vector<rt::NamedTensor> &outputs = results[0];
        float loss = outputs[0].tensor.as<float>()[0];
        if (!std::isfinite(loss) && !badSample)
          badSample = sample;
        lossSum += loss;
        for (auto [i, probe] : llvm::enumerate(probes)) {
          const rt::Tensor &sums = outputs[1 + i].tensor;
          const float *s = sums.as<float>();
          int64_t width = int64_t(probe.features.size());
          for (int64_t k = 0; k < width; ++k)
            probe.features[k] += std::fabs(double(s[k]));
          int64_t headDim = probe.heads ? width / probe.heads : 0;
          for (int64_t h = 0; h < probe.heads; ++h) {
            double head = 0.0;
            for (int64_t k = h * headDim; k < (h + 1) * headDim; ++k)
              head += s[k];
            probe.headScores[h] += std::fabs(head);
          }
        }
      });
  if (error)
    return error;
  if (badSample)
    return llvm::createStringError(
        llvm::formatv("--prune criterion=gradient: the loss of calibration "
                      "sample {0} is not finite; check its labels",
                      *badSample)
            .str());

  unsigned measured = 0;
  for (const MaskProbe &probe : probes)
    for (size_t i : probe.linears) {
      setStat(linears[i], kStatsGradFeature, probe.features);
      if (probe.heads)
        setStat(linears[i], kStatsGradHead, probe.headScores);
      ++measured;
    }
  log << llvm::formatv(
      "calibration: {0} samples, loss gradients of {1} linears' input "
      "masks for pruning (mean loss {2:f6}, {3:f1} s)\n",
      set->samples.size(), measured, lossSum / double(set->samples.size()),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());

  // The same samples without the labels, for the other measurements.
  CalibrationSet rest;
  for (auto [i, name] : llvm::enumerate(set->inputNames))
    if (i < numModelInputs)
      rest.inputNames.push_back(name);
  for (std::vector<rt::NamedTensor> &sample : set->samples) {
    std::vector<rt::NamedTensor> kept;
    for (rt::NamedTensor &tensor : sample)
      if (tensor.name != lossOptions.labels)
        kept.push_back(std::move(tensor));
    rest.samples.push_back(std::move(kept));
  }
  unlabelled = std::move(rest);
  return llvm::Error::success();
}
