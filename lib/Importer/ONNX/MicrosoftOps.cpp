//===- MicrosoftOps.cpp - ONNX Runtime's com.microsoft fused ops ----------===//
//
// What onnxruntime.transformers.optimizer and MatMulNBitsQuantizer write:
// MatMulNBits (4-bit block-wise weights), Attention (packed QKV),
// SkipLayerNormalization, FastGelu, BiasGelu and Gelu. Each maps onto
// lmopt's fused ops; MatMulNBits keeps its weight packed as an int4 constant
// with a sub-channel `quant` type.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "QuantParams.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/Dialect/Quant/IR/Quant.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

static constexpr StringLiteral kMicrosoft = "com.microsoft";

/// Reports every output in `outputs` (index, name) that the model uses.
static LogicalResult
refuseOutputs(NodeContext &ctx,
              ArrayRef<std::pair<size_t, StringRef>> outputs) {
  for (auto [index, name] : outputs)
    if (ctx.hasOutput(index))
      return ctx.emitError()
             << "output " << index << " ('" << name << "') is not supported";
  return success();
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// Gelu, FastGelu (tanh approximation) and BiasGelu: an optional bias add
/// (input 1) followed by `lmopt.gelu`.
template <GeluApproximation Approximation, size_t MinInputs, size_t MaxInputs>
static LogicalResult convertGelu(NodeContext &ctx) {
  if (failed(ctx.checkInputs(MinInputs, MaxInputs)))
    return failure();
  Value input = ctx.getInput(0);
  if (ctx.hasInput(1)) {
    FailureOr<Value> sum = buildBroadcastAdd(ctx, input, ctx.getInput(1));
    if (failed(sum))
      return failure();
    input = *sum;
  }
  if (!llvm::isa<FloatType>(
          llvm::cast<RankedTensorType>(input.getType()).getElementType()))
    return ctx.emitError() << "input of type " << input.getType()
                           << " is not a float tensor";
  ctx.setOutput(
      0,
      ctx.createOp<GeluOp>(input.getType(), input, Approximation).getOutput());
  return success();
}

//===----------------------------------------------------------------------===//
// SkipLayerNormalization
//===----------------------------------------------------------------------===//

static LogicalResult convertSkipLayerNorm(NodeContext &ctx) {
  if (failed(ctx.checkInputs(3, 5)))
    return failure();
  FailureOr<float> epsilon = ctx.getFloat("epsilon", 1e-12f);
  if (failed(epsilon))
    return failure();
  if (failed(refuseOutputs(ctx, {{1, "mean"}, {2, "inv_std_var"}})))
    return failure();
  Value input = ctx.getInput(0);
  // ONNX Runtime adds the optional bias to the sum it normalizes and returns.
  if (ctx.hasInput(4)) {
    FailureOr<Value> biased = buildBroadcastAdd(ctx, input, ctx.getInput(4));
    if (failed(biased))
      return failure();
    input = *biased;
  }
  RankedTensorType type = llvm::cast<RankedTensorType>(input.getType());
  if (type.getRank() < 1)
    return ctx.emitError() << "input must have rank 1 or more";
  auto op = ctx.createOp<SkipLayerNormOp>(type, type, input, ctx.getInput(1),
                                          ctx.getInput(2), ctx.getInput(3),
                                          APFloat(*epsilon));
  ctx.setOutput(0, op.getOutput());
  ctx.setOutput(3, op.getSum());
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Turns `mask_index` into a boolean mask broadcasting to the scores
/// `[batch, heads, seq, total_seq]`, true where attended, shaped
/// `[batch, 1, 1, total_seq]`. Supported forms: a 2-D `[batch, total_seq]`
/// 0/1 mask, and a 1-D `[batch]` count of valid keys (right padding, what
/// the optimizer derives from a 0/1 mask by default).
static FailureOr<Value> convertMaskIndex(NodeContext &ctx, Value maskIndex) {
  auto type = llvm::cast<RankedTensorType>(maskIndex.getType());
  RankedTensorType input = ctx.getInputType(0);
  MLIRContext *context = ctx.getContext();
  auto i1 = IntegerType::get(context, 1);
  int64_t batch = input.getDimSize(0), seq = input.getDimSize(1);
  bool lengths = type.getRank() == 1 &&
                 (ShapedType::isDynamic(type.getDimSize(0)) ||
                  ShapedType::isDynamic(batch) || type.getDimSize(0) == batch);
  if (!type.getElementType().isInteger(32) || (type.getRank() != 2 && !lengths))
    return ctx.emitError()
           << "'mask_index' of type " << type
           << " is not supported; lmopt imports a 2-D [batch, total_sequence] "
              "0/1 mask, a 1-D [batch] count of valid keys (right padding), "
              "or no mask";
  Value mask;
  if (lengths) {
    auto i64 = IntegerType::get(context, 64);
    Value counts =
        ctx.createOp<CastOp>(RankedTensorType::get(type.getShape(), i64),
                             maskIndex)
            .getOutput();
    counts = ctx.createOp<UnsqueezeOp>(
                    RankedTensorType::get({type.getDimSize(0), 1}, i64), counts,
                    ArrayRef<int64_t>{1})
                 .getOutput();
    mask = ctx.createOp<LessOp>(
                  RankedTensorType::get({type.getDimSize(0), seq}, i1),
                  createPositions(ctx, ctx.getInput(0), 1), counts)
               .getOutput();
  } else {
    mask = ctx.createOp<CastOp>(RankedTensorType::get(type.getShape(), i1),
                                maskIndex)
               .getOutput();
  }
  auto maskType = llvm::cast<RankedTensorType>(mask.getType());
  auto expanded = RankedTensorType::get(
      {maskType.getDimSize(0), 1, 1, maskType.getDimSize(1)}, i1);
  return ctx.createOp<UnsqueezeOp>(expanded, mask, ArrayRef<int64_t>{1, 2})
      .getOutput();
}

static LogicalResult convertAttention(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 7)))
    return failure();
  static constexpr StringLiteral optionalInputs[] = {"past", "attention_bias",
                                                     "past_sequence_length"};
  for (size_t i = 4; i < 7; ++i)
    if (ctx.hasInput(i))
      return ctx.emitError() << "input " << i << " ('" << optionalInputs[i - 4]
                             << "') is not supported";
  if (failed(refuseOutputs(ctx, {{1, "present"}})))
    return failure();
  FailureOr<int64_t> numHeads = ctx.getInt("num_heads");
  FailureOr<int64_t> unidirectional = ctx.getInt("unidirectional", 0);
  FailureOr<float> scale = ctx.getFloat("scale", 0.0f);
  FailureOr<int64_t> rotary = ctx.getInt("do_rotary", 0);
  if (failed(numHeads) || failed(unidirectional) || failed(scale) ||
      failed(rotary))
    return failure();
  if (*numHeads <= 0)
    return ctx.emitError() << "num_heads " << *numHeads << " must be positive";
  if (*rotary)
    return ctx.emitError() << "do_rotary is not supported";
  RankedTensorType input = ctx.getInputType(0), weights = ctx.getInputType(1);
  if (input.getRank() != 3 || weights.getRank() != 2)
    return ctx.emitError() << "'input' must be [batch, sequence, hidden] and "
                              "'weights' 2-D, got "
                           << formatShape(input.getShape()) << " and "
                           << formatShape(weights.getShape());
  int64_t total = weights.getDimSize(1);
  SmallVector<int64_t> sizes;
  if (ctx.hasAttr("qkv_hidden_sizes")) {
    FailureOr<SmallVector<int64_t>> given = ctx.getInts("qkv_hidden_sizes");
    if (failed(given))
      return failure();
    sizes = *given;
  } else if (!ShapedType::isDynamic(total) && total % 3 == 0) {
    sizes.assign(3, total / 3);
  }
  // Sizes past 2^40 cannot be real and would overflow the sum.
  auto isValidSize = [](int64_t s) { return s > 0 && s < (int64_t(1) << 40); };
  if (sizes.size() != 3 || !llvm::all_of(sizes, isValidSize) ||
      (!ShapedType::isDynamic(total) &&
       sizes[0] + sizes[1] + sizes[2] != total))
    return ctx.emitError() << "cannot split 'weights' of shape "
                           << formatShape(weights.getShape())
                           << " into query, key and value";
  if (sizes[0] != sizes[1] || sizes[0] % *numHeads || sizes[2] % *numHeads)
    return ctx.emitError() << "query, key and value sizes "
                           << formatShape(sizes)
                           << " do not split into num_heads " << *numHeads;
  Type elementType = input.getElementType();
  int64_t batch = input.getDimSize(0), seq = input.getDimSize(1);
  auto projected = RankedTensorType::get({batch, seq, total}, elementType);
  Value qkv =
      ctx.createOp<LinearOp>(projected, ctx.getInput(0), ctx.getInput(1),
                             ctx.getInput(2), Value(), false, Activation::none)
          .getOutput();
  SmallVector<Type> partTypes;
  for (int64_t size : sizes)
    partTypes.push_back(RankedTensorType::get({batch, seq, size}, elementType));
  auto split = ctx.createOp<SplitOp>(partTypes, qkv, 2, sizes);
  Value mask;
  if (ctx.hasInput(3)) {
    FailureOr<Value> converted = convertMaskIndex(ctx, ctx.getInput(3));
    if (failed(converted))
      return failure();
    mask = *converted;
  }
  FloatAttr scaleAttr;
  if (*scale != 0.0f)
    scaleAttr = ctx.getBuilder().getF32FloatAttr(*scale);
  auto outputType = RankedTensorType::get({batch, seq, sizes[2]}, elementType);
  auto op = ctx.createOp<AttentionOp>(
      outputType, split.getResult(0), split.getResult(1), split.getResult(2),
      mask, /*bias=*/Value(), static_cast<uint64_t>(*numHeads), scaleAttr,
      *unidirectional != 0,
      /*kv_heads_split=*/false, /*zero_masked_rows=*/false,
      /*num_kv_heads=*/IntegerAttr());
  ctx.setOutput(0, op.getOutput());
  return success();
}

