//===- LmoptFusedOps.cpp - verifiers of fused and quantization ops --------===//

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "QuantVerifiers.h"

#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"

using namespace mlir;
using namespace mlir::lmopt;


static bool dimsDiffer(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

static Type elementTypeOf(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getElementType();
}

/// True when every zero point of `type` (per tensor or per axis) is 0.
static bool hasZeroZeroPoints(quant::QuantizedType type) {
  if (auto uniform = llvm::dyn_cast<quant::UniformQuantizedType>(type))
    return uniform.getZeroPoint() == 0;
  auto perAxis = llvm::cast<quant::UniformQuantizedPerAxisType>(type);
  return llvm::all_of(perAxis.getZeroPoints(),
                      [](int64_t zero) { return zero == 0; });
}

/// Checks an 8-bit weight of `mode`: per tensor or per axis on the output
/// channels (`outAxis`), expressing f32; signed with zero points 0 unless
/// the mode allows asymmetric weights.
static LogicalResult verifyInt8Weight(LinearOp op, Type weightType,
                                      int64_t outAxis, int64_t n,
                                      StringRef mode, bool asymmetric) {
  auto quantType = llvm::dyn_cast<quant::QuantizedType>(weightType);
  if (!quantType || quantType.getStorageTypeIntegralWidth() != 8 ||
      !llvm::isa<quant::UniformQuantizedType,
                 quant::UniformQuantizedPerAxisType>(quantType))
    return op.emitOpError() << mode
                            << " needs an 8-bit weight quantized per tensor "
                               "or per output channel, got "
                            << weightType;
  if (!quantType.getExpressedType().isF32())
    return op.emitOpError("quantized weight must express f32, got ")
           << quantType.getExpressedType();
  if (auto perAxis =
          llvm::dyn_cast<quant::UniformQuantizedPerAxisType>(quantType)) {
    int64_t axis = perAxis.getQuantizedDimension();
    if (axis != outAxis)
      return op.emitOpError("weight is quantized along axis ")
             << axis << " but its output channels are axis " << outAxis
             << (op.getTransposeWeight() ? " (transpose_weight)" : "");
    int64_t channels = perAxis.getScales().size();
    if (dimsDiffer(channels, n))
      return op.emitOpError("weight has ")
             << channels << " per-channel scales for " << n
             << " output channels";
  }
  if (asymmetric)
    return success();
  if (!quantType.isSigned() || !hasZeroZeroPoints(quantType))
    return op.emitOpError() << mode
                            << " needs a symmetric i8 weight (signed, zero "
                               "points 0), got "
                            << weightType;
  return success();
}

LogicalResult mlir::lmopt::verifyRowQuantizedTable(Operation *op,
                                                   Type tableElement,
                                                   int64_t rows, int64_t axis,
                                                   Type resultElement) {
  auto quantType = llvm::cast<quant::QuantizedType>(tableElement);
  if (axis != 0)
    return op->emitOpError("quantized data must be gathered along axis 0 "
                           "(its rows), got axis ")
           << axis;
  if (quantType.getStorageTypeIntegralWidth() != 8 ||
      !quantType.getExpressedType().isF32())
    return op->emitOpError("quantized data must have 8-bit storage "
                           "expressing f32, got ")
           << tableElement;
  auto perAxis = llvm::dyn_cast<quant::UniformQuantizedPerAxisType>(quantType);
  if (!perAxis || perAxis.getQuantizedDimension() != 0)
    return op->emitOpError("quantized data must be quantized per axis 0 "
                           "(one scale per row), got ")
           << tableElement;
  int64_t scales = perAxis.getScales().size();
  if (dimsDiffer(scales, rows))
    return op->emitOpError("quantized data has ")
           << scales << " row scales for " << rows << " rows";
  if (!resultElement.isF32())
    return op->emitOpError("result element type must be f32 (the "
                           "dequantized rows) for quantized data, got ")
           << resultElement;
  return success();
}

/// Checks a 4-bit weight-only weight: blocks along K (`kAxis`), one block
/// row per output channel, the block size dividing K.
static LogicalResult
verifyInt4Weight(LinearOp op, quant::UniformQuantizedSubChannelType type,
                 int64_t kAxis, int64_t k, int64_t n) {
  if (type.getStorageTypeIntegralWidth() != 4)
    return op.emitOpError("block-wise weight must have 4-bit storage, got ")
           << type;
  if (!type.getExpressedType().isF32())
    return op.emitOpError("quantized weight must express f32, got ")
           << type.getExpressedType();
  int64_t block = ShapedType::kDynamic;
  for (auto [dim, size] : type.getBlockSizeInfo())
    if (dim == kAxis)
      block = size;
  if (ShapedType::isDynamic(block))
    return op.emitOpError("block-wise weight has no block size along the "
                          "contraction axis ")
           << kAxis;
  if (!ShapedType::isDynamic(k) && k % block != 0)
    return op.emitOpError("block size ")
           << block << " does not divide the contraction dim " << k;
  ArrayRef<int64_t> params =
      llvm::cast<ShapedType>(type.getScales().getType()).getShape();
  int64_t outAxis = 1 - kAxis;
  if (params.size() != 2 || dimsDiffer(params[outAxis], n) ||
      (!ShapedType::isDynamic(k) && dimsDiffer(params[kAxis], k / block)))
    return op.emitOpError("block-wise weight must have one block row per "
                          "output channel and blocks only along K, got "
                          "scales of shape ")
           << formatShape(params);
  return success();
}

/// Checks the operand types against the modes of docs/dialect.md,
/// "Quantized and mixed-precision linears". `k` and `n` are the contraction
/// and output dims.
static LogicalResult verifyLinearTypes(LinearOp op, int64_t k, int64_t n) {
  Type input = elementTypeOf(op.getInput());
  Type weight = elementTypeOf(op.getWeight());
  Type result = elementTypeOf(op.getOutput());
  int64_t outAxis = op.getTransposeWeight() ? 0 : 1;
  InputQuantization dynamic = op.getInputQuantization();
  std::string dynamicName =
      ("input_quantization " + stringifyInputQuantization(dynamic)).str();
  bool plainFloat = false;
  if (auto quantInput = llvm::dyn_cast<quant::QuantizedType>(input)) {
    // Static int8: the input carries its per-tensor scale in its type.
    if (!llvm::isa<quant::UniformQuantizedType>(quantInput) ||
        quantInput.getStorageTypeIntegralWidth() != 8 ||
        !quantInput.getExpressedType().isF32())
      return op.emitOpError("quantized input must be 8-bit per tensor "
                            "expressing f32, got ")
             << input;
    if (dynamic != InputQuantization::none)
      return op.emitOpError("an input quantized statically cannot have ")
             << dynamicName;
    if (failed(verifyInt8Weight(op, weight, outAxis, n, "a static int8 linear",
                                /*asymmetric=*/false)))
      return failure();
  } else if (!input.isF32()) {
    // bf16 / f16 (or another float type, unquantized): both operands of
    // that type.
    if (!llvm::isa<FloatType>(input))
      return op.emitOpError("input element type must be a float or "
                            "quantized type, got ")
             << input;
    if (weight != input)
      return op.emitOpError("a ") << input << " input needs a " << input
                                  << " weight, got " << weight;
    if (dynamic != InputQuantization::none)
      return op.emitOpError("a ")
             << input << " input cannot have " << dynamicName;
    plainFloat = true;
  } else if (dynamic != InputQuantization::none) {
    if (failed(
            verifyInt8Weight(op, weight, outAxis, n, dynamicName,
                             dynamic == InputQuantization::dynamic_per_tensor)))
      return failure();
  } else if (auto blocked =
                 llvm::dyn_cast<quant::UniformQuantizedSubChannelType>(
                     weight)) {
    if (failed(verifyInt4Weight(op, blocked, 1 - outAxis, k, n)))
      return failure();
  } else if (llvm::isa<quant::QuantizedType>(weight)) {
    return op.emitOpError("an 8-bit weight with an f32 input needs "
                          "input_quantization dynamic_per_token or "
                          "dynamic_per_tensor, or a quantized input; got ")
           << weight;
  } else if (!weight.isF32()) {
    return op.emitOpError("an f32 input needs an f32 or quantized weight, got ")
           << weight;
  } else {
    plainFloat = true;
  }
  // An unquantized half-precision model keeps its own result type.
  if (!result.isF32() && !(plainFloat && result == input))
    return op.emitOpError("result element type must be f32, got ") << result;
  for (Value value : {op.getBias(), op.getResidual()})
    if (value && elementTypeOf(value) != result)
      return op.emitOpError("bias and residual must be ")
             << result << ", got " << elementTypeOf(value);
  return success();
}

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput()), weight = shapeOf(getWeight());
  if (input.empty())
    return emitOpError("input must have rank 1 or more");
  if (weight.size() != 2)
    return emitOpError("weight must be rank 2, got shape ")
           << formatShape(weight);
  int64_t k = getTransposeWeight() ? weight[1] : weight[0];
  int64_t n = getTransposeWeight() ? weight[0] : weight[1];
  bool transposedInput = getTransposeInput();
  if (transposedInput && input.size() != 2)
    return emitOpError("with transpose_input, input must be rank 2 [K, M], "
                       "got shape ")
           << formatShape(input);
  if (transposedInput &&
      (getInputQuantization() != InputQuantization::none ||
       !llvm::isa<FloatType>(elementTypeOf(getWeight()))))
    return emitOpError("transpose_input is for unquantized linears only");
  int64_t features = transposedInput ? input[0] : input.back();
  if (dimsDiffer(features, k))
    return emitOpError("input feature dim ")
           << features << " does not match weight's contraction dim " << k;
  SmallVector<int64_t> expected(transposedInput ? input.drop_front()
                                                : input.drop_back());
  expected.push_back(n);
  if (Value bias = getBias()) {
    ArrayRef<int64_t> shape = shapeOf(bias);
    if (shape.size() != 1 || dimsDiffer(shape[0], n))
      return emitOpError("bias of shape ")
             << formatShape(shape) << " must be " << formatShape({n});
  }
  if (Value residual = getResidual())
    if (!isCompatibleShape(shapeOf(residual), expected))
      return emitOpError("residual of shape ")
             << formatShape(shapeOf(residual)) << " must be "
             << formatShape(expected);
  if (!isCompatibleShape(shapeOf(getOutput()), expected))
    return emitOpError("result shape ")
           << formatShape(shapeOf(getOutput()))
           << " does not match expected shape " << formatShape(expected);
  return verifyLinearTypes(*this, k, n);
}

