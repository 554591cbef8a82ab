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
// `lmopt.attention_grad` recomputes each row's probabilities with the same
// rules (one ScoreRows for both) and applies softmax's backward.
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

namespace {
/// What one query row's probabilities depend on: query and key (packed, or
/// key split into heads), the broadcast mask and score bias, and the op's
/// flags.
struct ScoreRows {
  const Tensor &query, &key;
  const std::optional<Tensor> &mask, &bias;
  int64_t heads, kvHeads, sq, sk, d;
  bool headsSplit, causal, zeroMaskedRows;
  double scale;

  /// Flat offset of element `e` of the key/value head read by query head
  /// `h` at key position `j` of batch `b`.
  int64_t keyIndex(int64_t b, int64_t h, int64_t j, int64_t e,
                   int64_t headDim) const {
    int64_t g = h / (heads / kvHeads);
    if (headsSplit)
      return ((b * kvHeads + g) * sk + j) * headDim + e;
    return (b * sk + j) * kvHeads * headDim + g * headDim + e;
  }

  /// Row `i` of head `h` of batch `b`: its probabilities into `probs` (Sk
  /// of them; NaN where softmax is), or false when zero_masked_rows makes
  /// it zero.
  bool probabilities(int64_t b, int64_t h, int64_t i,
                     std::vector<double> &probs) const;
};
} // namespace

bool ScoreRows::probabilities(int64_t b, int64_t h, int64_t i,
                              std::vector<double> &probs) const {
  const double hidden = -std::numeric_limits<float>::max();
  const double minusInf = -std::numeric_limits<double>::infinity();
  const int64_t qWidth = heads * d;
  probs.assign(sk, 0.0);
  double max = minusInf;
  bool allHidden = true;
  for (int64_t j = 0; j < sk; ++j) {
    double dot = 0.0;
    for (int64_t e = 0; e < d; ++e)
      dot += query.getDouble((b * sq + i) * qWidth + h * d + e) *
             key.getDouble(keyIndex(b, h, j, e, d));
    double score = dot * scale;
    int64_t maskIndex = ((b * heads + h) * sq + i) * sk + j;
    bool keep = !causal || j <= i + (sk - sq);
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
    probs[j] = keep ? score : hidden;
    max = std::max(max, probs[j]);
    allHidden = allHidden && (!keep || minusInfMask);
  }
  if (zeroMaskedRows && allHidden)
    return false;
  double sum = 0.0;
  for (double &p : probs) {
    p = std::exp(p - max);
    sum += p;
  }
  for (double &p : probs)
    p /= sum;
  return true;
}

/// Operands past `first` of an attention op, [mask] then [bias], broadcast
/// to the scores [B, H, Sq, Sk].
static LogicalResult
broadcastScoreOperands(Operation *op, ArrayRef<Tensor> operands, size_t first,
                       Value maskValue, Value biasValue,
                       ArrayRef<int64_t> scores, std::optional<Tensor> &mask,
                       std::optional<Tensor> &bias) {
  size_t next = first;
  for (auto [present, slot, role] :
       {std::tuple<bool, std::optional<Tensor> *, const char *>{
            static_cast<bool>(maskValue), &mask, "mask"},
        {static_cast<bool>(biasValue), &bias, "bias"}}) {
    if (!present)
      continue;
    FailureOr<Tensor> broadcast =
        broadcastTo(op, operands[next++], scores, role);
    if (failed(broadcast))
      return failure();
    *slot = std::move(*broadcast);
  }
  return success();
}

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
  int64_t d = qWidth / heads, dv = vWidth / kvHeads;
  int64_t outWidth = heads * dv;
  double scale = op.getScale() ? op.getScale()->convertToFloat()
                               : 1.0 / std::sqrt(static_cast<double>(d));
  std::optional<Tensor> mask, bias;
  if (failed(broadcastScoreOperands(op, operands, 3, op.getMask(), op.getBias(),
                                    {batch, heads, sq, sk}, mask, bias)))
    return failure();
  ScoreRows rows{
      query, key, mask, bias,       heads,          kvHeads,
      sq,    sk,  d,    headsSplit, op.getCausal(), op.getZeroMaskedRows(),
      scale};
  Tensor output(getResultElementType(op), {batch, sq, outWidth});
  std::vector<double> probs;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < sq; ++i) {
        bool shown = rows.probabilities(b, h, i, probs);
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; shown && j < sk; ++j)
            acc += probs[j] * value.getDouble(rows.keyIndex(b, h, j, e, dv));
          output.setDouble((b * sq + i) * outWidth + h * dv + e, acc);
        }
      }
    }
  }
  return single(std::move(output));
}

