//===- Calibration.cpp - calibration data, range statistics, tables -------===//

#include "lmopt/Quantization/Calibration.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Format/TokenBatches.h"
#include "lmopt/Target/Common/RuntimeTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::lmopt::quantization;
namespace rt = ::lmopt::runtime;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// "[2, ?, 16]": a dynamic dim as '?'.
static std::string formatDims(llvm::ArrayRef<int64_t> dims) {
  return "[" +
         llvm::join(llvm::map_range(dims,
                                    [](int64_t d) {
                                      return ShapedType::isDynamic(d)
                                                 ? std::string("?")
                                                 : std::to_string(d);
                                    }),
                    ", ") +
         "]";
}

/// The first NaN or Inf of a float tensor, as "NaN at [5, 1, 3]".
static std::optional<std::string> findNonFinite(const rt::Tensor &tensor) {
  if (tensor.dtype != rt::DType::F32 && tensor.dtype != rt::DType::F64)
    return std::nullopt;
  for (uint64_t i = 0, e = tensor.elementCount(); i < e; ++i) {
    double value = tensor.dtype == rt::DType::F32
                       ? double(tensor.as<float>()[i])
                       : tensor.as<double>()[i];
    if (std::isfinite(value))
      continue;
    std::vector<int64_t> position(tensor.shape.size());
    uint64_t rest = i;
    for (size_t d = position.size(); d-- > 0;) {
      position[d] = int64_t(rest % uint64_t(tensor.shape[d]));
      rest /= uint64_t(tensor.shape[d]);
    }
    return (std::isnan(value) ? "NaN at " : "Inf at ") + formatDims(position);
  }
  return std::nullopt;
}

/// Rows [begin, begin + count) along dim 0 of `tensor`, with `shape`.
static rt::Tensor sliceRows(const rt::Tensor &tensor, int64_t begin,
                            int64_t count, llvm::ArrayRef<int64_t> shape) {
  rt::Tensor slice;
  slice.dtype = tensor.dtype;
  slice.shape.assign(shape.begin(), shape.end());
  size_t rowBytes =
      tensor.shape[0] ? tensor.data.size() / size_t(tensor.shape[0]) : 0;
  slice.data.assign(tensor.data.begin() + begin * rowBytes,
                    tensor.data.begin() + (begin + count) * rowBytes);
  return slice;
}

/// Splits one array into samples of `shape` (see loadCalibrationSet).
static llvm::Expected<std::vector<rt::Tensor>>
splitSamples(const rt::NamedTensor &array, llvm::ArrayRef<int64_t> shape) {
  const std::vector<int64_t> &dims = array.tensor.shape;
  auto mismatch = [&]() {
    std::string stacked = formatDims(shape);
    stacked.insert(1, shape.empty() ? "N" : "N, ");
    return makeError(llvm::formatv(
        "calibration array '{0}' has shape {1}; input '{0}' takes {2}, so "
        "the array needs {3} (samples stacked on a new first dim) or the "
        "input's shape with a first dim that is a multiple of {4}",
        array.name, formatDims(dims), formatDims(shape), stacked,
        shape.empty() ? 1 : shape[0]));
  };
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return makeError(llvm::formatv(
        "calibration array '{0}': input '{0}' takes {1}, with dims that are "
        "only bounded; the calibration runs need every input dim fixed, so "
        "pin them with --input-shape (a bounded bundle cannot be calibrated "
        "from an .npz yet)",
        array.name, formatDims(shape)));
  std::vector<rt::Tensor> samples;
  if (dims.size() == shape.size() + 1 &&
      llvm::ArrayRef<int64_t>(dims).drop_front() == shape) {
    for (int64_t i = 0; i < dims[0]; ++i)
      samples.push_back(sliceRows(array.tensor, i, 1, shape));
    return samples;
  }
  if (dims.size() == shape.size() && !shape.empty() && shape[0] > 0 &&
      llvm::ArrayRef<int64_t>(dims).drop_front() == shape.drop_front() &&
      dims[0] % shape[0] == 0) {
    for (int64_t i = 0; i < dims[0]; i += shape[0])
      samples.push_back(sliceRows(array.tensor, i, shape[0], shape));
    return samples;
  }
  return mismatch();
}