/// Checks head-split `[B, G, Sk, D]` key and value (G key/value heads)
/// against the packed `[B, Sq, H*D]` query.
static LogicalResult verifyHeadSplitKeyValue(AttentionOp op,
                                             ArrayRef<int64_t> q,
                                             ArrayRef<int64_t> k,
                                             ArrayRef<int64_t> v) {
  if (k.size() != 4 || v.size() != 4)
    return op.emitOpError("with kv_heads_split, key and value must be rank 4 "
                          "[batch, heads, seq, head_dim], got ")
           << formatShape(k) << " and " << formatShape(v);
  int64_t heads = op.getNumHeads(), kvHeads = op.getKvHeads();
  if (dimsDiffer(k[1], kvHeads))
    return op.emitOpError("key and value head count ")
           << k[1] << " does not match "
           << (op.getNumKvHeads() ? "num_kv_heads " : "num_heads ") << kvHeads;
  if (!ShapedType::isDynamic(k[3]) && dimsDiffer(q[2], k[3] * heads))
    return op.emitOpError("query hidden size ")
           << q[2] << " is not num_heads * key head size " << heads << " * "
           << k[3];
  if (!isCompatibleShape(k, v))
    return op.emitOpError("head-split key and value shapes ")
           << formatShape(k) << " and " << formatShape(v) << " differ";
  return success();
}

