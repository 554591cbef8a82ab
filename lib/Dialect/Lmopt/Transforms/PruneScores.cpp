//===- PruneScores.cpp - How lmopt-prune ranks units ----------------------===//
//
// With the [K, N] view of each weight, X a linear's input over the
// calibration tokens and ||X_k|| the L2 norm of its feature k:
//
//   magnitude   neuron j: sum_k W1[k,j]^2 + sum_n W2[j,n]^2
//               head h:   sum over its Q, K, V columns c of W[k,c]^2
//                         + sum over its rows d of Wo[d,n]^2
//   wanda       neuron j: sum_k |W1[k,j]| ||X_k|| + ||A_j|| sum_n |W2[j,n]|
//               (A the down projection's input); head h: sum_c sum_k
//               |W[k,c]| ||X_k|| + sum_d ||O_d|| sum_n |Wo[d,n]|
//               (O the output projection's input)
//   activation  neuron j: mean_t |A_tj|; head h: mean_t ||O_t,h||_2
//   gradient    neuron j: sum over samples of |dL/dm_j|, m_j a mask on A_j;
//               head h: the same with a mask on O_h (Michel et al.)
//
// Wanda's |W| ||X|| per weight, summed over the weights that go with the
// unit; Minitron's activation-based importance with the mean over tokens.
//
//===----------------------------------------------------------------------===//

#include "PruneScores.h"

#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"
#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::prune;

std::optional<Criterion> prune::parseCriterion(StringRef name) {
  return llvm::StringSwitch<std::optional<Criterion>>(name)
      .Case("magnitude", Criterion::Magnitude)
      .Case("wanda", Criterion::Wanda)
      .Case("activation", Criterion::Activation)
      .Case("gradient", Criterion::Gradient)
      .Default(std::nullopt);
}

static StringRef criterionName(Criterion criterion) {
  switch (criterion) {
  case Criterion::Magnitude:
    return "magnitude";
  case Criterion::Wanda:
    return "wanda";
  case Criterion::Activation:
    return "activation";
  case Criterion::Gradient:
    return "gradient";
  }
  llvm_unreachable("unknown criterion");
}

FailureOr<ArrayRef<float>> prune::readInputStats(LinearOp linear, StringRef key,
                                                 int64_t size,
                                                 Criterion criterion) {
  auto stats = linear->getAttrOfType<DictionaryAttr>(kActivationStatsAttr);
  auto values = stats ? stats.getAs<DenseF32ArrayAttr>(key) : nullptr;
  if (!values)
    return linear.emitError()
           << "lmopt-prune: criterion=" << criterionName(criterion)
           << " reads calibration statistics, and linear '"
           << getLayerName(linear) << "' has no " << kActivationStatsAttr
           << " '" << key << "' (lmopt-compile measures them with --calibration"
           << (criterion == Criterion::Gradient ? " samples that hold labels"
                                                : "")
           << ")";
  if (int64_t(values.size()) != size)
    return linear.emitError()
           << "lmopt-prune: linear '" << getLayerName(linear) << "': "
           << kActivationStatsAttr << " '" << key << "' has "
           << values.size() << " entries; its input has " << size;
  return values.asArrayRef();
}

/// sum_k |W[k, n]| l2[k]: Wanda's score of the weights of output n.
static double wandaColumn(const Matrix &w, int64_t n, ArrayRef<float> l2) {
  double sum = 0.0;
  for (int64_t k = 0; k < w.inWidth(); ++k)
    sum += std::fabs(double(w.at(k, n))) * l2[k];
  return sum;
}

/// l2[k] sum_n |W[k, n]|: Wanda's score of the weights of input k.
static double wandaRow(const Matrix &w, int64_t k, ArrayRef<float> l2) {
  double sum = 0.0;
  for (int64_t n = 0; n < w.outWidth(); ++n)
    sum += std::fabs(double(w.at(k, n)));
  return sum * l2[k];
}