/// The calibration samples of a token dataset (lmopt-tokenize --format
/// dataset): batches of @main's batch dim, padded to its static length, or
/// by length bucket to each batch's longest when the length is dynamic;
/// longer examples are cut to the static length.
static llvm::Expected<CalibrationSet>
loadTokenCalibrationSet(llvm::StringRef path, func::FuncOp main) {
  std::unique_ptr<rt::TokenDatasetReader> dataset;
  if (rt::Status st = rt::openTokenDataset(path.str(), "", dataset); !st)
    return makeError("calibration file: " + st.message());
  SmallVector<std::string> names = mlir::lmopt::getGraphInputNames(main);
  CalibrationSet set;
  set.inputNames.assign(names.begin(), names.end());
  std::vector<std::pair<std::string, rt::DType>> wanted;
  std::optional<RankedTensorType> ids;
  for (auto [i, name] : llvm::enumerate(names)) {
    auto type = llvm::cast<RankedTensorType>(main.getArgumentTypes()[i]);
    std::optional<rt::DType> dtype =
        mlir::lmopt::getRuntimeDType(type.getElementType());
    if (!dtype || type.getRank() > 2)
      return makeError(llvm::formatv(
          "calibration dataset '{0}': input '{1}' is not one a token "
          "dataset gives ([batch, length] ids, masks, types or positions, "
          "[batch] labels)",
          path, name));
    wanted.emplace_back(name, *dtype);
    if (name == "input_ids" && type.getRank() == 2)
      ids = type;
  }
  if (!ids)
    return makeError(llvm::formatv(
        "calibration dataset '{0}': the model takes no [batch, length] input "
        "'input_ids'",
        path));
  std::vector<rt::TokenArraySpec> specs;
  if (rt::Status st = rt::tokenArraySpecs(*dataset, wanted, "labels", specs);
      !st)
    return makeError("calibration file: " + st.message());
  rt::TokenBatchOptions options;
  options.batchSize = ids->isDynamicDim(0) ? 1 : ids->getDimSize(0);
  bool dynamicLength = ids->isDynamicDim(1);
  options.byLength = dynamicLength;
  options.fixedLength = dynamicLength ? -1 : ids->getDimSize(1);
  if (!dynamicLength)
    options.maxLength = ids->getDimSize(1);
  options.truncate = true;
  std::vector<rt::TokenBatch> batches;
  if (rt::Status st = rt::planTokenBatches(*dataset, options, batches); !st)
    return makeError("calibration file: " + st.message());
  for (const rt::TokenBatch &batch : batches) {
    // A static batch dim takes only full batches.
    if (int64_t(batch.rows.size()) != options.batchSize)
      continue;
    set.samples.push_back(
        rt::tokenBatchArrays(*dataset, batch.rows, batch.length, specs));
  }
  if (set.samples.empty())
    return makeError(llvm::formatv(
        "calibration dataset '{0}' has {1} examples, fewer than one batch of "
        "{2}",
        path, dataset->size(), options.batchSize));
  return set;
}

