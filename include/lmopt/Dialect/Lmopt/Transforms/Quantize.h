//===- Quantize.h - quantization of lmopt.linear ----------------*- C++ -*-===//
//
// The rewrite behind `lmopt-quantize`, callable without a pass manager so
// that lmopt-compile can print what it did, and the layer names that
// `exclude` globs and calibration tables refer to.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_QUANTIZE_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_QUANTIZE_H

#include "lmopt/Dialect/Lmopt/Transforms/RoundingGrid.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::lmopt {

enum class QuantizeMode {
  Int8Dynamic,
  Int8DynamicPerTensor,
  Int8Static,
  Int4Weight,
  BF16,
  FP16
};

/// The mode named by `lmopt-quantize`'s `mode` option, or nullopt.
std::optional<QuantizeMode> parseQuantizeMode(StringRef name);

/// Rounds int4 weights onto their grid with error compensation from
/// calibration data instead of to nearest. lib/Quantization implements it
/// with GPTQ (quantization::GptqRounder); the pass sees only this interface.
class WeightRounder {
public:
  virtual ~WeightRounder() = default;
  /// Rounds the weight of `linear`, layer `layer`, onto `grid` in blocks of
  /// `blockSize` along K: `w` holds `n` rows (output channels) of `k` values
  /// each. Failures are reported as diagnostics on `linear`.
  virtual LogicalResult round(Operation *linear, StringRef layer,
                              ArrayRef<float> w, int64_t n, int64_t k,
                              int64_t blockSize, RoundingGrid &grid) = 0;
};

/// The observed range of a linear's input.
struct InputRange {
  double min = 0.0;
  double max = 0.0;
};

struct QuantizeOptions {
  QuantizeMode mode = QuantizeMode::Int8Dynamic;
  /// int4: block length along K.
  int64_t blockSize = 32;
  /// int4: signed blocks with zero point 0, else u4 with zero points.
  bool symmetric = true;
  /// int8: one weight scale per matrix.
  bool perTensorWeights = false;
  /// Globs of layer names left in f32.
  SmallVector<std::string> exclude;
  /// int8-static: input range per layer name.
  llvm::StringMap<InputRange> calibration;
  /// int4: when set, rounds with error compensation (GPTQ,
  /// docs/quantization.md) instead of to nearest.
  std::shared_ptr<WeightRounder> rounder;
  /// Also quantize gather tables (embeddings) to i8 per row.
  bool quantizeEmbeddings = false;
  /// quantizeEmbeddings: tables with fewer elements stay f32 (token-type
  /// embeddings, whose few bytes are not worth a lookup that dequantizes).
  int64_t embeddingMinElements = 4096;
  /// Mark each attention not excluded kBf16ProductsAttr (by default, only
  /// in mode bf16; parseAttentionPrecision).
  bool attentionBf16 = false;
};

/// `attention` / --quantize-attention: "auto" (bf16 products in mode bf16
/// only), "bf16" (in every mode) or "f32" (never); nullopt for another
/// word.
std::optional<bool> parseAttentionPrecision(llvm::StringRef word,
                                            QuantizeMode mode);

/// What `quantizeLinears` did.
struct QuantizeSummary {
  int64_t quantized = 0;
  int64_t skippedNotConstant = 0;
  int64_t skippedExcluded = 0;
  int64_t skippedBlockSize = 0;
  /// f32 bytes of the weights that were quantized, and their size after
  /// (int4 at two values per byte; scales as f32, zero points one byte).
  int64_t weightBytesBefore = 0;
  int64_t weightBytesAfter = 0;
  /// quantizeEmbeddings: gather tables quantized, tables left f32 for
  /// their size, and the quantized tables' f32 bytes and bytes after (i8
  /// values and f32 row scales).
  int64_t embeddingsQuantized = 0;
  int64_t embeddingsSkippedSmall = 0;
  int64_t embeddingBytesBefore = 0;
  int64_t embeddingBytesAfter = 0;
  /// bf16: attentions marked kBf16ProductsAttr.
  int64_t attentionBf16 = 0;
};

/// The unit attribute mode bf16 puts on each `lmopt.attention` it does not
/// exclude: its products may run in bf16 with f32 accumulation.
inline constexpr llvm::StringLiteral kBf16ProductsAttr = "bf16_products";

/// The layer name of `op`: the first name in its location (the ONNX node
/// name the importer records), or "" when it has none.
std::string getLayerName(Operation *op);

/// Reads a calibration table (docs/quantization.md); errors are reported at
/// `loc` naming the file and the entry.
FailureOr<llvm::StringMap<InputRange>> readCalibrationTable(StringRef path,
                                                            Location loc);

/// Rewrites every `lmopt.linear` under `root` with a constant f32 weight
/// into the form of `options.mode` (and, with `options.quantizeEmbeddings`,
/// every large constant gather table into a row-quantized i8 one). Fails, with
/// a diagnostic, on NaN/Inf weights, a missing calibration entry or a bad
/// exclude glob.
FailureOr<QuantizeSummary> quantizeLinears(Operation *root,
                                           const QuantizeOptions &options);

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_QUANTIZE_H
