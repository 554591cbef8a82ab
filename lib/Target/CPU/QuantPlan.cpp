//===- QuantPlan.cpp - Quantized lmopt.linear to a quant_linear step ------===//
//
// Maps each form in docs/dialect.md's table to the runtime's mode and
// writes the weight the way QuantLinearStep reads it: int8, bf16 and fp16
// weights are the IR constant's own bytes (fp16 stays 2 bytes a value); int4
// weights are repacked two per byte ([N, K/2], the even k in the low nibble)
// with their block scales ([N, K / block], f16 when every scale is an f16
// value) and zero points ([N, K / block] bytes, u4 ones packed two per byte)
// as separate tensors;
// per-channel scales become an f32 [N] tensor (or [1] per tensor).
//
//===----------------------------------------------------------------------===//

#include "QuantPlan.h"

#include "lmopt/Support/ResourceBlob.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cpu;
namespace rt = ::lmopt::runtime;

static std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static Type elementTypeOf(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getElementType();
}

bool mlir::lmopt::cpu::isBf16ProductLinear(LinearOp op) {
  // A constant bf16 weight is the quant_linear step's (packed once).
  return !op.getWeight().getDefiningOp<ConstantOp>() &&
         elementTypeOf(op.getInput()).isBF16() &&
         elementTypeOf(op.getWeight()).isBF16() &&
         elementTypeOf(op.getOutput()).isF32() &&
         op.getInputQuantization() == InputQuantization::none;
}

bool mlir::lmopt::cpu::isQuantizedLinear(LinearOp op) {
  if (isBf16ProductLinear(op))
    return false;
  return !elementTypeOf(op.getInput()).isF32() ||
         !elementTypeOf(op.getWeight()).isF32() ||
         op.getInputQuantization() != InputQuantization::none;
}

bool mlir::lmopt::cpu::onlyFeedsQuantizedLinears(Operation *op) {
  if (!isa<quant::StorageCastOp>(op) || op->getResult(0).use_empty())
    return false;
  for (OpOperand &use : op->getResult(0).getUses()) {
    auto linear = dyn_cast<LinearOp>(use.getOwner());
    if (!linear || use.getOperandNumber() != 1 || !isQuantizedLinear(linear))
      return false;
  }
  return true;
}

static rt::PlanAttr intAttr(StringRef name, int64_t value) {
  rt::PlanAttr a;
  a.name = name.str();
  a.kind = rt::PlanAttr::Kind::Int;
  a.intValue = value;
  return a;
}

/// The integer constant under a weight's storage cast, or null.
static ElementsAttr castConstant(Value weight) {
  auto cast = weight.getDefiningOp<quant::StorageCastOp>();
  if (!cast)
    return nullptr;
  Attribute value;
  if (!matchPattern(cast->getOperand(0), m_Constant(&value)))
    return nullptr;
  return llvm::dyn_cast<ElementsAttr>(value);
}

/// The constant's integers, one byte per element (sub-byte values in the
/// low bits).
static FailureOr<std::vector<uint8_t>> lowBytes(ElementsAttr attr,
                                                Location loc) {
  std::vector<uint8_t> storage;
  FailureOr<ArrayRef<uint8_t>> bytes = getConstantBytes(attr, loc, storage);
  if (failed(bytes))
    return failure();
  return std::vector<uint8_t>(bytes->begin(), bytes->end());
}

static DenseElementsAttr f32Tensor(MLIRContext *ctx, ArrayRef<int64_t> dims,
                                   ArrayRef<float> values) {
  auto type = RankedTensorType::get(dims, Float32Type::get(ctx));
  return DenseElementsAttr::get(type, values);
}

static DenseElementsAttr byteTensor(MLIRContext *ctx, ArrayRef<int64_t> dims,
                                    bool isSigned, ArrayRef<uint8_t> bytes) {
  auto type = RankedTensorType::get(
      dims,
      IntegerType::get(
          ctx, 8, isSigned ? IntegerType::Signless : IntegerType::Unsigned));
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()),
                           bytes.size()));
}

