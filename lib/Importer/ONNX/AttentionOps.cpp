//===- AttentionOps.cpp - ONNX Attention and RotaryEmbedding --------------===//
//
// The opset-23 attention operators onto the fused ops: Attention onto
// `lmopt.attention` (heads packed in the last dim, key/value split into
// heads where a cache is concatenated), RotaryEmbedding onto
// `lmopt.rotary`. What the fused ops cannot express is refused naming the
// attribute or input and its value.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

static RankedTensorType typeOfValue(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

/// Both static and unequal.
static bool dimsDiffer(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

static int64_t mulDims(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b)
             ? ShapedType::kDynamic
             : a * b;
}

static Value transpose(NodeContext &ctx, Value input, ArrayRef<int64_t> perm) {
  RankedTensorType type = typeOfValue(input);
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(type.getDimSize(axis));
  return ctx
      .createOp<TransposeOp>(
          RankedTensorType::get(shape, type.getElementType()), input, perm)
      .getOutput();
}

/// Reshapes keeping the two leading dims (`0` in ONNX's shape vector) and
/// setting the others to `tail`, which must be static.
static Value reshapeTail(NodeContext &ctx, Value input,
                         ArrayRef<int64_t> tail) {
  RankedTensorType type = typeOfValue(input);
  SmallVector<int64_t> spec = {0, 0},
                       shape = {type.getDimSize(0), type.getDimSize(1)};
  llvm::append_range(spec, tail);
  llvm::append_range(shape, tail);
  Value shapeValue = ctx.createConstant(KnownInts::vector(spec),
                                        ctx.getBuilder().getI64Type());
  return ctx
      .createOp<ReshapeOp>(RankedTensorType::get(shape, type.getElementType()),
                           input, shapeValue, false)
      .getOutput();
}

/// `[B, H, S, D]` to `[B, S, H*D]` (H and D static).
static Value packHeads(NodeContext &ctx, Value input) {
  RankedTensorType type = typeOfValue(input);
  Value moved = transpose(ctx, input, {0, 2, 1, 3});
  return reshapeTail(ctx, moved, {type.getDimSize(1) * type.getDimSize(3)});
}

/// `[B, S, H*D]` to `[B, H, S, D]` (H*D static, a multiple of `heads`).
static Value splitHeads(NodeContext &ctx, Value input, int64_t heads) {
  int64_t width = typeOfValue(input).getDimSize(2);
  Value split = reshapeTail(ctx, input, {heads, width / heads});
  return transpose(ctx, split, {0, 2, 1, 3});
}

static Value concatAxis(NodeContext &ctx, ArrayRef<Value> parts, int64_t axis) {
  SmallVector<int64_t> shape(typeOfValue(parts.front()).getShape());
  shape[axis] = 0;
  for (Value part : parts) {
    int64_t dim = typeOfValue(part).getDimSize(axis);
    shape[axis] =
        ShapedType::isDynamic(dim) || ShapedType::isDynamic(shape[axis])
            ? ShapedType::kDynamic
            : shape[axis] + dim;
  }
  return ctx
      .createOp<ConcatOp>(
          RankedTensorType::get(shape,
                                typeOfValue(parts.front()).getElementType()),
          parts, axis)
      .getOutput();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {
/// The attention node's attributes that lmopt.attention can express.
struct AttentionAttrs {
  bool causal;
  float scale;
  int64_t qHeads, kvHeads;
};
} // namespace

/// Reads the attributes and refuses those lmopt.attention has no form for.
static FailureOr<AttentionAttrs> readAttentionAttrs(NodeContext &ctx) {
  FailureOr<int64_t> causal = ctx.getInt("is_causal", 0);
  FailureOr<int64_t> qHeads = ctx.getInt("q_num_heads", 0);
  FailureOr<int64_t> kvHeads = ctx.getInt("kv_num_heads", 0);
  FailureOr<int64_t> mode = ctx.getInt("qk_matmul_output_mode", 0);
  FailureOr<int64_t> precision = ctx.getInt("softmax_precision", 0);
  FailureOr<int64_t> left = ctx.getInt("left_window_size", -1);
  FailureOr<int64_t> right = ctx.getInt("right_window_size", -1);
  FailureOr<float> scale = ctx.getFloat("scale", 0.0f);
  FailureOr<float> softcap = ctx.getFloat("softcap", 0.0f);
  if (failed(causal) || failed(qHeads) || failed(kvHeads) || failed(mode) ||
      failed(precision) || failed(left) || failed(right) || failed(scale) ||
      failed(softcap))
    return failure();
  if (*softcap != 0.0f)
    return ctx.emitError() << "attribute 'softcap' = " << *softcap
                           << " is not supported: lmopt.attention has no "
                              "logit soft cap";
  if (*left != -1 || *right != -1)
    return ctx.emitError() << "attributes 'left_window_size' = " << *left
                           << " and 'right_window_size' = " << *right
                           << " are not supported: lmopt.attention has no "
                              "sliding window (-1 for both)";
  if (ctx.hasOutput(3))
    return ctx.emitError() << "output 3 ('qk_matmul_output') with attribute "
                              "'qk_matmul_output_mode' = "
                           << *mode
                           << " is not supported: lmopt.attention does not "
                              "expose its scores";
  // 1 is float; lmopt computes the softmax in at least float.
  if (*precision != 0 && *precision != 1)
    return ctx.emitError() << "attribute 'softmax_precision' = " << *precision
                           << " is not supported (0, or 1 for float)";
  if (*scale < 0.0f)
    return ctx.emitError() << "attribute 'scale' = " << *scale
                           << " is not supported: lmopt.attention needs a "
                              "positive scale";
  return AttentionAttrs{*causal != 0, *scale, *qHeads, *kvHeads};
}

/// Q, K and V's ranks and head counts: 4-D inputs carry the heads in dim 1,
/// 3-D ones need `q_num_heads` and `kv_num_heads`.
static LogicalResult readHeads(NodeContext &ctx, AttentionAttrs &attrs) {
  RankedTensorType q = ctx.getInputType(0), k = ctx.getInputType(1),
                   v = ctx.getInputType(2);
  int64_t rank = q.getRank();
  if ((rank != 3 && rank != 4) || k.getRank() != rank || v.getRank() != rank)
    return ctx.emitError() << "Q, K and V must all be 3-D or all 4-D, got "
                           << formatShape(q.getShape()) << ", "
                           << formatShape(k.getShape()) << " and "
                           << formatShape(v.getShape());
  Type element = q.getElementType();
  if (!llvm::isa<FloatType>(element) || k.getElementType() != element ||
      v.getElementType() != element)
    return ctx.emitError() << "Q, K and V element types " << element << ", "
                           << k.getElementType() << " and "
                           << v.getElementType() << " must be one float type";
  if (rank == 4) {
    attrs.qHeads = q.getDimSize(1);
    attrs.kvHeads = k.getDimSize(1);
    if (ShapedType::isDynamic(attrs.qHeads) ||
        ShapedType::isDynamic(attrs.kvHeads) || attrs.kvHeads <= 0 ||
        attrs.qHeads <= 0 || ShapedType::isDynamic(q.getDimSize(3)) ||
        ShapedType::isDynamic(k.getDimSize(3)) ||
        ShapedType::isDynamic(v.getDimSize(3)) ||
        v.getDimSize(1) != attrs.kvHeads)
      return ctx.emitError()
             << "4-D Q, K and V need static positive head counts and sizes, "
                "with "
                "K's and V's equal, got "
             << formatShape(q.getShape()) << ", " << formatShape(k.getShape())
             << " and " << formatShape(v.getShape());
  } else {
    if (attrs.qHeads <= 0 || attrs.kvHeads <= 0)
      return ctx.emitError()
             << "3-D Q, K and V need positive 'q_num_heads' and "
                "'kv_num_heads', got "
             << attrs.qHeads << " and " << attrs.kvHeads;
    for (auto [name, type, heads] :
         {std::tuple{"Q", q, attrs.qHeads}, std::tuple{"K", k, attrs.kvHeads},
          std::tuple{"V", v, attrs.kvHeads}})
      if (ShapedType::isDynamic(type.getDimSize(2)) ||
          type.getDimSize(2) % heads != 0)
        return ctx.emitError()
               << name << " of shape " << formatShape(type.getShape())
               << " does not split into " << heads << " heads";
  }
  if (attrs.qHeads % attrs.kvHeads != 0)
    return ctx.emitError() << "query heads " << attrs.qHeads
                           << " are not a multiple of key/value heads "
                           << attrs.kvHeads;
  return success();
}

/// The causal mask `[Sq, Sk]` of ONNX Attention, true where query i may see
/// key j: `j <= i + offset`, offset the cached length (ONNX aligns the
/// queries after the past keys).
static Value createCausalMask(NodeContext &ctx, int64_t queries, int64_t keys,
                              int64_t offset) {
  SmallVector<bool> allowed;
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j)
      allowed.push_back(j <= i + offset);
  auto type =
      RankedTensorType::get({queries, keys}, ctx.getBuilder().getI1Type());
  return ctx.createOp<ConstantOp>(DenseElementsAttr::get(type, allowed))
      .getOutput();
}

Value mlir::lmopt::onnx_import::createPositions(NodeContext &ctx, Value input,
                                                int64_t axis) {
  auto i64 = ctx.getBuilder().getI64Type();
  int64_t length = typeOfValue(input).getDimSize(axis);
  Value limit;
  if (ShapedType::isDynamic(length)) {
    Value dims =
        ctx.createOp<ShapeOp>(RankedTensorType::get({1}, i64), input,
                              static_cast<uint64_t>(axis),
                              ctx.getBuilder().getI64IntegerAttr(axis + 1))
            .getOutput();
    Value scalarShape = ctx.createConstant(KnownInts{{0}, {}}, i64);
    limit = ctx.createOp<ReshapeOp>(RankedTensorType::get({}, i64), dims,
                                    scalarShape, false)
                .getOutput();
  } else {
    limit = ctx.createConstant(KnownInts::scalar(length), i64);
  }
  return ctx
      .createOp<RangeOp>(RankedTensorType::get({length}, i64),
                         ctx.createConstant(KnownInts::scalar(0), i64), limit,
                         ctx.createConstant(KnownInts::scalar(1), i64))
      .getOutput();
}

/// The causal mask of `createCausalMask` for dynamic lengths, from the
/// positions of the queries (shifted by `offset`) and of the keys.
static Value createDynamicCausalMask(NodeContext &ctx, Value query,
                                     int64_t seqAxis, Value key,
                                     int64_t keyAxis, int64_t offset) {
  auto i64 = ctx.getBuilder().getI64Type();
  Value queries = createPositions(ctx, query, seqAxis);
  Value keys = createPositions(ctx, key, keyAxis);
  int64_t sq = typeOfValue(queries).getDimSize(0);
  int64_t sk = typeOfValue(keys).getDimSize(0);
  if (offset)
    queries =
        ctx.createOp<AddOp>(typeOfValue(queries), queries,
                            ctx.createConstant(KnownInts::scalar(offset), i64))
            .getOutput();
  Value column = ctx.createOp<UnsqueezeOp>(RankedTensorType::get({sq, 1}, i64),
                                           queries, ArrayRef<int64_t>{1})
                     .getOutput();
  Value row = ctx.createOp<UnsqueezeOp>(RankedTensorType::get({1, sk}, i64),
                                        keys, ArrayRef<int64_t>{0})
                  .getOutput();
  auto maskType = RankedTensorType::get({sq, sk}, ctx.getBuilder().getI1Type());
  Value future = ctx.createOp<LessOp>(maskType, column, row).getOutput();
  return ctx.createOp<NotOp>(future).getOutput();
}

/// Hides what `visible` (i1) hides in `mask` (i1, a float to add, or null).
static FailureOr<Value> combineMasks(NodeContext &ctx, Value mask,
                                     Value visible) {
  if (!mask)
    return visible;
  RankedTensorType maskType = typeOfValue(mask);
  ArrayRef<int64_t> visibleShape = typeOfValue(visible).getShape();
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(maskType.getShape(), visibleShape);
  if (!shape)
    return ctx.emitError() << "'attn_mask' of shape "
                           << formatShape(maskType.getShape())
                           << " does not broadcast to the scores' "
                           << formatShape(visibleShape);
  auto type = RankedTensorType::get(*shape, maskType.getElementType());
  if (maskType.getElementType().isInteger(1))
    return ctx.createOp<AndOp>(type, mask, visible).getOutput();
  Type element = maskType.getElementType();
  auto scalar = RankedTensorType::get({}, element);
  Value minusInf =
      ctx
          .createOp<ConstantOp>(DenseElementsAttr::get(
              scalar, ctx.getBuilder().getFloatAttr(
                          element, -std::numeric_limits<double>::infinity())))
          .getOutput();
  return ctx.createOp<WhereOp>(type, visible, mask, minusInf).getOutput();
}

/// `attn_mask` extended to `keys` with hidden keys, as ONNX pads a mask
/// shorter than the past and new keys together.
static FailureOr<Value> padMask(NodeContext &ctx, Value mask, int64_t keys) {
  RankedTensorType type = typeOfValue(mask);
  int64_t last = type.getRank() ? type.getShape().back() : 1;
  if (type.getRank() == 0 || ShapedType::isDynamic(last) ||
      ShapedType::isDynamic(keys) || last == keys)
    return mask;
  if (last > keys || !type.hasStaticShape())
    return ctx.emitError() << "'attn_mask' of shape "
                           << formatShape(type.getShape()) << " does not fit "
                           << keys << " keys (lmopt pads a static shorter one)";
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = keys - last;
  auto fillType = RankedTensorType::get(shape, type.getElementType());
  Attribute fill = type.getElementType().isInteger(1)
                       ? Attribute(ctx.getBuilder().getBoolAttr(false))
                       : Attribute(ctx.getBuilder().getFloatAttr(
                             type.getElementType(),
                             -std::numeric_limits<double>::infinity()));
  Value hidden =
      ctx.createOp<ConstantOp>(DenseElementsAttr::get(fillType, fill))
          .getOutput();
  return concatAxis(ctx, {mask, hidden}, type.getRank() - 1);
}

/// `nonpad_kv_seqlen` n ([B], int64) as the mask [B, 1, Sq, Sk] ONNX derives
/// from it: key j is visible when j < n[b], and with is_causal when
/// j <= i + n[b] - Sq (the queries are the last of the n valid keys).
static FailureOr<Value> createPaddingMask(NodeContext &ctx, bool causal,
                                          int64_t queries, int64_t keys) {
  RankedTensorType type = ctx.getInputType(6);
  if (type.getRank() != 1 || !type.getElementType().isInteger(64))
    return ctx.emitError() << "'nonpad_kv_seqlen' of type " << type
                           << " must be a 1-D int64 [batch]";
  if (ShapedType::isDynamic(queries) || ShapedType::isDynamic(keys))
    return ctx.emitError() << "'nonpad_kv_seqlen' with query and key "
                              "lengths "
                           << formatShape({queries, keys})
                           << " is not supported: lmopt builds its mask for "
                              "static lengths";
  // Key j needs n[b] > bound[i, j].
  SmallVector<int64_t> bounds;
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j)
      bounds.push_back(causal ? j - i + queries - 1 : j);
  OpBuilder &b = ctx.getBuilder();
  auto boundType = RankedTensorType::get({1, 1, queries, keys}, b.getI64Type());
  Value bound =
      ctx.createOp<ConstantOp>(
             DenseElementsAttr::get(boundType, ArrayRef<int64_t>(bounds)))
          .getOutput();
  int64_t batch = type.getDimSize(0);
  Value counts = ctx.createOp<ReshapeOp>(
                        RankedTensorType::get({batch, 1, 1, 1}, b.getI64Type()),
                        ctx.getInput(6),
                        ctx.createConstant(KnownInts::vector({-1, 1, 1, 1}),
                                           b.getI64Type()),
                        false)
                     .getOutput();
  return ctx
      .createOp<LessOp>(
          RankedTensorType::get({batch, 1, queries, keys}, b.getI1Type()),
          bound, counts)
      .getOutput();
}