llvm::Expected<CalibrationSet>
mlir::lmopt::quantization::loadCalibrationSet(llvm::StringRef path,
                                              func::FuncOp main) {
  if (rt::isTokenDatasetPath(path.str()))
    return loadTokenCalibrationSet(path, main);
  std::vector<rt::NamedTensor> arrays;
  rt::Status status = rt::readNpz(path.str(), arrays);
  if (!status.isOk())
    return makeError("calibration file: " + status.message());
  SmallVector<std::string> names = getGraphInputNames(main);
  CalibrationSet set;
  set.inputNames.assign(names.begin(), names.end());

  // Per input: its samples, from either layout.
  std::vector<std::vector<rt::Tensor>> perInput(names.size());
  std::vector<std::map<int64_t, const rt::NamedTensor *>> numbered(
      names.size());
  for (const rt::NamedTensor &array : arrays) {
    auto exact = llvm::find(names, array.name);
    if (exact != names.end()) {
      numbered[exact - names.begin()][-1] = &array;
      continue;
    }
    // name_<i>
    llvm::StringRef text = array.name;
    size_t underscore = text.rfind('_');
    int64_t index = -1;
    std::optional<size_t> input;
    if (underscore != llvm::StringRef::npos &&
        !text.drop_front(underscore + 1).getAsInteger(10, index) &&
        index >= 0) {
      auto it = llvm::find(names, text.take_front(underscore));
      if (it != names.end())
        input = it - names.begin();
    }
    if (!input)
      return makeError(llvm::formatv(
          "calibration file '{0}' has array '{1}', which is not a model "
          "input (inputs: {2}; per-sample arrays are named <input>_0, "
          "<input>_1, ...)",
          path, array.name, llvm::join(names, ", ")));
    numbered[*input][index] = &array;
  }

  for (auto [i, name] : llvm::enumerate(names)) {
    auto type = llvm::cast<RankedTensorType>(main.getArgumentTypes()[i]);
    std::optional<rt::DType> dtype =
        mlir::lmopt::getRuntimeDType(type.getElementType());
    if (!dtype)
      return makeError(llvm::formatv(
          "input '{0}' has element type that calibration cannot feed", name));
    const auto &found = numbered[i];
    if (found.empty())
      return makeError(llvm::formatv(
          "calibration file '{0}' has no array for input '{1}' (name it "
          "'{1}', or '{1}_0', '{1}_1', ... one per sample)",
          path, name));
    if (found.count(-1) && found.size() > 1)
      return makeError(llvm::formatv(
          "calibration file '{0}' has both '{1}' and '{1}_<i>' arrays; use "
          "one layout",
          path, name));
    for (const auto &[index, array] : found) {
      if (array->tensor.dtype != *dtype)
        return makeError(llvm::formatv(
            "calibration array '{0}' has dtype {1}; input '{2}' takes {3}",
            array->name, rt::dtypeName(array->tensor.dtype), name,
            rt::dtypeName(*dtype)));
      if (std::optional<std::string> bad = findNonFinite(array->tensor))
        return makeError(llvm::formatv(
            "calibration array '{0}' has {1}; calibration data must be "
            "finite",
            array->name, *bad));
      if (index < 0) {
        llvm::Expected<std::vector<rt::Tensor>> samples =
            splitSamples(*array, type.getShape());
        if (!samples)
          return samples.takeError();
        perInput[i] = std::move(*samples);
        continue;
      }
      if (index != int64_t(perInput[i].size()))
        return makeError(llvm::formatv(
            "calibration file '{0}': '{1}_{2}' is missing (per-sample arrays "
            "are numbered from 0 without gaps)",
            path, name, perInput[i].size()));
      if (llvm::ArrayRef<int64_t>(array->tensor.shape) != type.getShape())
        return makeError(llvm::formatv(
            "calibration array '{0}' has shape {1}; input '{2}' takes {3}",
            array->name, formatDims(array->tensor.shape), name,
            formatDims(type.getShape())));
      perInput[i].push_back(array->tensor);
    }
  }

  size_t count = perInput.empty() ? 0 : perInput[0].size();
  for (auto [i, samples] : llvm::enumerate(perInput))
    if (samples.size() != count)
      return makeError(llvm::formatv(
          "calibration file '{0}' has {1} samples of '{2}' but {3} of '{4}'",
          path, count, names[0], samples.size(), names[i]));
  if (count == 0)
    return makeError(llvm::formatv(
        "calibration file '{0}' holds no samples; calibration needs at least "
        "one",
        path));
  set.samples.resize(count);
  for (size_t s = 0; s < count; ++s)
    for (auto [i, name] : llvm::enumerate(names))
      set.samples[s].push_back({name, std::move(perInput[i][s])});
  return set;
}

llvm::Expected<CalibrationMethod>
CalibrationMethod::parse(llvm::StringRef spelling) {
  CalibrationMethod method;
  llvm::StringRef text = spelling;
  if (text == "minmax")
    return method;
  if (text == "entropy") {
    method.kind = Entropy;
    return method;
  }
  if (text.consume_front("percentile")) {
    method.kind = Percentile;
    if (text.empty())
      return method;
    double value;
    if (text.consume_front(":") && !text.getAsDouble(value) && value > 50 &&
        value <= 100) {
      method.percentile = value;
      return method;
    }
  }
  return makeError("unknown calibration method '" + spelling +
                   "'; use minmax, entropy, percentile or percentile:P (50 < "
                   "P <= 100, e.g. percentile:99.99)");
}

std::string CalibrationMethod::str() const {
  if (kind == MinMax)
    return "minmax";
  if (kind == Entropy)
    return "entropy";
  return llvm::formatv("percentile:{0}", percentile).str();
}

void RangeObserver::observe(const float *values, size_t n) {
  if (n == 0)
    return;
  if (bins.empty())
    bins.assign(kBins, 0);
  float lo = values[0], hi = values[0];
  for (size_t i = 1; i < n; ++i) {
    lo = std::min(lo, values[i]);
    hi = std::max(hi, values[i]);
  }
  if (count == 0) {
    min = lo;
    max = hi;
  } else {
    min = std::min<double>(min, lo);
    max = std::max<double>(max, hi);
  }
  count += n;
  double needed = std::max(std::fabs(double(lo)), std::fabs(double(hi)));
  if (bound == 0)
    bound = needed > 0 ? needed : 1.0;
  // Double the range, merging bin pairs: old bin i lands in (kBins/2+i)/2.
  while (needed > bound) {
    std::vector<uint64_t> merged(kBins, 0);
    for (int i = 0; i < kBins; ++i)
      merged[(kBins / 2 + i) / 2] += bins[i];
    bins.swap(merged);
    bound *= 2;
  }
  double scale = kBins / (2 * bound);
  for (size_t i = 0; i < n; ++i) {
    int bin = int((double(values[i]) + bound) * scale);
    ++bins[std::clamp(bin, 0, kBins - 1)];
  }
}