/// Checks the score bias: rank 4 and [1|B, 1|H, 1|Sq, Sk] against the
/// `scores` [B, H, Sq, Sk], one element per key.
static LogicalResult verifyScoreBias(AttentionOp op, Value bias,
                                     ArrayRef<int64_t> scores) {
  ArrayRef<int64_t> shape = shapeOf(bias);
  auto describe = [&]() {
    InFlightDiagnostic diag = op.emitOpError("bias ");
    if (auto result = llvm::dyn_cast<OpResult>(bias))
      diag << "'" << result.getOwner()->getName() << "' result ";
    diag << "of shape " << formatShape(shape);
    return diag;
  };
  if (elementTypeOf(bias) != elementTypeOf(op.getQuery()))
    return describe() << " must have the query's element type "
                      << elementTypeOf(op.getQuery()) << ", got "
                      << elementTypeOf(bias);
  if (shape.size() != 4)
    return describe() << " must be rank 4 [1|B, 1|H, 1|Sq, Sk], got rank "
                      << shape.size();
  for (int64_t dim = 0; dim < 3; ++dim)
    if (shape[dim] != 1 && dimsDiffer(shape[dim], scores[dim]))
      return describe() << " does not broadcast to scores "
                        << formatShape(scores) << " in dim " << dim;
  if (dimsDiffer(shape[3], scores[3]))
    return describe() << " must have one element per key (" << scores[3]
                      << "), got " << shape[3];
  return success();
}