/// int8 weight: the constant as stored (re-typed u8 when unsigned), its
/// scales ([N] or [1]) and, when any is nonzero or the storage is unsigned,
/// its zero points (as many as scales, one byte each).
static LogicalResult lowerInt8Weight(LinearOp op, StringRef node, int64_t n,
                                     QuantLinearLowering &out) {
  auto diag = [&](const Twine &why) {
    return op.emitError() << "no CPU kernel for quantized linear (node '"
                          << node << "'): " << why;
  };
  Type weightType = elementTypeOf(op.getWeight());
  ElementsAttr raw = castConstant(op.getWeight());
  if (!raw)
    return diag("the int8 weight must be a storage cast of a constant");
  MLIRContext *ctx = op.getContext();
  std::vector<float> scales;
  std::vector<int64_t> zeroPoints;
  bool isSigned = true;
  if (auto perTensor =
          llvm::dyn_cast<quant::UniformQuantizedType>(weightType)) {
    scales.push_back(float(perTensor.getScale()));
    zeroPoints.push_back(perTensor.getZeroPoint());
    isSigned = perTensor.isSigned();
  } else if (auto perAxis = llvm::dyn_cast<quant::UniformQuantizedPerAxisType>(
                 weightType)) {
    for (double s : perAxis.getScales())
      scales.push_back(float(s));
    zeroPoints.assign(perAxis.getZeroPoints().begin(),
                      perAxis.getZeroPoints().end());
    isSigned = perAxis.isSigned();
  } else {
    return diag("unsupported weight type " + Twine(typeString(weightType)));
  }
  int64_t count = int64_t(scales.size());
  if (count != 1 && count != n)
    return diag("expected 1 or " + Twine(n) + " weight scales, got " +
                Twine(count));
  bool anyZeroPoint =
      llvm::any_of(zeroPoints, [](int64_t z) { return z != 0; });
  if ((anyZeroPoint || !isSigned) &&
      op.getInputQuantization() != InputQuantization::dynamic_per_tensor)
    return diag("int8 weights with zero points or unsigned storage (" +
                typeString(weightType) +
                ") run only with dynamic_per_tensor input quantization");
  if (isSigned) {
    out.constants.push_back({node.str() + ".weight", raw});
  } else {
    auto shape = llvm::cast<ShapedType>(raw.getType()).getShape();
    FailureOr<std::vector<uint8_t>> bytes = lowBytes(raw, op.getLoc());
    if (failed(bytes))
      return failure();
    out.constants.push_back(
        {node.str() + ".weight", byteTensor(ctx, shape, false, *bytes)});
  }
  out.constants.push_back(
      {node.str() + ".scales", f32Tensor(ctx, {count}, scales)});
  if (anyZeroPoint) {
    std::vector<uint8_t> bytes;
    for (int64_t z : zeroPoints)
      bytes.push_back(uint8_t(z & 0xFF));
    out.constants.push_back({node.str() + ".zero_points",
                             byteTensor(ctx, {count}, isSigned, bytes)});
  }
  out.attrs.push_back(intAttr("weight_signed", isSigned));
  out.attrs.push_back(intAttr("has_zero_points", anyZeroPoint));
  return success();
}

