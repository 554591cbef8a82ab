//===- QuantizeDriver.cpp - The quantization step of a compile ------------===//
//
// The options' checks and the step's order: calibrate, quantize, report
// accuracy, search sensitivity, measure the f32 bundle; then the size
// summary. The calibration statistics and the measuring runs live in
// CalibrationRun.cpp, AccuracyReport.cpp and Sensitivity.cpp, the rewrite
// in the lmopt-quantize pass.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Quantization/QuantizeDriver.h"
#include "QuantizeSteps.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Support/DiagnosedError.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;

static const StringRef kModes[] = {"int8-dynamic", "int8-dynamic-per-tensor",
                                   "int8-static",  "int4-weight",
                                   "bf16",         "fp16"};

ArrayRef<StringRef> mlir::lmopt::quantization::getQuantizeModes() {
  return kModes;
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

llvm::Error mlir::lmopt::quantization::checkQuantizeOptions(
    const QuantizeDriverOptions &options) {
  llvm::Expected<CalibrationMethod> method =
      CalibrationMethod::parse(options.calibrationMethod);
  if (!method)
    return method.takeError();
  StringRef mode = options.mode;
  bool calibrating = !options.calibrationFile.empty();
  if (mode.empty()) {
    // Calibration alone: write the table for lmopt-opt's lmopt-quantize,
    // or measure what --prune's criterion reads.
    if (calibrating &&
        (!options.calibrationTableOut.empty() || options.pruneCalibration ||
         options.pruneBlockImportance || options.pruneGradientLoss) &&
        !options.sensitivity && options.exclude.empty() && !options.blockSize &&
        !options.asymmetric && !options.quantizeEmbeddings &&
        !options.writeReport && !options.int4Method &&
        options.quantizedMlirOut.empty() && options.attention == "auto")
      return llvm::Error::success();
    return makeError("quantization flags need --quantize=MODE (" +
                     llvm::join(getQuantizeModes(), ", ") +
                     "), except --calibration with --calibration-table-out "
                     "or a --prune criterion that reads samples (wanda, "
                     "activation, gradient) or layers=N alone");
  }
  if (!llvm::is_contained(getQuantizeModes(), mode))
    return makeError("unknown --quantize mode '" + mode + "'; use one of " +
                     llvm::join(getQuantizeModes(), ", "));
  if (!parseAttentionPrecision(options.attention, QuantizeMode::BF16))
    return makeError("--quantize-attention must be auto, bf16 or f32, got '" +
                     options.attention + "'");
  if (mode == "int8-static" && !calibrating)
    return makeError("--quantize=int8-static needs --calibration=inputs.npz "
                     "to choose the activation ranges");
  unsigned count;
  if (options.sensitivity && !options.sensitivity->empty() &&
      (StringRef(*options.sensitivity).getAsInteger(10, count) || count == 0))
    return makeError("--sensitivity=N needs a positive count, got '" +
                     *options.sensitivity + "'");
  if (options.sensitivity && !calibrating)
    return makeError("--sensitivity needs --calibration=inputs.npz to measure "
                     "each layer on");
  if (options.blockSize && mode != "int4-weight")
    return makeError("--block-size applies to --quantize=int4-weight only");
  if (options.asymmetric && mode != "int4-weight")
    return makeError("--asymmetric applies to --quantize=int4-weight only");
  if (options.int4Method) {
    if (*options.int4Method != "rtn" && *options.int4Method != "gptq")
      return makeError("unknown --int4-method '" + *options.int4Method +
                       "'; use rtn or gptq");
    if (mode != "int4-weight")
      return makeError("--int4-method applies to --quantize=int4-weight only");
    if (*options.int4Method == "gptq" && !calibrating)
      return makeError("--int4-method=gptq needs --calibration=inputs.npz: "
                       "GPTQ weighs each layer's rounding errors by its "
                       "calibration inputs");
  }
  if (options.blockSize &&
      !llvm::is_contained({32u, 64u, 128u}, *options.blockSize))
    return makeError("--block-size must be 32, 64 or 128, got " +
                     llvm::Twine(*options.blockSize));
  if (options.sensitivityTarget <= 0 || options.sensitivityTarget > 1)
    return makeError("--sensitivity-target must be in (0, 1]");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Shared by the step's pieces (QuantizeSteps.h)
//===----------------------------------------------------------------------===//

std::string mlir::lmopt::quantization::literalGlob(StringRef name) {
  std::string glob;
  for (char c : name) {
    if (StringRef("*?[]{}\\").contains(c))
      glob += '\\';
    glob += c;
  }
  return glob;
}

bool mlir::lmopt::quantization::useGptq(const QuantizeDriverOptions &options) {
  if (options.mode != "int4-weight")
    return false;
  if (options.int4Method)
    return *options.int4Method == "gptq";
  return !options.calibrationFile.empty();
}

QuantizeOptions mlir::lmopt::quantization::getQuantizeOptions(
    const QuantizeDriverOptions &driverOptions, ArrayRef<std::string> exclude,
    const CalibrationStats &stats) {
  QuantizeOptions options;
  options.mode = *parseQuantizeMode(driverOptions.mode);
  if (driverOptions.blockSize)
    options.blockSize = *driverOptions.blockSize;
  options.symmetric = !driverOptions.asymmetric;
  options.exclude.assign(exclude.begin(), exclude.end());
  options.calibration = stats.ranges;
  if (useGptq(driverOptions))
    options.rounder = std::make_shared<GptqRounder>(stats.hessians);
  options.quantizeEmbeddings = driverOptions.quantizeEmbeddings;
  options.attentionBf16 =
      parseAttentionPrecision(driverOptions.attention, options.mode)
          .value_or(false);
  return options;
}

LogicalResult mlir::lmopt::quantization::quantize(
    ModuleOp module, const QuantizeDriverOptions &options,
    ArrayRef<std::string> exclude, const CalibrationStats &stats) {
  return success(succeeded(
      quantizeLinears(module, getQuantizeOptions(options, exclude, stats))));
}

static func::FuncOp getMain(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

std::vector<std::pair<std::string, bool>>
mlir::lmopt::quantization::getQuantizedLinears(ModuleOp module) {
  std::vector<std::pair<std::string, bool>> linears;
  func::FuncOp main = getMain(module);
  std::vector<std::string> names = getLinearNames(main);
  main.walk([&](LinearOp linear) {
    auto type = llvm::cast<ShapedType>(linear.getWeight().getType());
    linears.emplace_back(names[linears.size()], !type.getElementType().isF32());
  });
  return linears;
}

//===----------------------------------------------------------------------===//
// QuantizeDriver
//===----------------------------------------------------------------------===//

namespace mlir::lmopt::quantization {
/// What run() learns that finish() prints.
struct QuantizeState {
  llvm::json::Object report;
  int64_t fp32WeightBytes = 0, quantizedWeightBytes = 0;
  /// --quantize-embeddings: tables quantized and their bytes.
  int64_t embeddingTables = 0, fp32EmbeddingBytes = 0,
          quantizedEmbeddingBytes = 0;
  std::optional<uint64_t> fp32BundleBytes;
  /// bf16: attentions whose products run in bf16.
  int64_t attentionBf16 = 0;
  /// The samples criterion=gradient read, without their labels.
  std::optional<CalibrationSet> unlabelled;
};
} // namespace mlir::lmopt::quantization

QuantizeDriver::QuantizeDriver(QuantizeDriverOptions options,
                               const TargetBackend &backend,
                               TargetOptions targetOptions,
                               llvm::raw_ostream &log)
    : options(std::move(options)), backend(backend),
      targetOptions(std::move(targetOptions)), log(log),
      state(std::make_unique<QuantizeState>()) {}

QuantizeDriver::~QuantizeDriver() = default;

/// Runs the quantize pass on `module` with GPTQ's progress lines; prints
/// nothing else.
static FailureOr<QuantizeSummary>
quantizeWithProgress(ModuleOp module, const QuantizeDriverOptions &options,
                     const CalibrationStats &stats, llvm::raw_ostream &log) {
  QuantizeOptions passOptions =
      getQuantizeOptions(options, options.exclude, stats);
  auto start = std::chrono::steady_clock::now();
  int64_t done = 0, total = stats.hessians.size();
  auto onLayer = [&](StringRef name, int64_t n, int64_t k, double seconds,
                     const GptqStats &gptqStats) {
    log << llvm::formatv(
        "gptq: [{0}/{1}] {2} ({3}x{4}, {5:f2} s{6})\n", ++done, total, name, n,
        k, seconds,
        gptqStats.attempts > 1
            ? llvm::formatv(", dampening raised to {0:e2}", gptqStats.lambda)
                  .str()
            : std::string());
  };
  if (useGptq(options))
    passOptions.rounder = std::make_shared<GptqRounder>(stats.hessians, onLayer);
  FailureOr<QuantizeSummary> summary = quantizeLinears(module, passOptions);
  if (useGptq(options) && succeeded(summary))
    log << llvm::formatv(
        "gptq: {0} linears in {1:f1} s\n", done,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  return summary;
}

/// "quantize: int8-dynamic, 9 of 9 linears quantized, ...".
static void printQuantizeSummary(const QuantizeDriverOptions &options,
                                 const QuantizeSummary &summary,
                                 size_t numLinears, llvm::raw_ostream &log) {
  log << "quantize: " << options.mode;
  if (options.mode == "int4-weight")
    log << " (" << (useGptq(options) ? "gptq" : "rtn") << ", block "
        << options.blockSize.value_or(32u) << ", "
        << (options.asymmetric ? "asymmetric" : "symmetric") << ")";
  log << ", " << summary.quantized << " of " << numLinears
      << " linears quantized";
  if (summary.skippedExcluded)
    log << ", " << summary.skippedExcluded << " excluded";
  if (summary.skippedNotConstant)
    log << ", " << summary.skippedNotConstant
        << " without a constant f32 weight";
  if (summary.skippedBlockSize)
    log << ", " << summary.skippedBlockSize
        << " whose K the block size does not divide";
  if (options.quantizeEmbeddings) {
    log << "; " << summary.embeddingsQuantized
        << " embedding tables quantized (int8 per row)";
    if (summary.embeddingsSkippedSmall)
      log << ", " << summary.embeddingsSkippedSmall << " left f32 (under "
          << QuantizeOptions().embeddingMinElements << " elements)";
  }
  log << "\n";
}

llvm::Error QuantizeDriver::measureForPruning(ModuleOp module) {
  if (!options.pruneCalibration && !options.pruneBlockImportance &&
      !options.pruneGradientLoss)
    return llvm::Error::success();
  ModelRunner runner(backend, targetOptions);
  // The gradient criterion's samples hold labels too; the other
  // measurements read them without.
  std::optional<CalibrationSet> &set = state->unlabelled;
  if (options.pruneGradientLoss) {
    if (llvm::Error error =
            measureGradientImportance(runner, module, options.calibrationFile,
                                      *options.pruneGradientLoss, log, set))
      return error;
  } else {
    llvm::Expected<CalibrationSet> loaded =
        loadCalibrationSet(options.calibrationFile, getMain(module));
    if (!loaded)
      return loaded.takeError();
    set = std::move(*loaded);
  }
  if (options.pruneBlockImportance)
    if (llvm::Error error = measureBlockImportance(runner, module, *set, log))
      return error;
  if (!options.pruneCalibration)
    return llvm::Error::success();
  return measureActivationStats(runner, module, *set, log);
}

llvm::Error QuantizeDriver::run(ModuleOp module, const BundleMeta &meta) {
  // The samples served --prune alone.
  if (options.mode.empty() && options.calibrationTableOut.empty())
    return llvm::Error::success();
  CalibrationMethod method =
      llvm::cantFail(CalibrationMethod::parse(options.calibrationMethod));
  std::optional<CalibrationSet> set = std::move(state->unlabelled);
  if (!set && !options.calibrationFile.empty()) {
    llvm::Expected<CalibrationSet> loaded =
        loadCalibrationSet(options.calibrationFile, getMain(module));
    if (!loaded)
      return loaded.takeError();
    set = std::move(*loaded);
  }
  ModelRunner runner(backend, targetOptions);
  OwningOpRef<ModuleOp> fp32(module.clone());

  // Calibrate: every linear input's range over the samples, and for GPTQ
  // its second moments.
  CalibrationStats stats;
  bool gptq = useGptq(options);
  if (set) {
    llvm::Expected<CalibrationStats> measured = calibrate(
        runner, module, *set, method, gptq, options.calibrationTableOut, log);
    if (!measured)
      return measured.takeError();
    stats = std::move(*measured);
  }

  if (options.mode.empty())
    return llvm::Error::success();
  FailureOr<QuantizeSummary> summary =
      quantizeWithProgress(module, options, stats, log);
  if (failed(summary))
    return makeDiagnosedError();
  state->fp32WeightBytes = summary->weightBytesBefore;
  state->quantizedWeightBytes = summary->weightBytesAfter;
  std::vector<std::pair<std::string, bool>> linears =
      getQuantizedLinears(module);
  std::vector<std::string> quantizedLayers;
  for (const auto &[name, quantized] : linears)
    if (quantized)
      quantizedLayers.push_back(name);
  printQuantizeSummary(options, *summary, linears.size(), log);
  if (!options.quantizedMlirOut.empty()) {
    std::string message;
    std::unique_ptr<llvm::ToolOutputFile> file =
        mlir::openOutputFile(options.quantizedMlirOut, &message);
    if (!file)
      return makeError("cannot write the quantized module: " + message);
    module.print(file->os());
    file->keep();
  }
  state->embeddingTables = summary->embeddingsQuantized;
  state->attentionBf16 = summary->attentionBf16;
  state->fp32EmbeddingBytes = summary->embeddingBytesBefore;
  state->quantizedEmbeddingBytes = summary->embeddingBytesAfter;
  llvm::json::Object &report = state->report;
  report["mode"] = options.mode;
  if (options.mode == "int4-weight")
    report["int4_method"] = gptq ? "gptq" : "rtn";
  report["quantized_linears"] = llvm::json::Array(quantizedLayers);
  report["linears"] = int64_t(linears.size());

  if (set) {
    report["calibration_samples"] = int64_t(set->samples.size());
    report["calibration_method"] = method.str();
    if (llvm::Error error =
            reportAccuracy(runner, *fp32, module, *set, report, log))
      return error;
    if (options.sensitivity)
      if (llvm::Error error =
              searchSensitivity(runner, *fp32, quantizedLayers, *set, stats,
                                options, report, log))
        return error;
  } else {
    log << "accuracy: the report needs --calibration=inputs.npz; sizes only\n";
    if (options.mode == "int4-weight")
      log << "int4: weights rounded to nearest (rtn); GPTQ needs "
             "--calibration=inputs.npz\n";
  }

  // The f32 bundle's size, for the whole-bundle ratio.
  llvm::SmallString<128> fp32Bundle;
  if (!llvm::sys::fs::createTemporaryFile("lmopt-fp32", "lmopt", fp32Bundle)) {
    llvm::Expected<uint64_t> bytes =
        runner.writeBundle(*fp32, fp32Bundle, meta);
    if (bytes)
      state->fp32BundleBytes = *bytes;
    else
      llvm::consumeError(bytes.takeError());
    llvm::sys::fs::remove(fp32Bundle);
  }
  return llvm::Error::success();
}

llvm::json::Object QuantizeDriver::finish(uint64_t bundleBytes) {
  if (options.mode.empty())
    return {};
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  double weightRatio =
      ratio(state->quantizedWeightBytes, state->fp32WeightBytes);
  log << llvm::formatv(
      "quantized linear weights: {0} bytes f32 -> {1} bytes {2} ({3:f3}x, "
      "scales included)\n",
      state->fp32WeightBytes, state->quantizedWeightBytes, options.mode,
      weightRatio);
  llvm::json::Object report = std::move(state->report);
  report["linear_weight_bytes_f32"] = state->fp32WeightBytes;
  report["linear_weight_bytes"] = state->quantizedWeightBytes;
  if (state->attentionBf16) {
    log << llvm::formatv("attention with bf16 products (f32 softmax): {0}\n",
                         state->attentionBf16);
    report["attention_bf16_products"] = state->attentionBf16;
  }
  if (options.quantizeEmbeddings) {
    log << llvm::formatv(
        "quantized embedding tables: {0}, {1} bytes f32 -> {2} bytes int8 "
        "({3:f3}x, row scales included)\n",
        state->embeddingTables, state->fp32EmbeddingBytes,
        state->quantizedEmbeddingBytes,
        ratio(state->quantizedEmbeddingBytes, state->fp32EmbeddingBytes));
    report["embedding_tables"] = state->embeddingTables;
    report["embedding_bytes_f32"] = state->fp32EmbeddingBytes;
    report["embedding_bytes"] = state->quantizedEmbeddingBytes;
  }
  report["bundle_bytes"] = int64_t(bundleBytes);
  if (state->fp32BundleBytes) {
    log << llvm::formatv(
        "bundle: {0} bytes f32 -> {1} bytes ({2:f3}x)\n",
        *state->fp32BundleBytes, bundleBytes,
        ratio(double(bundleBytes), double(*state->fp32BundleBytes)));
    report["bundle_bytes_f32"] = int64_t(*state->fp32BundleBytes);
  }
  return report;
}