/// Checks that `mask` broadcasts to the `scores` [B, H, Sq, Sk].
static LogicalResult verifyScoreMask(Operation *op, Value mask,
                                     ArrayRef<int64_t> scores) {
  ArrayRef<int64_t> shape = shapeOf(mask);
  std::optional<SmallVector<int64_t>> merged = broadcastShapes(scores, shape);
  if (shape.size() > 4 || !merged || !isCompatibleShape(*merged, scores))
    return op->emitOpError("mask of shape ")
           << formatShape(shape) << " does not broadcast to scores "
           << formatShape(scores);
  return success();
}

LogicalResult AttentionOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    v = shapeOf(getValue());
  bool headsSplit = getKvHeadsSplit();
  if (q.size() != 3 || (!headsSplit && (k.size() != 3 || v.size() != 3)))
    return emitOpError("query, key and value must be rank 3 [batch, seq, "
                       "hidden], got ")
           << formatShape(q) << ", " << formatShape(k) << " and "
           << formatShape(v);
  int64_t heads = getNumHeads(), kvHeads = getKvHeads();
  if (!ShapedType::isDynamic(q[2]) && q[2] % heads != 0)
    return emitOpError("query hidden size ")
           << q[2] << " is not divisible by num_heads " << heads;
  if (heads % kvHeads != 0)
    return emitOpError("num_heads ")
           << heads << " is not a multiple of num_kv_heads " << kvHeads
           << ": each key/value head must serve a whole group of query heads";
  // Packed key and value are [B, Sk, G*D]: the query's width over the
  // group size.
  int64_t kvWidth = ShapedType::isDynamic(q[2]) ? ShapedType::kDynamic
                                                : q[2] / heads * kvHeads;
  if (headsSplit && failed(verifyHeadSplitKeyValue(*this, q, k, v)))
    return failure();
  if (dimsDiffer(q[0], k[0]) || dimsDiffer(q[0], v[0]))
    return emitOpError("query, key and value batch sizes differ");
  if (!headsSplit && dimsDiffer(kvWidth, k[2]))
    return emitOpError("key hidden size ")
           << k[2] << " is not " << kvHeads << " heads of query head size "
           << (ShapedType::isDynamic(q[2]) ? q[2] : q[2] / heads)
           << " (query hidden size " << q[2] << ", num_heads " << heads << ")";
  if (!headsSplit && dimsDiffer(k[1], v[1]))
    return emitOpError("key and value sequence lengths ")
           << k[1] << " and " << v[1] << " differ";
  if (std::optional<APFloat> scale = getScale();
      scale && !(scale->convertToFloat() > 0.0f))
    return emitOpError("scale must be positive, got ")
           << scale->convertToFloat();
  int64_t keySeq = headsSplit ? k[2] : k[1];
  if (Value mask = getMask();
      mask && failed(verifyScoreMask(*this, mask, {q[0], heads, q[1], keySeq})))
    return failure();
  if (Value bias = getBias();
      bias && failed(verifyScoreBias(*this, bias, {q[0], heads, q[1], keySeq})))
    return failure();
  int64_t valueWidth =
      ShapedType::isDynamic(v[2]) ? v[2] : v[2] / kvHeads * heads;
  if (!headsSplit && !ShapedType::isDynamic(v[2]) && v[2] % kvHeads != 0)
    return emitOpError("value hidden size ")
           << v[2] << " is not divisible by num_kv_heads " << kvHeads;
  if (headsSplit)
    valueWidth =
        ShapedType::isDynamic(v[3]) ? ShapedType::kDynamic : v[3] * heads;
  SmallVector<int64_t> expected = {q[0], q[1], valueWidth};
  if (!isCompatibleShape(shapeOf(getOutput()), expected))
    return emitOpError("result shape ")
           << formatShape(shapeOf(getOutput()))
           << " does not match expected shape " << formatShape(expected);
  return success();
}