/// int4 weight: repacked [N, K/2] bytes, scales and zero points [N, K/B].
static LogicalResult lowerInt4Weight(LinearOp op, StringRef node, int64_t k,
                                     int64_t n, QuantLinearLowering &out) {
  auto diag = [&](const Twine &why) {
    return op.emitError() << "no CPU kernel for quantized linear (node '"
                          << node << "'): " << why;
  };
  auto type = llvm::cast<quant::UniformQuantizedSubChannelType>(
      elementTypeOf(op.getWeight()));
  ElementsAttr raw = castConstant(op.getWeight());
  if (!raw)
    return diag("the int4 weight must be a storage cast of a constant");
  if (type.getStorageTypeIntegralWidth() != 4)
    return diag("block-wise weights must be 4-bit, got " +
                Twine(typeString(Type(type))));
  bool transposed = op.getTransposeWeight();
  // Blocks run along K: axis 1 of an [N, K] weight, axis 0 of a [K, N] one.
  int64_t block = 0;
  for (auto [axis, size] : type.getBlockSizeInfo())
    if (axis == (transposed ? 1 : 0))
      block = size;
  if (block <= 0 || block % 2 != 0 || k % block != 0)
    return diag("int4 block size " + Twine(block) +
                " must be even and divide K = " + Twine(k));
  int64_t blocks = k / block;
  FailureOr<std::vector<uint8_t>> values = lowBytes(raw, op.getLoc());
  if (failed(values))
    return failure();
  if (int64_t(values->size()) != n * k)
    return diag("the int4 weight constant holds " + Twine(values->size()) +
                " bytes; expected one per value (" + Twine(n * k) + ")");
  auto at = [&](int64_t row, int64_t col) { // (n, k)
    return (*values)[size_t(transposed ? row * k + col : col * n + row)];
  };
  std::vector<uint8_t> packed(size_t(n * k / 2), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c)
      packed[size_t(r * (k / 2) + c / 2)] |=
          uint8_t((at(r, c) & 0xF) << (c % 2 ? 4 : 0));
  // The type's scales and zero points are shaped like the weight with each
  // blocked dim divided by its block size: [N, K/B] or [K/B, N].
  DenseElementsAttr scaleAttr = type.getScales();
  DenseElementsAttr zpAttr = type.getZeroPoints();
  std::vector<float> scales(size_t(n * blocks));
  std::vector<uint8_t> zps(size_t(n * blocks));
  bool anyZeroPoint = false;
  auto scaleValues = llvm::to_vector(scaleAttr.getValues<APFloat>());
  auto zpValues = llvm::to_vector(zpAttr.getValues<APInt>());
  if (int64_t(scaleValues.size()) != n * blocks ||
      int64_t(zpValues.size()) != n * blocks)
    return diag("expected " + Twine(n * blocks) + " block scales");
  for (int64_t r = 0; r < n; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      size_t from = size_t(transposed ? r * blocks + b : b * n + r);
      bool loses = false;
      APFloat s = scaleValues[from];
      s.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &loses);
      scales[size_t(r * blocks + b)] = s.convertToFloat();
      // A u4 zero point may be held as a 4-bit pattern that prints (and
      // sign-extends) as negative: keep its low four bits.
      int64_t z = zpValues[from].getSExtValue();
      if (!type.isSigned())
        z &= 0xF;
      zps[size_t(r * blocks + b)] = uint8_t(z & 0xFF);
      anyZeroPoint |= z != 0;
    }
  MLIRContext *ctx = op.getContext();
  bool isSigned = type.isSigned();
  out.constants.push_back(
      {node.str() + ".weight", byteTensor(ctx, {n, k / 2}, isSigned, packed)});
  // Scales go as f16 when every one is an f16 value (lmopt-quantize rounds
  // them so), else as f32.
  bool allHalf = llvm::all_of(scales, [](float s) {
    bool loses = false;
    APFloat h(s);
    h.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &loses);
    return !loses;
  });
  if (allHalf) {
    SmallVector<APFloat> halves;
    for (float s : scales) {
      bool loses = false;
      APFloat h(s);
      h.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &loses);
      halves.push_back(h);
    }
    out.constants.push_back(
        {node.str() + ".scales",
         DenseElementsAttr::get(
             RankedTensorType::get({n, blocks}, Float16Type::get(ctx)),
             halves)});
  } else {
    out.constants.push_back(
        {node.str() + ".scales", f32Tensor(ctx, {n, blocks}, scales)});
  }
  // u4 zero points go two per byte along the blocks (the even block in the
  // low nibble): [N, ceil(blocks / 2)]; i4 ones one per byte.
  if (anyZeroPoint && !isSigned) {
    int64_t packedCols = (blocks + 1) / 2;
    std::vector<uint8_t> packedZps(size_t(n * packedCols), 0);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t b = 0; b < blocks; ++b)
        packedZps[size_t(r * packedCols + b / 2)] |=
            uint8_t((zps[size_t(r * blocks + b)] & 0xF) << (b % 2 ? 4 : 0));
    out.constants.push_back(
        {node.str() + ".zero_points",
         byteTensor(ctx, {n, packedCols}, isSigned, packedZps)});
  } else if (anyZeroPoint) {
    out.constants.push_back({node.str() + ".zero_points",
                             byteTensor(ctx, {n, blocks}, isSigned, zps)});
  }
  out.attrs.push_back(intAttr("block_size", block));
  out.attrs.push_back(intAttr("weight_signed", isSigned));
  out.attrs.push_back(intAttr("has_zero_points", anyZeroPoint));
  return success();
}