//===----------------------------------------------------------------------===//
// MatMulNBits
//===----------------------------------------------------------------------===//

namespace {
/// Attributes of one MatMulNBits node, checked against each other.
struct NBitsShape {
  int64_t k, n, blockSize, numBlocks, blobSize;
};
} // namespace

static FailureOr<NBitsShape> readNBitsShape(NodeContext &ctx) {
  FailureOr<int64_t> k = ctx.getInt("K"), n = ctx.getInt("N");
  FailureOr<int64_t> bits = ctx.getInt("bits", 4);
  FailureOr<int64_t> blockSize = ctx.getInt("block_size");
  if (failed(k) || failed(n) || failed(bits) || failed(blockSize))
    return failure();
  if (*bits != 4)
    return ctx.emitError() << "bits " << *bits
                           << " is not supported; lmopt imports 4-bit weights";
  if (*blockSize < 16 || (*blockSize & (*blockSize - 1)))
    return ctx.emitError() << "block_size " << *blockSize
                           << " must be a power of 2 and at least 16";
  if (*k <= 0 || *n <= 0)
    return ctx.emitError() << "K " << *k << " and N " << *n
                           << " must be positive";
  if (*k % *blockSize)
    return ctx.emitError() << "K " << *k << " is not a multiple of block_size "
                           << *blockSize
                           << ", which lmopt's block-wise type cannot express";
  int64_t numBlocks = *k / *blockSize;
  return NBitsShape{*k, *n, *blockSize, numBlocks, *blockSize / 2};
}

