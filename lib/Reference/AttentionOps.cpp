//===- AttentionOps.cpp - fused multi-head attention ----------------------===//
//
// `lmopt.attention` per its description: heads packed in the last dim,
// softmax(Q K^T * scale + mask) V per head, scale 1/sqrt(D) by default, float
// masks added, i1 masks keeping positions where true, causal masking aligned
// to the end of the keys. Hidden positions take the lowest f32 score, as the
// exporters' masked fill does, so a row with every key hidden averages the
// values uniformly instead of becoming NaN.
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

static EvalResult evaluateAttention(AttentionOp op, ArrayRef<Tensor> operands) {
  const Tensor &query = operands[0], &key = operands[1], &value = operands[2];
  int64_t heads = op.getNumHeads();
  if (query.getRank() != 3 || key.getRank() != 3 || value.getRank() != 3)
    return op.emitError() << "query, key and value must have rank 3, got "
                          << formatShape(query.getShape()) << ", "
                          << formatShape(key.getShape()) << " and "
                          << formatShape(value.getShape());
  int64_t batch = query.getShape()[0], sq = query.getShape()[1];
  int64_t sk = key.getShape()[1];
  int64_t qWidth = query.getShape()[2], vWidth = value.getShape()[2];
  if (key.getShape()[0] != batch || value.getShape()[0] != batch ||
      value.getShape()[1] != sk || key.getShape()[2] != qWidth ||
      qWidth % heads != 0 || vWidth % heads != 0)
    return op.emitError() << "query " << formatShape(query.getShape())
                          << ", key " << formatShape(key.getShape())
                          << " and value " << formatShape(value.getShape())
                          << " do not fit " << heads << " heads";
  int64_t d = qWidth / heads, dv = vWidth / heads;
  double scale = op.getScale() ? op.getScale()->convertToFloat()
                               : 1.0 / std::sqrt(static_cast<double>(d));
  std::optional<Tensor> mask;
  if (op.getMask()) {
    FailureOr<Tensor> broadcast =
        broadcastTo(op, operands[3], {batch, heads, sq, sk}, "mask");
    if (failed(broadcast))
      return failure();
    mask = std::move(*broadcast);
  }
  const double hidden = -std::numeric_limits<float>::max();
  Tensor output(getResultElementType(op), {batch, sq, heads * dv});
  std::vector<double> scores(sk);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < sq; ++i) {
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < sk; ++j) {
          double dot = 0.0;
          for (int64_t e = 0; e < d; ++e)
            dot += query.getDouble((b * sq + i) * qWidth + h * d + e) *
                   key.getDouble((b * sk + j) * qWidth + h * d + e);
          double score = dot * scale;
          int64_t maskIndex = ((b * heads + h) * sq + i) * sk + j;
          bool keep = !op.getCausal() || j <= i + (sk - sq);
          if (mask && mask->isFloat())
            score += mask->getDouble(maskIndex);
          else if (mask)
            keep = keep && mask->getInt(maskIndex) != 0;
          scores[j] = keep ? score : hidden;
          max = std::max(max, scores[j]);
        }
        double sum = 0.0;
        for (double &score : scores) {
          score = std::exp(score - max);
          sum += score;
        }
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j < sk; ++j)
            acc +=
                scores[j] * value.getDouble((b * sk + j) * vWidth + h * dv + e);
          output.setDouble((b * sq + i) * vWidth + h * dv + e, acc / sum);
        }
      }
    }
  }
  return single(std::move(output));
}

void mlir::lmopt::reference::registerAttentionEvaluators(
    EvaluatorTable &table) {
  table.add<AttentionOp>(evaluateAttention);
}