FailureOr<QuantLinearLowering>
mlir::lmopt::cpu::lowerQuantizedLinear(LinearOp op, StringRef node) {
  auto diag = [&](const Twine &why) {
    return op.emitError() << "no CPU kernel for quantized linear (node '"
                          << node << "'): " << why;
  };
  Type input = elementTypeOf(op.getInput());
  Type weight = elementTypeOf(op.getWeight());
  Type output = elementTypeOf(op.getOutput());
  if (!output.isF32())
    return diag("the result must be f32, got " + Twine(typeString(output)));
  auto inputShape = llvm::cast<ShapedType>(op.getInput().getType()).getShape();
  auto weightShape =
      llvm::cast<ShapedType>(op.getWeight().getType()).getShape();
  int64_t k = inputShape.back();
  int64_t n = weightShape[op.getTransposeWeight() ? 0 : 1];
  QuantLinearLowering out;
  std::string mode;
  if (op.getInputQuantization() == InputQuantization::dynamic_per_token ||
      op.getInputQuantization() == InputQuantization::dynamic_per_tensor) {
    mode = op.getInputQuantization() == InputQuantization::dynamic_per_token
               ? "int8_dynamic_per_token"
               : "int8_dynamic_per_tensor";
    if (failed(lowerInt8Weight(op, node, n, out)))
      return failure();
  } else if (auto q = llvm::dyn_cast<quant::UniformQuantizedType>(input)) {
    mode = "int8_static";
    if (q.getStorageTypeIntegralWidth() != 8)
      return diag("a static quantized input must be 8-bit, got " +
                  Twine(typeString(input)));
    if (failed(lowerInt8Weight(op, node, n, out)))
      return failure();
    rt::PlanAttr scale;
    scale.name = "input_scale";
    scale.kind = rt::PlanAttr::Kind::Float;
    scale.floatValue = double(float(q.getScale()));
    out.attrs.push_back(scale);
    out.attrs.push_back(intAttr("input_zero_point", q.getZeroPoint()));
  } else if (input.isF32() &&
             llvm::isa<quant::UniformQuantizedSubChannelType>(weight)) {
    mode = "int4_weight_only";
    if (failed(lowerInt4Weight(op, node, k, n, out)))
      return failure();
  } else if ((input.isBF16() && weight.isBF16()) ||
             (input.isF16() && weight.isF16())) {
    mode = input.isBF16() ? "bf16" : "fp16";
    Attribute value;
    if (!matchPattern(op.getWeight(), m_Constant(&value)))
      return diag("the " + Twine(mode) + " weight must be a constant");
    out.constants.push_back(
        {node.str() + ".weight", llvm::cast<ElementsAttr>(value)});
  } else {
    return diag("input " + typeString(input) + " with weight " +
                typeString(weight) + " (this form has no CPU kernel)");
  }
  rt::PlanAttr modeAttr;
  modeAttr.name = "mode";
  modeAttr.kind = rt::PlanAttr::Kind::String;
  modeAttr.stringValue = mode;
  out.attrs.insert(out.attrs.begin(), modeAttr);
  // int4 weights are always stored [N, K/2].
  out.attrs.push_back(intAttr("transpose_weight", mode == "int4_weight_only" ||
                                                      op.getTransposeWeight()));
  out.attrs.push_back(
      intAttr("activation", static_cast<int64_t>(op.getActivation())));
  out.attrs.push_back(intAttr("has_bias", op.getBias() != nullptr));
  out.attrs.push_back(intAttr("has_residual", op.getResidual() != nullptr));
  return out;
}
