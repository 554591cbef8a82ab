//===- LayerRules.cpp - gradients of the fused layer ops ------------------===//
//
// The fused ops' backward passes, written with the ops the CPU and CUDA
// targets already run (linears and matmuls as library steps, the rest in
// generated kernels):
//
// - linear: the input's gradient is another linear with the weight's
//   transpose flag flipped (no transposed copy of the weight), the weight's
//   one product over all rows, the bias's a column sum; an activation's
//   derivative is taken at the pre-activation, recomputed when the forward
//   fused it;
// - layer norms recompute the mean and reciprocal deviation from their
//   input (or the skip sum the op returns) instead of saving them;
// - attention is one `lmopt.attention_grad`, which recomputes the
//   probabilities per head from the queries and keys and applies softmax's
//   backward, as flash attention's backward does; with a score bias (whose
//   gradient is the scores') or a value head size of its own, the same
//   arithmetic as whole-tensor ops.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::lmopt;

/// Operand `index` of ODS operand group `group` of `op`, or -1 when the
/// optional operand is absent.
template <typename OpT>
static int operandIndex(OpT op, unsigned group) {
  auto [start, length] = op.getODSOperandIndexAndLength(group);
  return length ? int(start) : -1;
}

static LogicalResult linearRule(LinearOp op, GradBuilder &gb,
                                ArrayRef<Value> rg,
                                MutableArrayRef<Value> og) {
  Value x = op.getInput(), w = op.getWeight(), g = rg[0];
  if (op.getInputQuantization() != InputQuantization::none ||
      elementTypeOf(w) != elementTypeOf(x) ||
      !llvm::isa<FloatType>(elementTypeOf(w)))
    return op.emitError("no gradient for a quantized 'lmopt.linear'; train "
                        "the float model and quantize after");
  if (op.getTransposeInput())
    return op.emitError("no gradient for an 'lmopt.linear' with "
                        "transpose_input (lmopt-fold-linear-transpose runs "
                        "after differentiation)");
  bool transposed = op.getTransposeWeight();
  int residual = operandIndex(op, 3);
  int bias = operandIndex(op, 2);
  if (residual >= 0)
    og[residual] = gb.reduceToShape(g, op.getResidual());
  Value gz = g;
  if (op.getActivation() != Activation::none) {
    // The pre-activation: the same product and bias, recomputed.
    OpBuilder &b = gb.getBuilder();
    auto z = LinearOp::create(
        b, gb.getLoc(), op.getOutput().getType(), x, w, op.getBias(), Value(),
        b.getBoolAttr(transposed),
        ActivationAttr::get(b.getContext(), Activation::none),
        InputQuantizationAttr::get(b.getContext(), InputQuantization::none));
    FailureOr<Value> derivative =
        applyActivationDerivative(gb, op, op.getActivation(), z, g);
    if (failed(derivative))
      return failure();
    gz = *derivative;
  }
  og[0] = gb.reshapeLike(gb.linear(gz, w, !transposed), x);
  Value rows = gb.flattenRows(x), gradRows = gb.flattenRows(gz);
  og[1] = transposed ? gb.matmul(gb.transposeLast(gradRows), rows)
                     : gb.matmul(gb.transposeLast(rows), gradRows);
  og[1] = gb.reshapeLike(og[1], w);
  if (bias >= 0) {
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(0, rankOf(gz) - 1));
    og[bias] = gb.reshapeLike(gb.reduceSum(gz, axes, /*keepdims=*/false),
                              op.getBias());
  }
  return success();
}

/// Layer norm over the last dim of `s`: sets `ds` and the scale's and
/// bias's gradients from `dy`.
static void layerNormBackward(GradBuilder &gb, Value s, Value scale,
                              double epsilon, Value dy, Value &ds,
                              Value &dscale, Value &dbias) {
  int64_t last = rankOf(s) - 1;
  Value mean = gb.reduceMean(s, {last}, true);
  Value centered = gb.sub(s, mean);
  Value variance = gb.reduceMean(gb.mul(centered, centered), {last}, true);
  Value rstd = gb.reciprocal(
      gb.sqrt(gb.add(variance, gb.scalarLike(epsilon, s))));
  Value normalized = gb.mul(centered, rstd);
  SmallVector<int64_t> rows = llvm::to_vector(llvm::seq<int64_t>(0, last));
  dbias = gb.reduceSum(dy, rows, false);
  dscale = gb.reduceSum(gb.mul(dy, normalized), rows, false);
  Value dn = gb.mul(dy, scale);
  Value meanDn = gb.reduceMean(dn, {last}, true);
  Value meanDnN = gb.reduceMean(gb.mul(dn, normalized), {last}, true);
  ds = gb.mul(rstd, gb.sub(gb.sub(dn, meanDn), gb.mul(normalized, meanDnN)));
}