/// `attn_mask` as lmopt.attention reads it, with the causal mask folded in
/// where the `causal` attribute (aligned to the end of the keys) would
/// differ from ONNX's, and `nonpad_kv_seqlen`'s. Sets `causalAttr` where
/// the attribute agrees.
static FailureOr<Value> buildMask(NodeContext &ctx, const AttentionAttrs &attrs,
                                  int64_t queries, int64_t newKeys, Value key,
                                  int64_t keyAxis, bool &causalAttr) {
  int64_t keys = typeOfValue(key).getDimSize(keyAxis);
  Value mask;
  Type element = ctx.getInputType(0).getElementType();
  if (ctx.hasInput(3)) {
    RankedTensorType type = ctx.getInputType(3);
    if (!type.getElementType().isInteger(1) && type.getElementType() != element)
      return ctx.emitError()
             << "'attn_mask' of element type " << type.getElementType()
             << " is not supported; lmopt reads a bool mask "
                "or one of Q's type "
             << element;
    FailureOr<Value> padded = padMask(ctx, ctx.getInput(3), keys);
    if (failed(padded))
      return failure();
    mask = *padded;
  }
  causalAttr = false;
  if (ctx.hasInput(6)) {
    FailureOr<Value> visible =
        createPaddingMask(ctx, attrs.causal, queries, keys);
    if (failed(visible))
      return failure();
    return combineMasks(ctx, mask, *visible);
  }
  if (!attrs.causal)
    return mask;
  // ONNX hides key j from query i when j > i + past; lmopt's causal when
  // j > i + (keys - queries). They agree when the queries are the new keys.
  if (!ShapedType::isDynamic(queries) && queries == newKeys) {
    causalAttr = true;
    return mask;
  }
  int64_t past = ctx.hasInput(4) ? ctx.getInputType(4).getDimSize(2) : 0;
  if (!ShapedType::isDynamic(queries) && !ShapedType::isDynamic(keys) &&
      !ShapedType::isDynamic(past))
    return combineMasks(ctx, mask, createCausalMask(ctx, queries, keys, past));
  if (ShapedType::isDynamic(past))
    return ctx.emitError() << "attribute 'is_causal' = 1 with 'past_key' of "
                              "dynamic length and query and new key lengths "
                           << formatShape({queries, newKeys})
                           << " that may differ is not supported";
  int64_t seqAxis = ctx.getInputType(0).getRank() == 4 ? 2 : 1;
  return combineMasks(ctx, mask,
                      createDynamicCausalMask(ctx, ctx.getInput(0), seqAxis,
                                              key, keyAxis, past));
}

