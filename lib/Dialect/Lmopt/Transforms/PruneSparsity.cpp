//===- PruneSparsity.cpp - lmopt-prune's N:M semi-structured sparsity -----===//
//
// `sparsity=N:M` keeps, in every group of M consecutive input features of
// each output (the reduction dim K of the [K, N] view), the N weights of
// highest importance and zeroes the others: 2:4 is the pattern sparse
// tensor cores multiply at twice the dense rate. Importance is |W| for
// `magnitude` and Wanda's |W| * ||X_k|| for `wanda` (the calibration
// statistics on the linear's input). The weight is rewritten in the
// [N, K] layout (`transpose_weight`), so that each group is M consecutive
// values in memory: the bundle stores such weights compressed, N values
// and their positions per group (lmopt/Format/SparseWeights.h). Training
// keeps the layout (`transpose-sparse=false`) and the zeros: the constant
// carries `lmopt.sparsity`.
//
//===----------------------------------------------------------------------===//

#include "PruneScores.h"

#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"
#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::prune;

std::optional<std::string> prune::parseSparsity(StringRef text, unsigned &n,
                                                unsigned &m) {
  auto [left, right] = text.split(':');
  if (left.getAsInteger(10, n) || right.getAsInteger(10, m) ||
      !text.contains(':'))
    return "sparsity=" + text.str() + " is not N:M (2:4, for example)";
  if (m != 4 && m != 8 && m != 16)
    return "sparsity=" + text.str() + ": groups of " + std::to_string(m) +
           " are not stored; M is 4, 8 or 16";
  if (n == 0 || n >= m)
    return "sparsity=" + text.str() + " keeps " + std::to_string(n) + " of " +
           std::to_string(m) + "; 0 < N < M";
  unsigned bits = m == 4 ? 2 : m == 8 ? 3 : 4;
  if (n * bits > 8)
    return "sparsity=" + text.str() + ": the positions of " +
           std::to_string(n) + " kept weights in a group of " +
           std::to_string(m) +
           " do not fit the byte the bundle stores "
           "per group";
  return std::nullopt;
}

/// Why `linear` keeps its dense weight, or nothing.
static std::optional<std::string> unsparsifiable(LinearOp linear, unsigned m) {
  if (linear.getInputQuantization() != InputQuantization::none ||
      !getElementTypeOrSelf(linear.getWeight().getType()).isF32())
    return std::string("the linear is not f32 (sparsify before quantizing)");
  auto type = llvm::dyn_cast<RankedTensorType>(linear.getWeight().getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape())
    return std::string("the weight is not a static rank-2 tensor");
  if (!linear.getWeight().hasOneUse())
    return std::string("the weight has other readers (a tied embedding)");
  int64_t k = type.getDimSize(linear.getTransposeWeight() ? 1 : 0);
  if (k % m)
    return "its " + std::to_string(k) + " input features are not whole " +
           "groups of " + std::to_string(m);
  return std::nullopt;
}

LogicalResult prune::sparsifyLinears(ArrayRef<LinearOp> linears, unsigned n,
                                     unsigned m, Criterion criterion,
                                     bool transpose, FusionReport &report,
                                     SmallVectorImpl<Operation *> &replaced) {
  if (criterion != Criterion::Magnitude && criterion != Criterion::Wanda) {
    if (linears.empty())
      return success();
    return linears.front()->getParentOp()->emitError()
           << "lmopt-prune: sparsity=" << n << ":" << m
           << " ranks single weights, by criterion=magnitude or wanda";
  }
  report.registerKind(kSparseKind);
  for (LinearOp linear : linears) {
    if (std::optional<std::string> why = unsparsifiable(linear, m)) {
      report.recordNearMiss(kSparseKind, linear.getLoc(), *why);
      continue;
    }
    std::string why;
    FailureOr<Matrix> w =
        readMatrix(linear.getWeight(), linear.getTransposeWeight(), why);
    if (failed(w)) {
      report.recordNearMiss(kSparseKind, linear.getLoc(), why);
      continue;
    }
    int64_t inWidth = w->inWidth(), outWidth = w->outWidth();
    ArrayRef<float> l2;
    if (criterion == Criterion::Wanda) {
      FailureOr<ArrayRef<float>> stats =
          readInputStats(linear, kStatsL2, inWidth, criterion);
      if (failed(stats))
        return failure();
      l2 = *stats;
    }
    // [N, K]: each output's groups of m consecutive inputs.
    std::vector<float> sparse(size_t(inWidth * outWidth), 0.0f);
    int64_t zeroed = 0;
    for (int64_t col = 0; col < outWidth; ++col)
      for (int64_t k0 = 0; k0 < inWidth; k0 += m) {
        SmallVector<int64_t, 16> order(m);
        std::iota(order.begin(), order.end(), k0);
        auto score = [&](int64_t k) {
          double magnitude = std::fabs(double(w->at(k, col)));
          return l2.empty() ? magnitude : magnitude * l2[k];
        };
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return score(a) > score(b);
        });
        for (unsigned i = 0; i < m; ++i) {
          float value = w->at(order[i], col);
          if (i < n)
            sparse[size_t(col * inWidth + order[i])] = value;
          else
            zeroed += value != 0.0f;
        }
      }
    // Back to [K, N] when the layout stays [K, N].
    bool asNK = transpose || w->transposed;
    if (!asNK) {
      std::vector<float> kn(sparse.size());
      for (int64_t col = 0; col < outWidth; ++col)
        for (int64_t k = 0; k < inWidth; ++k)
          kn[size_t(k * outWidth + col)] = sparse[size_t(col * inWidth + k)];
      sparse = std::move(kn);
    }
    OpBuilder builder(linear);
    SmallVector<int64_t, 2> shape{outWidth, inWidth};
    if (!asNK)
      std::swap(shape[0], shape[1]);
    auto type = RankedTensorType::get(shape, builder.getF32Type());
    const char *bytes = reinterpret_cast<const char *>(sparse.data());
    Value weight =
        buildConstant(builder, linear.getWeight().getLoc(), type,
                      ArrayRef<char>(bytes, sparse.size() * sizeof(float)),
                      "sparse_weight", w->resource);
    weight.getDefiningOp()->setAttr(
        kSparsityAttr,
        builder.getStringAttr(std::to_string(n) + ":" + std::to_string(m)));
    if (auto constant = linear.getWeight().getDefiningOp<ConstantOp>())
      replaced.push_back(constant);
    linear.getWeightMutable().assign(weight);
    linear.setTransposeWeight(asNK);
    linear.emitRemark() << n << ":" << m << " sparsity on linear '"
                        << getLayerName(linear) << "': " << zeroed << " of "
                        << inWidth * outWidth << " weights zeroed";
    report.recordFused(kSparseKind, linear.getLoc());
  }
  return success();
}