static bool normalizesLastDim(int64_t axis, Value input, Value scale) {
  std::optional<int64_t> normalized = normalizeAxis(axis, rankOf(input));
  return normalized && *normalized == rankOf(input) - 1 && rankOf(scale) == 1;
}

static LogicalResult layerNormRule(LayerNormOp op, GradBuilder &gb,
                                   ArrayRef<Value> rg,
                                   MutableArrayRef<Value> og) {
  if (!normalizesLastDim(op.getAxis(), op.getInput(), op.getScale()))
    return op.emitError("no gradient for 'lmopt.layer_norm' over more than "
                        "the last dim");
  Value ds, dscale, dbias;
  layerNormBackward(gb, op.getInput(), op.getScale(),
                    op.getEpsilon().convertToDouble(), rg[0], ds, dscale,
                    dbias);
  og[0] = ds;
  og[1] = gb.reshapeLike(dscale, op.getScale());
  if (op.getBias())
    og[2] = gb.reshapeLike(dbias, op.getBias());
  return success();
}

static LogicalResult skipLayerNormRule(SkipLayerNormOp op, GradBuilder &gb,
                                       ArrayRef<Value> rg,
                                       MutableArrayRef<Value> og) {
  if (rankOf(op.getScale()) != 1)
    return op.emitError("no gradient for 'lmopt.skip_layer_norm' with a "
                        "scale of rank ")
           << rankOf(op.getScale());
  Value sum = op.getSum();
  Value ds = rg[1];
  if (rg[0]) {
    Value dnorm, dscale, dbias;
    layerNormBackward(gb, sum, op.getScale(),
                      op.getEpsilon().convertToDouble(), rg[0], dnorm, dscale,
                      dbias);
    ds = ds ? gb.add(ds, dnorm) : dnorm;
    og[2] = gb.reshapeLike(dscale, op.getScale());
    if (op.getBias())
      og[3] = gb.reshapeLike(dbias, op.getBias());
  }
  og[0] = gb.reduceToShape(ds, op.getInput());
  og[1] = gb.reduceToShape(ds, op.getSkip());
  return success();
}

static LogicalResult rmsNormRule(RmsNormOp op, GradBuilder &gb,
                                 ArrayRef<Value> rg,
                                 MutableArrayRef<Value> og) {
  Value x = op.getInput(), scale = op.getScale(), dy = rg[0];
  if (!normalizesLastDim(op.getAxis(), x, scale))
    return op.emitError("no gradient for 'lmopt.rms_norm' over more than "
                        "the last dim");
  int64_t last = rankOf(x) - 1;
  Value meanSquare = gb.reduceMean(gb.mul(x, x), {last}, true);
  Value r = gb.reciprocal(gb.sqrt(
      gb.add(meanSquare, gb.scalarLike(op.getEpsilon().convertToDouble(), x))));
  Value normalized = gb.mul(x, r);
  SmallVector<int64_t> rows = llvm::to_vector(llvm::seq<int64_t>(0, last));
  og[1] = gb.reshapeLike(gb.reduceSum(gb.mul(dy, normalized), rows, false),
                         scale);
  Value dn = gb.mul(dy, scale);
  Value meanDnN = gb.reduceMean(gb.mul(dn, normalized), {last}, true);
  og[0] = gb.mul(r, gb.sub(dn, gb.mul(normalized, meanDnN)));
  return success();
}

/// rotate_half(y) = [-y2, y1], as a rotary with cos 0 and sin 1.
static Value rotateHalf(GradBuilder &gb, Value y) {
  Value zero = gb.scalarLike(0.0, y), one = gb.scalarLike(1.0, y);
  return RotaryOp::create(gb.getBuilder(), gb.getLoc(), y.getType(), y, zero,
                          one);
}