FailureOr<SmallVector<double>>
prune::scoreNeurons(Criterion criterion, LinearOp up, LinearOp down,
                    const Matrix &w1, const Matrix &w2, int64_t width) {
  SmallVector<double> scores(width, 0.0);
  switch (criterion) {
  case Criterion::Magnitude:
    for (int64_t j = 0; j < width; ++j) {
      for (int64_t k = 0; k < w1.inWidth(); ++k)
        scores[j] += double(w1.at(k, j)) * w1.at(k, j);
      for (int64_t n = 0; n < w2.outWidth(); ++n)
        scores[j] += double(w2.at(j, n)) * w2.at(j, n);
    }
    return scores;
  case Criterion::Wanda: {
    FailureOr<ArrayRef<float>> in =
        readInputStats(up, kStatsL2, w1.inWidth(), criterion);
    if (failed(in))
      return failure();
    FailureOr<ArrayRef<float>> mid =
        readInputStats(down, kStatsL2, width, criterion);
    if (failed(mid))
      return failure();
    for (int64_t j = 0; j < width; ++j)
      scores[j] = wandaColumn(w1, j, *in) + wandaRow(w2, j, *mid);
    return scores;
  }
  case Criterion::Activation:
  case Criterion::Gradient: {
    // The statistic is the neuron's score.
    FailureOr<ArrayRef<float>> mid = readInputStats(
        down,
        criterion == Criterion::Activation ? kStatsAbsMean : kStatsGradFeature,
        width, criterion);
    if (failed(mid))
      return failure();
    for (int64_t j = 0; j < width; ++j)
      scores[j] = (*mid)[j];
    return scores;
  }
  }
  llvm_unreachable("unknown criterion");
}

FailureOr<SmallVector<double>>
prune::scoreHeads(Criterion criterion, LinearOp qkv, LinearOp out,
                  const Matrix &wqkv, const Matrix &wo, int64_t numHeads,
                  int64_t hidden) {
  int64_t headDim = hidden / numHeads;
  SmallVector<double> scores(numHeads, 0.0);
  switch (criterion) {
  case Criterion::Magnitude:
    for (int64_t h = 0; h < numHeads; ++h)
      for (int64_t d = h * headDim; d < (h + 1) * headDim; ++d) {
        for (int64_t part = 0; part < 3; ++part)
          for (int64_t k = 0; k < wqkv.inWidth(); ++k) {
            double x = wqkv.at(k, part * hidden + d);
            scores[h] += x * x;
          }
        for (int64_t n = 0; n < wo.outWidth(); ++n)
          scores[h] += double(wo.at(d, n)) * wo.at(d, n);
      }
    return scores;
  case Criterion::Wanda: {
    FailureOr<ArrayRef<float>> in =
        readInputStats(qkv, kStatsL2, wqkv.inWidth(), criterion);
    if (failed(in))
      return failure();
    FailureOr<ArrayRef<float>> mid =
        readInputStats(out, kStatsL2, hidden, criterion);
    if (failed(mid))
      return failure();
    for (int64_t h = 0; h < numHeads; ++h)
      for (int64_t d = h * headDim; d < (h + 1) * headDim; ++d) {
        for (int64_t part = 0; part < 3; ++part)
          scores[h] += wandaColumn(wqkv, part * hidden + d, *in);
        scores[h] += wandaRow(wo, d, *mid);
      }
    return scores;
  }
  case Criterion::Activation:
  case Criterion::Gradient: {
    FailureOr<ArrayRef<float>> mid = readInputStats(
        out,
        criterion == Criterion::Activation ? kStatsHeadL2Mean : kStatsGradHead,
        numHeads, criterion);
    if (failed(mid))
      return failure();
    for (int64_t h = 0; h < numHeads; ++h)
      scores[h] = (*mid)[h];
    return scores;
  }
  }
  llvm_unreachable("unknown criterion");
}
