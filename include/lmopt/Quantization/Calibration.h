//===- Calibration.h - calibration data, range statistics, tables -*- C++
//-*-===//
//
// What `lmopt-compile --quantize` needs besides the quantize pass: the
// calibration set (a .npz of model inputs, checked against @main), the range
// of every `lmopt.linear`'s input over that set (min/max or a percentile from
// a histogram), the calibration table the quantize pass reads, and the error
// measures of the accuracy report (docs/quantization.md).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_QUANTIZATION_CALIBRATION_H
#define LMOPT_QUANTIZATION_CALIBRATION_H

#include "lmopt/Format/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::lmopt::quantization {

/// One set of model inputs per sample, each in @main's argument order.
struct CalibrationSet {
  std::vector<std::string> inputNames;
  std::vector<std::vector<::lmopt::runtime::NamedTensor>> samples;
};

/// Reads the calibration `.npz` at `path` for `main`. Three layouts are
/// accepted (docs/quantization.md, "Calibration"): per input `name` an array
/// of the input's shape with one leading sample dim; an array of the input's
/// rank whose first dim is a multiple of the input's, split along it; or one
/// array per sample named `name_0`, `name_1`, ... Unknown or missing names,
/// dtypes and shapes that do not fit, an empty set and NaN/Inf values are
/// errors naming the array. A token dataset (PREFIX.idx or PREFIX.bin, from
/// lmopt-tokenize --format dataset) gives batches of @main's batch dim
/// instead (docs/tokenizer.md, "Reading a dataset").
llvm::Expected<CalibrationSet> loadCalibrationSet(llvm::StringRef path,
                                                  func::FuncOp main);

/// How a linear input's range is chosen from its observed values.
struct CalibrationMethod {
  enum Kind { MinMax, Percentile, Entropy } kind = MinMax;
  /// For Percentile: the share of values (per tail) the range keeps.
  double percentile = 99.99;

  /// "minmax", "percentile", "percentile:P" with 50 < P <= 100, or
  /// "entropy".
  static llvm::Expected<CalibrationMethod> parse(llvm::StringRef text);
  std::string str() const;
};

/// Streaming statistics of one tensor's values: exact min and max, and a
/// histogram over a symmetric range that doubles (merging bins) whenever a
/// value falls outside it, so percentiles need no second pass.
class RangeObserver {
public:
  void observe(const float *values, size_t count);
  bool empty() const { return count == 0; }
  /// The range `method` picks, always containing 0.
  std::pair<double, double> range(const CalibrationMethod &method) const;

private:
  static constexpr int kBins = 4096;
  double quantile(double fraction) const;
  double entropyThreshold() const;

  uint64_t count = 0;
  double min = 0, max = 0;
  /// Bin i covers [-bound + i*w, -bound + (i+1)*w), w = 2*bound/kBins.
  double bound = 0;
  std::vector<uint64_t> bins;
};

/// The calibration table the quantize pass reads (`calibration-table=`,
/// format in docs/quantization.md): per layer name, the range of the
/// linear's input.
llvm::json::Value
buildCalibrationTable(const std::map<std::string, RangeObserver> &observers,
                      const CalibrationMethod &method, size_t numSamples);

/// Error of `actual` against `expected` accumulated over samples.
class ErrorMeasure {
public:
  void add(const float *expected, const float *actual, size_t count);
  double maxAbsError() const { return maxAbs; }
  /// Cosine similarity of the two as flat vectors (1 when both are zero).
  double cosine() const;
  /// ||actual - expected|| / ||expected||.
  double relativeError() const;

private:
  double maxAbs = 0, dot = 0, expectedNorm = 0, actualNorm = 0, diffNorm = 0;
};

} // namespace mlir::lmopt::quantization

#endif // LMOPT_QUANTIZATION_CALIBRATION_H