/// y = x cos + R(x) sin with R = rotate_half, whose transpose is -R: dx =
/// dy cos - R(dy sin); the tables get dy x and dy R(x), summed over the
/// dims they broadcast.
static LogicalResult rotaryRule(RotaryOp op, GradBuilder &gb,
                                ArrayRef<Value> rg,
                                MutableArrayRef<Value> og) {
  Value x = op.getInput(), dy = rg[0];
  og[0] = gb.sub(gb.mul(dy, op.getCos()),
                 rotateHalf(gb, gb.mul(dy, op.getSin())));
  og[1] = gb.reduceToShape(gb.mul(dy, x), op.getCos());
  og[2] = gb.reduceToShape(gb.mul(dy, rotateHalf(gb, x)), op.getSin());
  return success();
}

static LogicalResult dropoutRule(DropoutOp op, GradBuilder &gb,
                                 ArrayRef<Value> rg,
                                 MutableArrayRef<Value> og) {
  if (!rg[0])
    return success();
  double ratio = op.getRatio().convertToDouble();
  if (!op.getTraining() || ratio == 0.0) {
    og[0] = rg[0];
    return success();
  }
  Value kept = gb.cast(op.getMask(), elementTypeOf(rg[0]));
  og[0] = gb.scale(gb.mul(rg[0], kept), 1.0 / (1.0 - ratio));
  return success();
}

/// `[B, S, H*D]` -> `[B, H, S, D]`.
static Value splitHeads(GradBuilder &gb, Value x, int64_t heads) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t headSize = shape[2] / heads;
  Value split = gb.reshape(x, {0, 0, heads, headSize},
                           {shape[0], shape[1], heads, headSize});
  return gb.transpose(split, {0, 2, 1, 3});
}

/// `[B, H, S, D]` -> `[B, S, H*D]` with `like`'s type.
static Value mergeHeads(GradBuilder &gb, Value x, Value like) {
  Value merged = gb.transpose(x, {0, 2, 1, 3});
  ArrayRef<int64_t> shape = shapeOf(like);
  return gb.reshapeLike(gb.reshape(merged, {0, 0, shape[2]}, shape), like);
}