/// Flash attention's backward per head and query row: P recomputed,
/// dV += P^T dO, dP = dO V^T, dS = P (dP - rowsum(dP P)) * scale,
/// dQ = dS K, dK += dS^T Q. A row zero_masked_rows zeroes has no gradient.
static EvalResult evaluateAttentionGrad(AttentionGradOp op,
                                        ArrayRef<Tensor> operands) {
  const Tensor &query = operands[0], &key = operands[1], &value = operands[2],
               &dout = operands[3];
  int64_t heads = op.getNumHeads();
  ArrayRef<int64_t> q = query.getShape(), k = key.getShape(),
                    v = value.getShape();
  if (query.getRank() != 3 || key.getRank() != 3 || value.getRank() != 3 ||
      dout.getShape() != q || k[0] != q[0] || v != k || k[2] != q[2] ||
      q[2] % heads != 0)
    return op.emitError() << "query " << formatShape(q) << ", key "
                          << formatShape(k) << ", value " << formatShape(v)
                          << " and output_grad " << formatShape(dout.getShape())
                          << " do not fit " << heads << " heads of one size";
  int64_t batch = q[0], sq = q[1], sk = k[1], width = q[2], d = width / heads;
  double scale = op.getScale() ? op.getScale()->convertToFloat()
                               : 1.0 / std::sqrt(static_cast<double>(d));
  std::optional<Tensor> mask, bias;
  if (failed(broadcastScoreOperands(op, operands, 4, op.getMask(), Value(),
                                    {batch, heads, sq, sk}, mask, bias)))
    return failure();
  ScoreRows rows{query,
                 key,
                 mask,
                 bias,
                 heads,
                 heads,
                 sq,
                 sk,
                 d,
                 /*headsSplit=*/false,
                 op.getCausal(),
                 op.getZeroMaskedRows(),
                 scale};
  Tensor dq(getResultElementType(op, 0), q);
  Tensor dk(getResultElementType(op, 1), k);
  Tensor dv(getResultElementType(op, 2), v);
  std::vector<double> dqAcc, dkAcc(sk * d), dvAcc(sk * d), probs, dp(sk);
  auto at = [&](int64_t b, int64_t s, int64_t h, int64_t e, int64_t length) {
    return (b * length + s) * width + h * d + e;
  };
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      std::fill(dkAcc.begin(), dkAcc.end(), 0.0);
      std::fill(dvAcc.begin(), dvAcc.end(), 0.0);
      for (int64_t i = 0; i < sq; ++i) {
        dqAcc.assign(d, 0.0);
        if (rows.probabilities(b, h, i, probs)) {
          double dot = 0.0;
          for (int64_t j = 0; j < sk; ++j) {
            dp[j] = 0.0;
            for (int64_t e = 0; e < d; ++e) {
              double g = dout.getDouble(at(b, i, h, e, sq));
              dp[j] += g * value.getDouble(at(b, j, h, e, sk));
              dvAcc[j * d + e] += probs[j] * g;
            }
            dot += dp[j] * probs[j];
          }
          for (int64_t j = 0; j < sk; ++j) {
            double ds = probs[j] * (dp[j] - dot) * scale;
            for (int64_t e = 0; e < d; ++e) {
              dqAcc[e] += ds * key.getDouble(at(b, j, h, e, sk));
              dkAcc[j * d + e] += ds * query.getDouble(at(b, i, h, e, sq));
            }
          }
        }
        for (int64_t e = 0; e < d; ++e)
          dq.setDouble(at(b, i, h, e, sq), dqAcc[e]);
      }
      for (int64_t j = 0; j < sk; ++j)
        for (int64_t e = 0; e < d; ++e) {
          dk.setDouble(at(b, j, h, e, sk), dkAcc[j * d + e]);
          dv.setDouble(at(b, j, h, e, sk), dvAcc[j * d + e]);
        }
    }
  }
  SmallVector<Tensor> results;
  results.push_back(std::move(dq));
  results.push_back(std::move(dk));
  results.push_back(std::move(dv));
  return results;
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
  table.add<AttentionGradOp>(evaluateAttentionGrad);
  table.add<RotaryOp>(evaluateRotary);
}