LogicalResult AttentionGradOp::verify() {
  Value operands[] = {getQuery(), getKey(), getValue(), getOutputGrad()};
  for (Value operand : operands)
    if (shapeOf(operand).size() != 3)
      return emitOpError("query, key, value and output_grad must be rank 3 "
                         "[batch, seq, hidden], got ")
             << formatShape(shapeOf(getQuery())) << ", "
             << formatShape(shapeOf(getKey())) << ", "
             << formatShape(shapeOf(getValue())) << " and "
             << formatShape(shapeOf(getOutputGrad()));
  Type element = elementTypeOf(getQuery());
  for (Value value : {getKey(), getValue(), getOutputGrad(), getQueryGrad(),
                      getKeyGrad(), getValueGrad()})
    if (elementTypeOf(value) != element)
      return emitOpError("operands and results must share the query's "
                         "element type ")
             << element << ", got " << elementTypeOf(value);
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    v = shapeOf(getValue()), dy = shapeOf(getOutputGrad());
  int64_t heads = getNumHeads();
  if (!ShapedType::isDynamic(q[2]) && q[2] % heads != 0)
    return emitOpError("query hidden size ")
           << q[2] << " is not divisible by num_heads " << heads;
  if (dimsDiffer(q[0], k[0]) || dimsDiffer(q[0], v[0]))
    return emitOpError("query, key and value batch sizes differ");
  // One head size D for query, key and value: the fused backward has no
  // value head size of its own.
  if (dimsDiffer(q[2], k[2]) || dimsDiffer(q[2], v[2]))
    return emitOpError("key and value hidden sizes ")
           << k[2] << " and " << v[2] << " must equal the query's " << q[2];
  if (dimsDiffer(k[1], v[1]))
    return emitOpError("key and value sequence lengths ")
           << k[1] << " and " << v[1] << " differ";
  if (!isCompatibleShape(dy, q))
    return emitOpError("output_grad shape ")
           << formatShape(dy) << " does not match the query's "
           << formatShape(q);
  if (std::optional<APFloat> scale = getScale();
      scale && !(scale->convertToFloat() > 0.0f))
    return emitOpError("scale must be positive, got ")
           << scale->convertToFloat();
  if (Value mask = getMask();
      mask && failed(verifyScoreMask(*this, mask, {q[0], heads, q[1], k[1]})))
    return failure();
  for (auto [result, operand] :
       {std::pair<Value, Value>{getQueryGrad(), getQuery()},
        {getKeyGrad(), getKey()},
        {getValueGrad(), getValue()}})
    if (!isCompatibleShape(shapeOf(result), shapeOf(operand)))
      return emitOpError("result shape ")
             << formatShape(shapeOf(result)) << " does not match its operand's "
             << formatShape(shapeOf(operand));
  return success();
}