/// The 4-bit value `index` of a packed byte array, low nibble first.
static int64_t getNibble(ArrayRef<char> bytes, int64_t index) {
  auto byte = static_cast<uint8_t>(bytes[index / 2]);
  return index % 2 ? byte >> 4 : byte & 0xF;
}

static LogicalResult convertMatMulNBits(NodeContext &ctx) {
  if (failed(ctx.checkInputs(3, 6)))
    return failure();
  FailureOr<NBitsShape> shape = readNBitsShape(ctx);
  if (failed(shape))
    return failure();
  if (ctx.hasInput(4))
    return ctx.emitError() << "input 4 ('g_idx') is not supported";
  const auto [k, n, blockSize, numBlocks, blobSize] = *shape;
  RankedTensorType a = ctx.getInputType(0);
  auto floatType = llvm::dyn_cast<FloatType>(a.getElementType());
  if (a.getRank() < 1 || !floatType)
    return ctx.emitError() << "input 'A' of type " << a
                           << " must be a float tensor of rank 1 or more";
  if (!ShapedType::isDynamic(a.getShape().back()) && a.getShape().back() != k)
    return ctx.emitError() << "input 'A' of shape " << formatShape(a.getShape())
                           << " does not end in K " << k;

  ElementsAttr weightAttr = getConstantAttr(ctx.getInput(1));
  SmallVector<int64_t> expectedB = {n, numBlocks, blobSize};
  if (!weightAttr || !weightAttr.getElementType().isUnsignedInteger(8) ||
      weightAttr.getShapedType().getShape() != ArrayRef<int64_t>(expectedB))
    return ctx.emitError()
           << "input 'B' must be a constant uint8 tensor of shape "
           << formatShape(expectedB) << " (N, K / block_size, block_size / 2)"
           << ", got " << ctx.getInputType(1);
  ElementsAttr scaleAttr = getConstantAttr(ctx.getInput(2));
  std::optional<SmallVector<double>> scales =
      scaleAttr ? readFloats(scaleAttr) : std::nullopt;
  if (!scales || scaleAttr.getElementType() != floatType ||
      static_cast<int64_t>(scales->size()) != n * numBlocks)
    return ctx.emitError() << "input 'scales' must be a constant " << floatType
                           << " tensor of " << n * numBlocks
                           << " elements (N * K / block_size), got "
                           << ctx.getInputType(2);

  // Zero points: packed 4-bit, ceil(numBlocks / 2) bytes per row; 8 when
  // absent (the middle of the unsigned range).
  SmallVector<int64_t> zeroPoints(n * numBlocks, 8);
  if (ctx.hasInput(3)) {
    ElementsAttr zeroAttr = getConstantAttr(ctx.getInput(3));
    int64_t rowBytes = (numBlocks + 1) / 2;
    if (!zeroAttr || !zeroAttr.getElementType().isUnsignedInteger(8) ||
        zeroAttr.getNumElements() != n * rowBytes)
      return ctx.emitError()
             << "input 'zero_points' must be a constant uint8 tensor of "
             << n * rowBytes
             << " elements (packed 4-bit, N * ceil(K / block_size / 2)), got "
             << ctx.getInputType(3);
    std::optional<std::vector<char>> bytes = readBytes(zeroAttr);
    if (!bytes)
      return ctx.emitError() << "cannot read input 'zero_points'";
    for (int64_t row = 0; row < n; ++row)
      for (int64_t block = 0; block < numBlocks; ++block)
        zeroPoints[row * numBlocks + block] =
            getNibble(*bytes, row * rowBytes * 2 + block);
  }

  std::optional<std::vector<char>> packed = readBytes(weightAttr);
  if (!packed)
    return ctx.emitError() << "cannot read input 'B'";
  // [N, numBlocks, blob] packed row-major is [N, K] in nibbles.
  std::vector<char> unpacked(n * k);
  for (int64_t i = 0; i < n * k; ++i)
    unpacked[i] = static_cast<char>(getNibble(*packed, i));
  MLIRContext *context = ctx.getContext();
  auto int4 = IntegerType::get(context, 4);
  auto weightType = RankedTensorType::get({n, k}, int4);
  Value weight = ctx.createOp<ConstantOp>(DenseElementsAttr::getFromRawBuffer(
                                              weightType, unpacked))
                     .getOutput();

  QuantLayout layout;
  layout.perAxis = true;
  layout.axis = 1;
  layout.blockSize = blockSize;
  layout.paramShape = {n, numBlocks};
  quant::QuantizedType quantType =
      buildQuantType(ctx, IntegerType::get(context, 4, IntegerType::Unsigned),
                     floatType, {n, k}, layout, *scales, zeroPoints);
  if (!quantType)
    return failure();
  Value quantized = ctx.createOp<quant::StorageCastOp>(
                           RankedTensorType::get({n, k}, quantType), weight)
                        .getResult();
  Value dequantized =
      ctx.createOp<DequantizeOp>(RankedTensorType::get({n, k}, floatType),
                                 quantized)
          .getOutput();

  SmallVector<int64_t> resultShape(a.getShape().drop_back());
  resultShape.push_back(n);
  auto op = ctx.createOp<LinearOp>(
      RankedTensorType::get(resultShape, floatType), ctx.getInput(0),
      dequantized, ctx.getInput(5), Value(), true, Activation::none);
  ctx.setOutput(0, op.getOutput());
  return success();
}

static const ConverterEntry kMicrosoftConverters[] = {
    {kMicrosoft, "MatMulNBits", 1, 1, convertMatMulNBits},
    {kMicrosoft, "Attention", 1, 1, convertAttention},
    {kMicrosoft, "SkipLayerNormalization", 1, 1, convertSkipLayerNorm},
    {kMicrosoft, "FastGelu", 1, 1, convertGelu<GeluApproximation::tanh, 1, 2>},
    {kMicrosoft, "BiasGelu", 1, 1, convertGelu<GeluApproximation::none, 2, 2>},
    {kMicrosoft, "Gelu", 1, 1, convertGelu<GeluApproximation::none, 1, 1>},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getMicrosoftConverters() {
  return kMicrosoftConverters;
}
