//===- Quantize.cpp - quantize the weights of lmopt.linear ----------------===//
//
// `lmopt-quantize`: every linear with an f32 input and a constant f32 weight
// becomes the form of the chosen mode (docs/dialect.md, "Quantized and
// mixed-precision linears"; options and diagnostics in
// docs/quantization.md).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"

#include "QuantizeWeights.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

namespace mlir::lmopt {
#define GEN_PASS_DEF_QUANTIZEPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

/// The fusion report kind under which quantized and skipped linears appear.
static constexpr llvm::StringLiteral kQuantizeKind = "quantize";
/// The kind under which quantized gather tables appear.
static constexpr llvm::StringLiteral kQuantizeEmbeddingKind =
    "quantize_embedding";

std::optional<QuantizeMode> mlir::lmopt::parseQuantizeMode(StringRef name) {
  return llvm::StringSwitch<std::optional<QuantizeMode>>(name)
      .Case("int8-dynamic", QuantizeMode::Int8Dynamic)
      .Case("int8-dynamic-per-tensor", QuantizeMode::Int8DynamicPerTensor)
      .Case("int8-static", QuantizeMode::Int8Static)
      .Case("int4-weight", QuantizeMode::Int4Weight)
      .Case("bf16", QuantizeMode::BF16)
      .Case("fp16", QuantizeMode::FP16)
      .Default(std::nullopt);
}

std::optional<bool> mlir::lmopt::parseAttentionPrecision(StringRef word,
                                                         QuantizeMode mode) {
  if (word == "auto")
    return mode == QuantizeMode::BF16;
  if (word == "bf16")
    return true;
  if (word == "f32")
    return false;
  return std::nullopt;
}

std::string mlir::lmopt::getLayerName(Operation *op) {
  std::string name;
  op->getLoc()->walk([&](Location loc) {
    if (auto named = llvm::dyn_cast<NameLoc>(loc)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

FailureOr<llvm::StringMap<InputRange>>
mlir::lmopt::readCalibrationTable(StringRef path, Location loc) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return emitError(loc) << "cannot read calibration table '" << path
                          << "': " << buffer.getError().message();
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return emitError(loc) << "calibration table '" << path << "' is not JSON: "
                          << llvm::toString(json.takeError());
  const llvm::json::Object *root = json->getAsObject();
  std::optional<int64_t> version =
      root ? root->getInteger("version") : std::nullopt;
  if (!version || *version != 1)
    return emitError(loc) << "calibration table '" << path
                          << "' must be an object with \"version\": 1";
  const llvm::json::Object *tensors = root->getObject("tensors");
  if (!tensors)
    return emitError(loc) << "calibration table '" << path
                          << "' has no \"tensors\" object";
  llvm::StringMap<InputRange> table;
  for (const auto &[key, value] : *tensors) {
    const llvm::json::Object *entry = value.getAsObject();
    std::optional<double> min = entry ? entry->getNumber("min") : std::nullopt;
    std::optional<double> max = entry ? entry->getNumber("max") : std::nullopt;
    if (!min || !max || !std::isfinite(*min) || !std::isfinite(*max) ||
        *min > *max)
      return emitError(loc)
             << "calibration table '" << path << "': entry '" << key.str()
             << "' needs finite numbers \"min\" <= \"max\"";
    table[key.str()] = {*min, *max};
  }
  return table;
}

/// An integer constant holding `values`: `dense_resource` for 8-bit, a
/// `dense` attribute (one value per byte) for 4-bit, as the importer stores
/// them.
static Value createIntegerConstant(OpBuilder &builder, Location loc,
                                   ArrayRef<int64_t> shape, unsigned width,
                                   ArrayRef<int8_t> values) {
  auto type = RankedTensorType::get(
      shape, IntegerType::get(builder.getContext(), width));
  ElementsAttr attr;
  if (width == 8) {
    ArrayRef<char> bytes(reinterpret_cast<const char *>(values.data()),
                         values.size());
    attr = DenseResourceElementsAttr::get(
        type, "quantized_weight",
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 1));
  } else {
    SmallVector<APInt> ints;
    for (int8_t value : values)
      ints.push_back(APInt(width, value, /*isSigned=*/true,
                           /*implicitTrunc=*/true));
    attr = DenseElementsAttr::get(type, ints);
  }
  return ConstantOp::create(builder, loc, attr).getOutput();
}

/// `quant.scast` of the integer constant of `weight`.
static Value createQuantizedWeight(OpBuilder &builder, Location loc,
                                   ArrayRef<int64_t> shape,
                                   const QuantizedWeight &weight) {
  Value bits = createIntegerConstant(builder, loc, shape,
                                     weight.type.getStorageTypeIntegralWidth(),
                                     weight.values);
  return quant::StorageCastOp::create(
             builder, loc, RankedTensorType::get(shape, weight.type), bits)
      .getResult();
}

/// The weight converted to bf16 or f16, rounding to nearest even.
static Value createHalfWeight(OpBuilder &builder, Location loc,
                              ArrayRef<int64_t> shape, ArrayRef<float> w,
                              FloatType type) {
  SmallVector<APFloat> values;
  for (float x : w) {
    APFloat value(x);
    bool losesInfo = false;
    value.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    values.push_back(value);
  }
  auto tensorType = RankedTensorType::get(shape, type);
  return ConstantOp::create(builder, loc,
                            DenseElementsAttr::get(tensorType, values))
      .getOutput();
}

namespace {

/// Rewrites the linears of one root with one set of options.
class LinearQuantizer {
public:
  LinearQuantizer(const QuantizeOptions &options) : options(options) {}

  FailureOr<QuantizeSummary> run(Operation *root);

private:
  LogicalResult quantize(LinearOp linear, StringRef name);
  FailureOr<QuantizedWeight> quantizeInt4(LinearOp linear, StringRef name,
                                          ArrayRef<float> values);
  LogicalResult quantizeTable(GatherOp gather, StringRef name);
  bool isExcluded(StringRef name) const;

  const QuantizeOptions &options;
  SmallVector<llvm::GlobPattern> excludes;
  QuantizeSummary summary;
};

} // namespace

bool LinearQuantizer::isExcluded(StringRef name) const {
  return llvm::any_of(excludes, [&](const llvm::GlobPattern &pattern) {
    return pattern.match(name);
  });
}

FailureOr<QuantizeSummary> LinearQuantizer::run(Operation *root) {
  for (const std::string &glob : options.exclude) {
    llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(glob);
    if (!pattern)
      return root->emitError() << "invalid exclude pattern '" << glob
                               << "': " << llvm::toString(pattern.takeError());
    excludes.push_back(std::move(*pattern));
  }
  getFusionReport(root->getContext()).registerKind(kQuantizeKind);
  SmallVector<LinearOp> linears;
  root->walk([&](LinearOp linear) { linears.push_back(linear); });
  bool failedAny = false;
  for (LinearOp linear : linears) {
    std::string name = getLayerName(linear);
    if (isExcluded(name)) {
      ++summary.skippedExcluded;
      continue;
    }
    // Report every bad layer before failing.
    if (failed(quantize(linear, name)))
      failedAny = true;
  }
  if (options.quantizeEmbeddings) {
    getFusionReport(root->getContext()).registerKind(kQuantizeEmbeddingKind);
    SmallVector<GatherOp> gathers;
    root->walk([&](GatherOp gather) { gathers.push_back(gather); });
    for (GatherOp gather : gathers) {
      std::string name = getLayerName(gather);
      if (!isExcluded(name) && failed(quantizeTable(gather, name)))
        failedAny = true;
    }
  }
  // Each attention may run its two products in bf16 with f32 accumulation
  // (the softmax stays f32): by default in mode bf16, as the linears do.
  if (options.attentionBf16) {
    MLIRContext *context = root->getContext();
    root->walk([&](AttentionOp attention) {
      if (isExcluded(getLayerName(attention)))
        return;
      attention->setAttr(kBf16ProductsAttr, UnitAttr::get(context));
      ++summary.attentionBf16;
    });
  }
  if (failedAny)
    return failure();
  return summary;
}

LogicalResult LinearQuantizer::quantize(LinearOp linear, StringRef name) {
  Value weight = linear.getWeight();
  FailureOr<std::vector<float>> values = readF32Constant(weight);
  FusionReport &report = getFusionReport(linear.getContext());
  if (!llvm::cast<ShapedType>(linear.getInput().getType())
           .getElementType()
           .isF32() ||
      linear.getInputQuantization() != InputQuantization::none ||
      linear.getTransposeInput() || failed(values)) {
    ++summary.skippedNotConstant;
    linear.emitRemark() << "linear '" << name
                        << "' not quantized: its weight is not a constant f32";
    report.recordNearMiss(kQuantizeKind, linear.getLoc(),
                          "weight is not a constant f32");
    return success();
  }
  for (auto [i, x] : llvm::enumerate(*values))
    if (!std::isfinite(x))
      return linear.emitError()
             << "weight of linear '" << name << "' has "
             << (std::isnan(x) ? "NaN"
                 : x > 0       ? "+Inf"
                               : "-Inf")
             << " at element " << i << "; cannot quantize it";

  ArrayRef<int64_t> shape = llvm::cast<ShapedType>(weight.getType()).getShape();
  int64_t outAxis = linear.getTransposeWeight() ? 0 : 1;
  int64_t k = shape[1 - outAxis];
  MLIRContext *context = linear.getContext();
  OpBuilder builder(linear);
  Location loc = linear.getLoc();
  Value input = linear.getInput();
  Value newWeight;
  InputQuantization inputQuantization = InputQuantization::none;
  int64_t bytesAfter = 0;
  switch (options.mode) {
  case QuantizeMode::Int8Dynamic:
  case QuantizeMode::Int8DynamicPerTensor:
  case QuantizeMode::Int8Static: {
    std::optional<InputRange> range;
    if (options.mode == QuantizeMode::Int8Static) {
      auto it = options.calibration.find(name);
      if (it == options.calibration.end())
        return linear.emitError()
               << "no calibration table entry for linear '" << name << "'";
      range = it->second;
    }
    QuantizedWeight quantized = quantizeInt8Weight(
        context, *values, shape, outAxis, options.perTensorWeights);
    newWeight = createQuantizedWeight(builder, loc, shape, quantized);
    bytesAfter = quantized.bytes;
    if (range) {
      auto inputType = llvm::cast<RankedTensorType>(input.getType());
      input = QuantizeOp::create(
                  builder, loc,
                  inputType.clone(getStaticInputType(context, *range)), input)
                  .getOutput();
    } else {
      inputQuantization = options.mode == QuantizeMode::Int8Dynamic
                              ? InputQuantization::dynamic_per_token
                              : InputQuantization::dynamic_per_tensor;
    }
    break;
  }
  case QuantizeMode::Int4Weight: {
    if (k % options.blockSize != 0) {
      ++summary.skippedBlockSize;
      linear.emitRemark() << "linear '" << name
                          << "' not quantized: block size " << options.blockSize
                          << " does not divide its contraction dim " << k;
      report.recordNearMiss(kQuantizeKind, linear.getLoc(),
                            "block size " + Twine(options.blockSize) +
                                " does not divide K = " + Twine(k));
      return success();
    }
    FailureOr<QuantizedWeight> quantized = quantizeInt4(linear, name, *values);
    if (failed(quantized))
      return failure();
    newWeight = createQuantizedWeight(builder, loc, shape, *quantized);
    bytesAfter = quantized->bytes;
    break;
  }
  case QuantizeMode::BF16:
  case QuantizeMode::FP16: {
    FloatType half = options.mode == QuantizeMode::BF16
                         ? FloatType(BFloat16Type::get(context))
                         : FloatType(Float16Type::get(context));
    newWeight = createHalfWeight(builder, loc, shape, *values, half);
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    input =
        CastOp::create(builder, loc, inputType.clone(half), input).getOutput();
    bytesAfter = static_cast<int64_t>(values->size()) * 2;
    break;
  }
  }

  auto replacement = LinearOp::create(
      builder, loc, linear.getType(), input, newWeight, linear.getBias(),
      linear.getResidual(), linear.getTransposeWeight(), linear.getActivation(),
      inputQuantization);
  linear.getOutput().replaceAllUsesWith(replacement.getOutput());
  linear.erase();
  if (Operation *constant = weight.getDefiningOp();
      constant && constant->use_empty())
    constant->erase();
  report.recordFused(kQuantizeKind, loc);
  ++summary.quantized;
  summary.weightBytesBefore += static_cast<int64_t>(values->size()) * 4;
  summary.weightBytesAfter += bytesAfter;
  return success();
}

FailureOr<QuantizedWeight>
LinearQuantizer::quantizeInt4(LinearOp linear, StringRef name,
                              ArrayRef<float> values) {
  ArrayRef<int64_t> shape =
      llvm::cast<ShapedType>(linear.getWeight().getType()).getShape();
  int64_t outAxis = linear.getTransposeWeight() ? 0 : 1;
  if (!options.rounder)
    return quantizeInt4Weight(linear.getContext(), values, shape, outAxis,
                              options.blockSize, options.symmetric);
  return quantizeInt4Weight(
      linear.getContext(), values, shape, outAxis, options.blockSize,
      options.symmetric,
      [&](ArrayRef<float> nk, int64_t n, RoundingGrid &grid) {
        return options.rounder->round(linear, name, nk, n, shape[1 - outAxis],
                                      options.blockSize, grid);
      });
}

/// A gather of rows from a constant f32 table of rank >= 2 and at least
/// `embeddingMinElements` elements gathers from an i8 table with one
/// symmetric scale per row instead (the int8 weight rule with the rows as
/// channels; dims after the first flattened). Other gathers are no tables
/// and are left alone silently.
LogicalResult LinearQuantizer::quantizeTable(GatherOp gather, StringRef name) {
  Value table = gather.getData();
  auto type = llvm::cast<RankedTensorType>(table.getType());
  if (gather.getAxis() != 0 && gather.getAxis() != -type.getRank())
    return success();
  if (type.getRank() < 2 || !type.getElementType().isF32() ||
      !type.hasStaticShape())
    return success();
  FailureOr<std::vector<float>> values = readF32Constant(table);
  if (failed(values))
    return success();
  if (type.getNumElements() < options.embeddingMinElements) {
    ++summary.embeddingsSkippedSmall;
    return success();
  }
  for (auto [i, x] : llvm::enumerate(*values))
    if (!std::isfinite(x))
      return gather.emitError()
             << "table of gather '" << name << "' has "
             << (std::isnan(x) ? "NaN"
                 : x > 0       ? "+Inf"
                               : "-Inf")
             << " at element " << i << "; cannot quantize it";
  int64_t rows = type.getDimSize(0);
  SmallVector<int64_t> matrix = {rows, type.getNumElements() / rows};
  QuantizedWeight quantized =
      quantizeInt8Weight(gather.getContext(), *values, matrix, /*outAxis=*/0,
                         /*perTensor=*/false);
  OpBuilder builder(gather);
  Location loc = gather.getLoc();
  Value newTable =
      createQuantizedWeight(builder, loc, type.getShape(), quantized);
  gather.getDataMutable().assign(newTable);
  if (Operation *constant = table.getDefiningOp();
      constant && constant->use_empty())
    constant->erase();
  getFusionReport(gather.getContext()).recordFused(kQuantizeEmbeddingKind, loc);
  ++summary.embeddingsQuantized;
  summary.embeddingBytesBefore += static_cast<int64_t>(values->size()) * 4;
  summary.embeddingBytesAfter += quantized.bytes;
  return success();
}

FailureOr<QuantizeSummary>
mlir::lmopt::quantizeLinears(Operation *root, const QuantizeOptions &options) {
  return LinearQuantizer(options).run(root);
}

namespace {

struct QuantizePass : lmopt::impl::QuantizePassBase<QuantizePass> {
  using QuantizePassBase::QuantizePassBase;

  void runOnOperation() override {
    Operation *root = getOperation();
    std::optional<QuantizeMode> parsed = parseQuantizeMode(mode);
    if (!parsed) {
      root->emitError() << "unknown quantization mode '" << mode
                        << "'; expected int8-dynamic, "
                           "int8-dynamic-per-tensor, int8-static, "
                           "int4-weight, bf16 or fp16";
      return signalPassFailure();
    }
    QuantizeOptions options;
    options.mode = *parsed;
    options.blockSize = blockSize.getValue();
    if (!llvm::is_contained({32, 64, 128}, options.blockSize)) {
      root->emitError() << "block-size " << options.blockSize
                        << " is not 32, 64 or 128";
      return signalPassFailure();
    }
    options.symmetric = symmetric;
    options.perTensorWeights = perTensorWeights;
    options.exclude.assign(exclude.begin(), exclude.end());
    options.quantizeEmbeddings = quantizeEmbeddings;
    options.embeddingMinElements = embeddingMinElements;
    std::optional<bool> attentionBf16 =
        parseAttentionPrecision(attention, options.mode);
    if (!attentionBf16) {
      root->emitError() << "attention must be auto, bf16 or f32, got '"
                        << attention << "'";
      return signalPassFailure();
    }
    options.attentionBf16 = *attentionBf16;
    if (options.embeddingMinElements < 1) {
      root->emitError() << "embedding-min-elements must be positive, got "
                        << options.embeddingMinElements;
      return signalPassFailure();
    }
    if (options.mode == QuantizeMode::Int8Static) {
      if (calibrationTable.empty()) {
        root->emitError() << "mode int8-static needs calibration-table=<path>";
        return signalPassFailure();
      }
      FailureOr<llvm::StringMap<InputRange>> table =
          readCalibrationTable(calibrationTable, root->getLoc());
      if (failed(table))
        return signalPassFailure();
      options.calibration = std::move(*table);
    }
    FailureOr<QuantizeSummary> summary = quantizeLinears(root, options);
    if (failed(summary))
      return signalPassFailure();
    numQuantized += summary->quantized;
    numNotConstant += summary->skippedNotConstant;
    numExcluded += summary->skippedExcluded;
    numBlockSize += summary->skippedBlockSize;
    weightBytesBefore += summary->weightBytesBefore;
    weightBytesAfter += summary->weightBytesAfter;
    numEmbeddings += summary->embeddingsQuantized;
    numEmbeddingsSmall += summary->embeddingsSkippedSmall;
    numAttentionBf16 += summary->attentionBf16;
  }
};

} // namespace
