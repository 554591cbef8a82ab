//===- AttentionOps.cpp - fused multi-head attention ----------------------===//
//
// `lmopt.attention` per its description: heads packed in the last dim (key
// and value split into [B, H, Sk, D] with `kv_heads_split`), softmax(Q K^T *
// scale + bias + mask) V per head, scale 1/sqrt(D) by default, the optional
// score bias [1|B, 1|H, 1|Sq, Sk] added after the scale, float masks added, i1
// masks keeping positions where true, causal masking aligned to the end of
// the keys. Positions hidden by the i1 mask or `causal` take the lowest f32
// score, as the exporters' masked fill does.
//
// A query row with every key hidden: by default, hidden by the i1 mask or
// `causal` it averages the values uniformly (all scores equal), and hidden
// by -inf in a float mask it is NaN (softmax of all -inf). With
// `zero_masked_rows` it is zeros whatever hid it, as the probabilities'
// where(isnan(p), 0, p) guard of SDPA exports makes it.
//
// Grouped-query attention (`num_kv_heads` G < H): key and value have G heads
// and query head h reads key/value head h / (H / G).
//
// `lmopt.rotary`: x * cos + rotate_half(x) * sin, rotate_half([x1, x2]) =
// [-x2, x1] over the last dim.
//
//===----------------------------------------------------------------------===//

#include "OpEvaluators.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include <cmath>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::reference;

static EvalResult evaluateAttention(AttentionOp op, ArrayRef<Tensor> operands) {
  const Tensor &query = operands[0], &key = operands[1], &value = operands[2];
  int64_t heads = op.getNumHeads(), kvHeads = op.getKvHeads();
  bool headsSplit = op.getKvHeadsSplit();
  int64_t kvRank = headsSplit ? 4 : 3;
  if (query.getRank() != 3 || key.getRank() != kvRank ||
      value.getRank() != kvRank)
    return op.emitError() << "query must have rank 3 and key and value rank "
                          << kvRank << ", got " << formatShape(query.getShape())
                          << ", " << formatShape(key.getShape()) << " and "
                          << formatShape(value.getShape());
  ArrayRef<int64_t> k = key.getShape(), v = value.getShape();
  int64_t batch = query.getShape()[0], sq = query.getShape()[1];
  int64_t qWidth = query.getShape()[2];
  int64_t sk = headsSplit ? k[2] : k[1];
  int64_t kWidth = headsSplit ? k[1] * k[3] : k[2];
  int64_t vWidth = headsSplit ? v[1] * v[3] : v[2];
  bool headsFit = !headsSplit || (k[1] == kvHeads && v[1] == kvHeads);
  if (k[0] != batch || v[0] != batch || (headsSplit ? v[2] : v[1]) != sk ||
      heads % kvHeads != 0 || qWidth % heads != 0 ||
      kWidth != qWidth / heads * kvHeads || !headsFit || vWidth % kvHeads != 0)
    return op.emitError() << "query " << formatShape(query.getShape())
                          << ", key " << formatShape(key.getShape())
                          << " and value " << formatShape(value.getShape())
                          << " do not fit " << heads << " heads";
  int64_t d = qWidth / heads, dv = vWidth / kvHeads, group = heads / kvHeads;
  int64_t outWidth = heads * dv;
  // Flat offset of element `e` of the key/value head read by query head `h`
  // at key position `j` of batch `b`.
  auto keyIndex = [&](int64_t b, int64_t h, int64_t j, int64_t e,
                      int64_t headDim) {
    int64_t g = h / group;
    if (headsSplit)
      return ((b * kvHeads + g) * sk + j) * headDim + e;
    return (b * sk + j) * kvHeads * headDim + g * headDim + e;
  };
  double scale = op.getScale() ? op.getScale()->convertToFloat()
                               : 1.0 / std::sqrt(static_cast<double>(d));
  // Operands past the value: [mask], [bias].
  std::optional<Tensor> mask, bias;
  size_t next = 3;
  for (auto [present, slot, role] :
       {std::tuple<bool, std::optional<Tensor> *, const char *>{
            static_cast<bool>(op.getMask()), &mask, "mask"},
        {static_cast<bool>(op.getBias()), &bias, "bias"}}) {
    if (!present)
      continue;
    FailureOr<Tensor> broadcast =
        broadcastTo(op, operands[next++], {batch, heads, sq, sk}, role);
    if (failed(broadcast))
      return failure();
    *slot = std::move(*broadcast);
  }
  const double hidden = -std::numeric_limits<float>::max();
  const double minusInf = -std::numeric_limits<double>::infinity();
  bool zeroMaskedRows = op.getZeroMaskedRows();
  Tensor output(getResultElementType(op), {batch, sq, outWidth});
  std::vector<double> scores(sk);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < sq; ++i) {
        double max = minusInf;
        bool allHidden = true;
        for (int64_t j = 0; j < sk; ++j) {
          double dot = 0.0;
          for (int64_t e = 0; e < d; ++e)
            dot += query.getDouble((b * sq + i) * qWidth + h * d + e) *
                   key.getDouble(keyIndex(b, h, j, e, d));
          double score = dot * scale;
          int64_t maskIndex = ((b * heads + h) * sq + i) * sk + j;
          bool keep = !op.getCausal() || j <= i + (sk - sq);
          bool minusInfMask = false;
          if (bias) {
            score += bias->getDouble(maskIndex);
            minusInfMask = bias->getDouble(maskIndex) == minusInf;
          }
          if (mask && mask->isFloat()) {
            double added = mask->getDouble(maskIndex);
            score += added;
            minusInfMask = minusInfMask || added == minusInf;
          } else if (mask) {
            keep = keep && mask->getInt(maskIndex) != 0;
          }
          scores[j] = keep ? score : hidden;
          max = std::max(max, scores[j]);
          allHidden = allHidden && (!keep || minusInfMask);
        }
        if (zeroMaskedRows && allHidden) {
          for (int64_t e = 0; e < dv; ++e)
            output.setDouble((b * sq + i) * outWidth + h * dv + e, 0.0);
          continue;
        }
        double sum = 0.0;
        for (double &score : scores) {
          score = std::exp(score - max);
          sum += score;
        }
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j < sk; ++j)
            acc += scores[j] * value.getDouble(keyIndex(b, h, j, e, dv));
          output.setDouble((b * sq + i) * outWidth + h * dv + e, acc / sum);
        }
      }
    }
  }
  return single(std::move(output));
}

static EvalResult evaluateRotary(RotaryOp op, ArrayRef<Tensor> operands) {
  const Tensor &input = operands[0];
  FailureOr<Tensor> cos = broadcastTo(op, operands[1], input.getShape(), "cos");
  FailureOr<Tensor> sin = broadcastTo(op, operands[2], input.getShape(), "sin");
  if (failed(cos) || failed(sin))
    return failure();
  Tensor output(getResultElementType(op), input.getShape());
  int64_t width = input.getShape().back(), half = width / 2;
  for (int64_t i = 0, e = input.getNumElements(); i < e; ++i) {
    int64_t d = i % width;
    double rotated =
        d < half ? -input.getDouble(i + half) : input.getDouble(i - half);
    output.setDouble(i, input.getDouble(i) * cos->getDouble(i) +
                            rotated * sin->getDouble(i));
  }
  output.roundToElementType();
  return single(std::move(output));
}

void mlir::lmopt::reference::registerAttentionEvaluators(
    EvaluatorTable &table) {
  table.add<AttentionOp>(evaluateAttention);
  table.add<RotaryOp>(evaluateRotary);
}