static LogicalResult attentionRule(AttentionOp op, GradBuilder &gb,
                                   ArrayRef<Value> rg,
                                   MutableArrayRef<Value> og) {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(),
        mask = op.getMask(), bias = op.getBias();
  if (op.getKvHeadsSplit())
    return op.emitError("no gradient for 'lmopt.attention' with "
                        "kv_heads_split (a key/value cache); training runs "
                        "without one");
  if (op.getKvHeads() != op.getNumHeads())
    return op.emitError("no gradient for 'lmopt.attention' with "
                        "num_kv_heads (grouped-query attention)");
  if (rankOf(q) != 3 || ShapedType::isDynamic(shapeOf(q)[2]))
    return op.emitError("no gradient for 'lmopt.attention' whose query is ")
           << q.getType() << ", not [batch, sequence, heads x size] with a "
           << "static last dim";
  if (!bias && shapeOf(v).back() == shapeOf(q)[2]) {
    auto grad = AttentionGradOp::create(
        gb.getBuilder(), gb.getLoc(),
        TypeRange{q.getType(), k.getType(), v.getType()}, q, k, v, rg[0], mask,
        op.getNumHeadsAttr(), op.getScaleAttr(), op.getCausalAttr(),
        op.getZeroMaskedRowsAttr());
    for (unsigned i = 0; i < 3; ++i)
      og[i] = grad->getResult(i);
    return success();
  }
  int64_t heads = op.getNumHeads();
  int64_t headSize = shapeOf(q)[2] / heads;
  double scale = op.getScale() ? op.getScale()->convertToDouble()
                               : 1.0 / std::sqrt(double(headSize));
  Value qh = splitHeads(gb, q, heads), kh = splitHeads(gb, k, heads),
        vh = splitHeads(gb, v, heads);
  // The probabilities, as the forward computed them.
  Value scores = gb.scale(gb.matmul(qh, gb.transposeLast(kh)), scale);
  if (bias)
    scores = gb.add(scores, bias);
  Type element = elementTypeOf(q);
  double lowest = -double(std::numeric_limits<float>::max());
  Value hiddenScore = gb.scalar(lowest, element);
  Value keep;
  if (mask && llvm::isa<FloatType>(elementTypeOf(mask)))
    scores = gb.add(scores, gb.cast(mask, element));
  else if (mask)
    keep = mask;
  if (op.getCausal()) {
    OpBuilder &b = gb.getBuilder();
    Type i64 = b.getI64Type();
    Value sq = gb.dimOf(q, 1), sk = gb.dimOf(k, 1);
    auto iota = [&](Value size, int64_t staticSize) {
      return RangeOp::create(b, gb.getLoc(),
                             RankedTensorType::get({staticSize}, i64),
                             gb.scalar(0.0, i64), size, gb.scalar(1.0, i64))
          .getResult();
    };
    Value rows = gb.unsqueeze(iota(sq, shapeOf(q)[1]), {1});
    Value cols = gb.unsqueeze(iota(sk, shapeOf(k)[1]), {0});
    // Key j is hidden from query i when j > i + (Sk - Sq).
    Value visible =
        NotOp::create(b, gb.getLoc(),
                      gb.greater(cols, gb.add(rows, gb.sub(sk, sq))));
    keep = keep ? AndOp::create(b, gb.getLoc(),
                                RankedTensorType::get(
                                    *broadcastShapes(shapeOf(keep),
                                                     shapeOf(visible)),
                                    b.getI1Type()),
                                keep, visible)
                      .getResult()
                : visible;
  }
  if (keep)
    scores = gb.where(keep, scores, hiddenScore);
  Value p = gb.softmax(scores, 3);
  if (op.getZeroMaskedRows()) {
    OpBuilder &b = gb.getBuilder();
    Value zero = gb.scalarLike(0.0, p);
    auto nan = IsNaNOp::create(
        b, gb.getLoc(), RankedTensorType::get(shapeOf(p), b.getI1Type()), p);
    p = gb.where(nan, zero, p);
    if (keep)
      p = gb.where(keep, p, zero);
  }
  Value dout = splitHeads(gb, rg[0], heads);
  Value dvh = gb.matmul(gb.transposeLast(p), dout);
  Value dp = gb.matmul(dout, gb.transposeLast(vh));
  Value dot = gb.reduceSum(gb.mul(dp, p), {3}, /*keepdims=*/true);
  Value dbiased = gb.mul(p, gb.sub(dp, dot));
  Value dscores = gb.scale(dbiased, scale);
  // The score bias [1|B, 1|H, 1|Sq, Sk] is added after the scale: its
  // gradient is the scores' summed over the dims it broadcasts along.
  if (Value bias = op.getBias()) {
    SmallVector<int64_t> broadcast;
    for (int64_t dim = 0; dim < 3; ++dim)
      if (shapeOf(bias)[dim] == 1 && shapeOf(dbiased)[dim] != 1)
        broadcast.push_back(dim);
    Value dbias = broadcast.empty()
                      ? dbiased
                      : gb.reduceSum(dbiased, broadcast, /*keepdims=*/true);
    og[op.getODSOperandIndexAndLength(4).first] = gb.reshapeLike(dbias, bias);
  }
  Value dqh = gb.matmul(dscores, kh);
  Value dkh = gb.matmul(gb.transposeLast(dscores), qh);
  og[0] = mergeHeads(gb, dqh, q);
  og[1] = mergeHeads(gb, dkh, k);
  og[2] = mergeHeads(gb, dvh, v);
  return success();
}

void mlir::lmopt::attachLayerRules(MLIRContext &context) {
  attachRule<LinearOp, linearRule>(context);
  attachRule<LayerNormOp, layerNormRule>(context);
  attachRule<SkipLayerNormOp, skipLayerNormRule>(context);
  attachRule<RmsNormOp, rmsNormRule>(context);
  attachRule<RotaryOp, rotaryRule>(context);
  attachRule<DropoutOp, dropoutRule>(context);
  attachRule<AttentionOp, attentionRule>(context);
}