LogicalResult SkipLayerNormOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (input.empty())
    return emitOpError("input must have rank 1 or more");
  std::optional<SmallVector<int64_t>> merged =
      broadcastShapes(input, shapeOf(getSkip()));
  if (!merged || !isCompatibleShape(*merged, input))
    return emitOpError("skip of shape ")
           << formatShape(shapeOf(getSkip()))
           << " does not broadcast to input shape " << formatShape(input);
  for (Value param : {getScale(), getBias()}) {
    if (!param)
      continue;
    ArrayRef<int64_t> shape = shapeOf(param);
    if (shape.size() != 1 || dimsDiffer(shape[0], input.back()))
      return emitOpError("scale and bias must be ")
             << formatShape({input.back()}) << ", got "
             << formatShape(shape);
  }
  for (Value result : {getOutput(), getSum()})
    if (result.getType() != getInput().getType())
      return emitOpError("result type ")
             << result.getType() << " does not match input type "
             << getInput().getType();
  return success();
}

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError("ratio ") << ratio << " is not in [0, 1)";
  if (getOutput().getType() != getInput().getType())
    return emitOpError("result type ")
           << getOutput().getType() << " does not match input type "
           << getInput().getType();
  if (!isCompatibleShape(shapeOf(getMask()), shapeOf(getInput())))
    return emitOpError("mask shape ")
           << formatShape(shapeOf(getMask())) << " does not match input shape "
           << formatShape(shapeOf(getInput()));
  return success();
}

LogicalResult AdamWOp::verify() {
  double beta1 = getBeta1().convertToDouble(),
         beta2 = getBeta2().convertToDouble();
  if (!(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0))
    return emitOpError("betas (") << beta1 << ", " << beta2
                                  << ") are not in [0, 1)";
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("epsilon ") << getEpsilon().convertToDouble()
                                   << " is not positive";
  if (!(getWeightDecay().convertToDouble() >= 0.0))
    return emitOpError("weight_decay ")
           << getWeightDecay().convertToDouble() << " is negative";
  return success();
}

LogicalResult DropoutMaskOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError("ratio ") << ratio << " is not in [0, 1)";
  int64_t stream = getStreamAttr().getInt();
  if (stream < 0 || stream > int64_t(UINT32_MAX))
    return emitOpError("stream ") << stream << " is not a 32-bit count";
  if (!isCompatibleShape(shapeOf(getMask()), shapeOf(getLike())))
    return emitOpError("mask shape ")
           << formatShape(shapeOf(getMask())) << " does not match "
           << formatShape(shapeOf(getLike()));
  return success();
}

LogicalResult GatherGradOp::verify() {
  auto output = llvm::cast<RankedTensorType>(getOutput().getType());
  auto grad = llvm::cast<RankedTensorType>(getGrad().getType());
  auto indices = llvm::cast<RankedTensorType>(getIndices().getType());
  if (output.getRank() < 1 || !output.hasStaticShape())
    return emitOpError("result type ")
           << output << " is not a static tensor of rank 1 or more";
  if (grad.getElementType() != output.getElementType())
    return emitOpError("gradient element type ")
           << grad.getElementType() << " does not match result element type "
           << output.getElementType();
  SmallVector<int64_t> expected(indices.getShape());
  llvm::append_range(expected, output.getShape().drop_front());
  if (!isCompatibleShape(grad.getShape(), expected))
    return emitOpError("gradient shape ")
           << formatShape(grad.getShape()) << " does not match indices shape "
           << formatShape(indices.getShape()) << " followed by the rows' "
           << formatShape(output.getShape().drop_front());
  return success();
}

/// Checks that `quantized` has a `quant` element type expressing `expressed`.
static LogicalResult verifyQuantPair(Operation *op, Value quantized,
                                     Value expressed) {
  Type elementType =
      llvm::cast<RankedTensorType>(quantized.getType()).getElementType();
  auto quantType = llvm::dyn_cast<quant::QuantizedType>(elementType);
  if (!quantType)
    return op->emitOpError("element type ")
           << elementType << " is not a quantized type";
  Type floatType =
      llvm::cast<RankedTensorType>(expressed.getType()).getElementType();
  if (quantType.getExpressedType() != floatType)
    return op->emitOpError("quantized type expresses ")
           << quantType.getExpressedType() << " but the float side is "
           << floatType;
  return success();
}

LogicalResult QuantizeOp::verify() {
  return verifyQuantPair(*this, getOutput(), getInput());
}

LogicalResult DequantizeOp::verify() {
  return verifyQuantPair(*this, getInput(), getOutput());
}