double RangeObserver::quantile(double fraction) const {
  double target = fraction * double(count);
  double width = 2 * bound / kBins;
  double seen = 0;
  for (int i = 0; i < kBins; ++i) {
    if (seen + double(bins[i]) >= target && bins[i] > 0) {
      double within = (target - seen) / double(bins[i]);
      return -bound + (i + within) * width;
    }
    seen += double(bins[i]);
  }
  return bound;
}

/// The |x| threshold whose 8-bit quantization of the histogram loses the
/// least information (TensorRT's entropy calibration): for each candidate
/// threshold, P is the |x| histogram up to it with the values beyond added
/// to its last bin, Q is P merged into 128 levels and spread back over each
/// level's nonzero bins, and the threshold with the smallest KL(P || Q)
/// wins.
double RangeObserver::entropyThreshold() const {
  constexpr int half = kBins / 2, levels = 128;
  std::vector<double> folded(half);
  for (int j = 0; j < half; ++j)
    folded[j] = double(bins[half + j] + bins[half - 1 - j]);
  std::vector<double> beyond(half + 1, 0.0);
  for (int j = half - 1; j >= 0; --j)
    beyond[j] = beyond[j + 1] + folded[j];
  double bestDivergence = INFINITY;
  int best = half;
  std::vector<double> p, q;
  for (int i = levels; i <= half; ++i) {
    p.assign(folded.begin(), folded.begin() + i);
    p[i - 1] += beyond[i];
    q.assign(i, 0.0);
    for (int level = 0; level < levels; ++level) {
      int begin = level * i / levels, end = (level + 1) * i / levels;
      double total = 0;
      int nonzero = 0;
      for (int k = begin; k < end; ++k) {
        total += folded[k];
        nonzero += folded[k] != 0;
      }
      for (int k = begin; k < end; ++k)
        if (folded[k] != 0)
          q[k] = total / nonzero;
    }
    double pSum = 0, qSum = 0;
    for (int k = 0; k < i; ++k) {
      pSum += p[k];
      qSum += q[k];
    }
    if (pSum == 0 || qSum == 0)
      continue;
    double divergence = 0;
    for (int k = 0; k < i; ++k) {
      if (p[k] == 0)
        continue;
      // A bin Q leaves empty (only the outlier bin can be) costs as if
      // nearly empty rather than infinitely.
      double qk = std::max(q[k] / qSum, 1e-12);
      divergence += p[k] / pSum * std::log(p[k] / pSum / qk);
    }
    if (divergence < bestDivergence) {
      bestDivergence = divergence;
      best = i;
    }
  }
  return best * (2 * bound / kBins);
}

std::pair<double, double>
RangeObserver::range(const CalibrationMethod &method) const {
  double lo = min, hi = max;
  if (method.kind == CalibrationMethod::Entropy && count > 0) {
    double threshold = entropyThreshold();
    lo = std::max(lo, -threshold);
    hi = std::min(hi, threshold);
  }
  if (method.kind == CalibrationMethod::Percentile && count > 0) {
    double tail = (100.0 - method.percentile) / 100.0;
    lo = std::max(lo, quantile(tail));
    hi = std::min(hi, quantile(1.0 - tail));
  }
  return {std::min(lo, 0.0), std::max(hi, 0.0)};
}

llvm::json::Value mlir::lmopt::quantization::buildCalibrationTable(
    const std::map<std::string, RangeObserver> &observers,
    const CalibrationMethod &method, size_t numSamples) {
  llvm::json::Object linears;
  for (const auto &[name, observer] : observers) {
    if (observer.empty())
      continue;
    auto [lo, hi] = observer.range(method);
    linears[name] = llvm::json::Object{{"min", lo}, {"max", hi}};
  }
  return llvm::json::Object{{"version", 1},
                            {"method", method.str()},
                            {"samples", int64_t(numSamples)},
                            {"tensors", std::move(linears)}};
}

void ErrorMeasure::add(const float *expected, const float *actual,
                       size_t count) {
  for (size_t i = 0; i < count; ++i) {
    double e = expected[i], a = actual[i];
    maxAbs = std::max(maxAbs, std::fabs(a - e));
    dot += e * a;
    expectedNorm += e * e;
    actualNorm += a * a;
    diffNorm += (a - e) * (a - e);
  }
}

double ErrorMeasure::cosine() const {
  if (expectedNorm == 0 && actualNorm == 0)
    return 1.0;
  if (expectedNorm == 0 || actualNorm == 0)
    return 0.0;
  return dot / std::sqrt(expectedNorm * actualNorm);
}

double ErrorMeasure::relativeError() const {
  if (expectedNorm == 0)
    return diffNorm == 0 ? 0.0 : INFINITY;
  return std::sqrt(diffNorm / expectedNorm);
}