/// Checks that cache input `index` extends the head-split `current`.
static LogicalResult checkPast(NodeContext &ctx, size_t index, StringRef name,
                               Value current) {
  RankedTensorType type = ctx.getInputType(index);
  RankedTensorType split = typeOfValue(current);
  if (type.getRank() != 4 || type.getElementType() != split.getElementType() ||
      dimsDiffer(type.getDimSize(1), split.getDimSize(1)) ||
      dimsDiffer(type.getDimSize(3), split.getDimSize(3)))
    return ctx.emitError() << "'" << name << "' of type " << type
                           << " does not extend the head-split " << split;
  return success();
}

static LogicalResult convertAttention(NodeContext &ctx) {
  if (failed(ctx.checkInputs(3, ctx.getOpset() >= 24 ? 7 : 6)))
    return failure();
  FailureOr<AttentionAttrs> read = readAttentionAttrs(ctx);
  if (failed(read) || failed(readHeads(ctx, *read)))
    return failure();
  AttentionAttrs attrs = *read;
  bool past = ctx.hasInput(4);
  if (past && ctx.hasInput(6))
    return ctx.emitError() << "'nonpad_kv_seqlen' cannot be combined with "
                              "'past_key' and 'past_value'";
  if (past != ctx.hasInput(5))
    return ctx.emitError() << "'past_key' and 'past_value' must be given "
                              "together";
  RankedTensorType q = ctx.getInputType(0);
  Type element = q.getElementType();
  bool fourD = q.getRank() == 4;
  int64_t seqAxis = fourD ? 2 : 1;
  int64_t queries = q.getDimSize(seqAxis);
  int64_t newKeys = ctx.getInputType(1).getDimSize(seqAxis);

  Value query = fourD ? packHeads(ctx, ctx.getInput(0)) : ctx.getInput(0);
  Value key = ctx.getInput(1), value = ctx.getInput(2);
  // Key and value as [B, G, S, D]: what a cache concatenates and what the
  // present outputs are.
  bool split = fourD;
  if (past || ctx.hasOutput(1) || ctx.hasOutput(2)) {
    if (!fourD) {
      key = splitHeads(ctx, key, attrs.kvHeads);
      value = splitHeads(ctx, value, attrs.kvHeads);
      split = true;
    }
    if (past) {
      if (failed(checkPast(ctx, 4, "past_key", key)) ||
          failed(checkPast(ctx, 5, "past_value", value)))
        return failure();
      key = concatAxis(ctx, {ctx.getInput(4), key}, 2);
      value = concatAxis(ctx, {ctx.getInput(5), value}, 2);
    }
    ctx.setOutput(1, key);
    ctx.setOutput(2, value);
  }
  // Head-split key and value must share a shape; a value head size of its
  // own reads them packed.
  if (split && typeOfValue(key).getShape() != typeOfValue(value).getShape()) {
    key = packHeads(ctx, key);
    value = packHeads(ctx, value);
    split = false;
  }

  bool causalAttr = false;
  FailureOr<Value> mask =
      buildMask(ctx, attrs, queries, newKeys, key, split ? 2 : 1, causalAttr);
  if (failed(mask))
    return failure();
  RankedTensorType v = typeOfValue(value);
  int64_t valueHead = split ? v.getDimSize(3) : v.getDimSize(2) / attrs.kvHeads;
  auto outputType = RankedTensorType::get(
      {q.getDimSize(0), queries, mulDims(valueHead, attrs.qHeads)}, element);
  OpBuilder &b = ctx.getBuilder();
  FloatAttr scaleAttr =
      attrs.scale != 0.0f ? b.getF32FloatAttr(attrs.scale) : FloatAttr();
  IntegerAttr kvHeadsAttr = attrs.kvHeads != attrs.qHeads
                                ? b.getI64IntegerAttr(attrs.kvHeads)
                                : IntegerAttr();
  // ONNX zeroes a query row whose keys are all hidden.
  bool masked = *mask || causalAttr;
  Value output =
      ctx.createOp<AttentionOp>(outputType, query, key, value, *mask,
                                /*bias=*/Value(),
                                static_cast<uint64_t>(attrs.qHeads), scaleAttr,
                                causalAttr, split, masked, kvHeadsAttr)
          .getOutput();
  ctx.setOutput(0, fourD ? splitHeads(ctx, output, attrs.qHeads) : output);
  return success();
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

/// `cache` (`[positions, R/2]` gathered at `position_ids`, or `[B, S, R/2]`)
/// doubled to `[B, S, R]` for lmopt.rotary's rotate-half form, with a unit
/// dim inserted at `headAxis`.
static FailureOr<Value> buildRotaryTable(NodeContext &ctx, size_t index,
                                         StringRef name, int64_t half,
                                         int64_t headAxis) {
  Value cache = ctx.getInput(index);
  RankedTensorType type = ctx.getInputType(index);
  bool gathered = ctx.hasInput(3);
  if (type.getRank() != (gathered ? 2 : 3) ||
      type.getElementType() != ctx.getInputType(0).getElementType() ||
      type.getShape().back() != half)
    return ctx.emitError() << "'" << name << "' of type " << type << " must be "
                           << (gathered ? "[max_position, " : "[batch, seq, ")
                           << half << "] of the input's element type";
  if (gathered) {
    SmallVector<int64_t> shape(ctx.getInputType(3).getShape());
    shape.push_back(half);
    cache = ctx.createOp<GatherOp>(
                   RankedTensorType::get(shape, type.getElementType()), cache,
                   ctx.getInput(3), 0)
                .getOutput();
  }
  Value doubled = concatAxis(ctx, {cache, cache}, 2);
  SmallVector<int64_t> shape(typeOfValue(doubled).getShape());
  shape.insert(shape.begin() + headAxis, 1);
  return ctx
      .createOp<UnsqueezeOp>(
          RankedTensorType::get(shape, type.getElementType()), doubled,
          ArrayRef<int64_t>{headAxis})
      .getOutput();
}

/// `input[..., start:end]` on the last of 4 dims.
static Value sliceLast(NodeContext &ctx, Value input, int64_t start,
                       int64_t end) {
  RankedTensorType type = typeOfValue(input);
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = end - start;
  auto index = [&](int64_t v) {
    return ctx.createConstant(KnownInts::vector({v}),
                              ctx.getBuilder().getI64Type());
  };
  return ctx
      .createOp<SliceOp>(RankedTensorType::get(shape, type.getElementType()),
                         input, index(start), index(end), index(3), index(1))
      .getOutput();
}

static LogicalResult convertRotaryEmbedding(NodeContext &ctx) {
  if (failed(ctx.checkInputs(3, 4)))
    return failure();
  FailureOr<int64_t> interleaved = ctx.getInt("interleaved", 0);
  FailureOr<int64_t> rotaryDim = ctx.getInt("rotary_embedding_dim", 0);
  FailureOr<int64_t> numHeads = ctx.getInt("num_heads", 0);
  if (failed(interleaved) || failed(rotaryDim) || failed(numHeads))
    return failure();
  if (*interleaved != 0)
    return ctx.emitError() << "attribute 'interleaved' = " << *interleaved
                           << " is not supported: lmopt.rotary rotates "
                              "halves, not interleaved pairs";
  RankedTensorType type = ctx.getInputType(0);
  if (!llvm::isa<FloatType>(type.getElementType()) ||
      (type.getRank() != 3 && type.getRank() != 4))
    return ctx.emitError() << "'input' of type " << type
                           << " must be a 3-D or 4-D float tensor";
  Value input = ctx.getInput(0);
  int64_t width = type.getShape().back();
  if (type.getRank() == 3) {
    if (*numHeads <= 0 || ShapedType::isDynamic(width) || width % *numHeads)
      return ctx.emitError()
             << "3-D 'input' of shape " << formatShape(type.getShape())
             << " does not split into 'num_heads' = " << *numHeads;
    input = reshapeTail(ctx, input, {*numHeads, width / *numHeads});
  }
  int64_t head = typeOfValue(input).getShape().back();
  int64_t rotated = *rotaryDim ? *rotaryDim : head;
  if (ShapedType::isDynamic(head) || rotated <= 0 || rotated > head ||
      rotated % 2)
    return ctx.emitError() << "'rotary_embedding_dim' = " << *rotaryDim
                           << " must be even and at most the head size "
                           << head;
  if (ctx.hasInput(3) && ctx.getInputType(3).getRank() != 2)
    return ctx.emitError() << "'position_ids' of shape "
                           << formatShape(ctx.getInputType(3).getShape())
                           << " must be [batch, seq]";
  // The heads are dim 1 of [B, H, S, D] and dim 2 of [B, S, H, D].
  int64_t headAxis = type.getRank() == 4 ? 1 : 2;
  FailureOr<Value> cos =
      buildRotaryTable(ctx, 1, "cos_cache", rotated / 2, headAxis);
  FailureOr<Value> sin =
      buildRotaryTable(ctx, 2, "sin_cache", rotated / 2, headAxis);
  if (failed(cos) || failed(sin))
    return failure();
  Value part = rotated < head ? sliceLast(ctx, input, 0, rotated) : input;
  Value output =
      ctx.createOp<RotaryOp>(part.getType(), part, *cos, *sin).getOutput();
  if (rotated < head)
    output = concatAxis(ctx, {output, sliceLast(ctx, input, rotated, head)}, 3);
  if (type.getRank() == 3)
    output = reshapeTail(ctx, output, {width});
  ctx.setOutput(0, output);
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kAttentionConverters[] = {
    {"", "Attention", 23, kMax, convertAttention},
    {"", "RotaryEmbedding", 23, kMax, convertRotaryEmbedding},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getAttentionConverters() {
  return kAttentionConverters;
}
