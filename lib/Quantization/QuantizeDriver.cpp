//===- Quantize.cpp - lmopt-compile's quantization flags ------------------===//
//
// Flags, phases and messages of `--quantize`; the calibration statistics and
// the measuring runs live in lib/Quantization, the rewrite in the
// lmopt-quantize pass.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"
#include "lmopt/Quantization/Calibration.h"
#include "lmopt/Quantization/Gptq.h"
#include "lmopt/Quantization/ModelRunner.h"
#include "lmopt/Runtime/Session.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;
namespace cl = llvm::cl;
namespace rt = ::lmopt::runtime;

cl::OptionCategory &lmopt_compile::getQuantizeCategory() {
  static cl::OptionCategory category("lmopt-compile quantization options");
  return category;
}

static cl::opt<std::string> quantizeMode(
    "quantize",
    cl::desc("Quantize the linears: int8-dynamic, int8-dynamic-per-tensor, "
             "int8-static, int4-weight, bf16 or fp16 (docs/quantization.md)"),
    cl::value_desc("mode"), cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<bool> quantizeEmbeddings(
    "quantize-embeddings",
    cl::desc("With --quantize: also store the embedding tables (constant "
             "gather tables of >= 4096 elements) as int8 with one scale per "
             "row (docs/quantization.md)"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> calibrationFile(
    "calibration",
    cl::desc("Calibration inputs (.npz): ranges for int8-static, and the "
             "samples the accuracy report and --sensitivity run"),
    cl::value_desc("inputs.npz"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> calibrationMethodText(
    "calibration-method",
    cl::desc("How a linear input's range is chosen: minmax (default), "
             "percentile, percentile:P or entropy"),
    cl::init("minmax"), cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> calibrationTableOut(
    "calibration-table-out",
    cl::desc("Also write the calibration table (JSON) the quantize pass "
             "reads"),
    cl::value_desc("table.json"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::list<std::string>
    excludeGlobs("exclude",
                 cl::desc("Keep the linears whose names match these globs in "
                          "f32 (comma separated, repeatable)"),
                 cl::CommaSeparated, cl::value_desc("glob,..."),
                 cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<unsigned>
    blockSize("block-size",
              cl::desc("int4-weight: weights per scale along K (default: "
                       "the quantize pass's)"),
              cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<bool> asymmetric(
    "asymmetric",
    cl::desc("int4-weight: u4 blocks with a zero point each instead of "
             "symmetric i4 (the pass's symmetric=false)"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> int4Method(
    "int4-method",
    cl::desc("int4-weight: how weights are rounded: gptq (error compensation "
             "from --calibration; the default with it) or rtn (to nearest; "
             "the default without)"),
    cl::value_desc("rtn|gptq"), cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> quantizedMlirOut(
    "quantized-mlir-out",
    cl::desc("Also write the module as quantized, before planning (MLIR; "
             "e.g. for lmopt-translate --export-onnx)"),
    cl::value_desc("model.mlir"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> quantizeReport(
    "quantize-report",
    cl::desc("Also write the quantization report as JSON ('-' for stdout)"),
    cl::value_desc("file.json|-"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> sensitivity(
    "sensitivity",
    cl::desc("Quantize one linear at a time, print the N most damaging and "
             "suggest an --exclude list reaching --sensitivity-target"),
    cl::ValueOptional, cl::value_desc("N"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<double> sensitivityTarget(
    "sensitivity-target",
    cl::desc("Output cosine (vs f32) the suggested --exclude list must "
             "reach (default 0.99)"),
    cl::init(0.99), cl::cat(lmopt_compile::getQuantizeCategory()));

static const llvm::StringRef kModes[] = {
    "int8-dynamic", "int8-dynamic-per-tensor",
    "int8-static",  "int4-weight",
    "bf16",         "fp16"};

namespace lmopt_compile {
/// What run() learns that finish() prints.
struct QuantizeState {
  llvm::json::Object report;
  int64_t fp32WeightBytes = 0, quantizedWeightBytes = 0;
  /// --quantize-embeddings: tables quantized and their bytes.
  int64_t embeddingTables = 0, fp32EmbeddingBytes = 0,
          quantizedEmbeddingBytes = 0;
  std::optional<uint64_t> fp32BundleBytes;
};
} // namespace lmopt_compile

using lmopt_compile::QuantizeStep;

QuantizeStep::QuantizeStep()
    : state(std::make_unique<lmopt_compile::QuantizeState>()) {}
QuantizeStep::~QuantizeStep() = default;

bool QuantizeStep::requested() {
  return quantizeMode.getNumOccurrences() ||
         calibrationFile.getNumOccurrences() ||
         sensitivity.getNumOccurrences() || excludeGlobs.getNumOccurrences() ||
         quantizeReport.getNumOccurrences() ||
         calibrationTableOut.getNumOccurrences() ||
         blockSize.getNumOccurrences() || asymmetric.getNumOccurrences() ||
         calibrationMethodText.getNumOccurrences() ||
         quantizeEmbeddings.getNumOccurrences() ||
         int4Method.getNumOccurrences() || quantizedMlirOut.getNumOccurrences();
}

static llvm::Error makeStringError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static LogicalResult fail(const llvm::Twine &message) {
  llvm::errs() << "error: " << message << "\n";
  return failure();
}

LogicalResult QuantizeStep::checkFlags() {
  llvm::Expected<CalibrationMethod> method =
      CalibrationMethod::parse(calibrationMethodText);
  if (!method)
    return fail(llvm::toString(method.takeError()));
  if (quantizeMode.empty()) {
    // Calibration alone: write the table for lmopt-opt's lmopt-quantize.
    if (!calibrationFile.empty() && !calibrationTableOut.empty() &&
        !sensitivity.getNumOccurrences() && excludeGlobs.empty() &&
        !blockSize.getNumOccurrences() && !asymmetric && !quantizeEmbeddings &&
        quantizeReport.empty() && !int4Method.getNumOccurrences() &&
        quantizedMlirOut.empty())
      return success();
    return fail("quantization flags need --quantize=MODE (" +
                llvm::join(llvm::ArrayRef(kModes), ", ") +
                "), except --calibration with --calibration-table-out alone");
  }
  if (!llvm::is_contained(kModes, llvm::StringRef(quantizeMode)))
    return fail("unknown --quantize mode '" + quantizeMode + "'; use one of " +
                llvm::join(llvm::ArrayRef(kModes), ", "));
  if (quantizeMode == "int8-static" && calibrationFile.empty())
    return fail("--quantize=int8-static needs --calibration=inputs.npz to "
                "choose the activation ranges");
  unsigned count;
  if (!sensitivity.empty() &&
      (llvm::StringRef(sensitivity).getAsInteger(10, count) || count == 0))
    return fail("--sensitivity=N needs a positive count, got '" + sensitivity +
                "'");
  if (sensitivity.getNumOccurrences() && calibrationFile.empty())
    return fail("--sensitivity needs --calibration=inputs.npz to measure "
                "each layer on");
  if (blockSize.getNumOccurrences() && quantizeMode != "int4-weight")
    return fail("--block-size applies to --quantize=int4-weight only");
  if (asymmetric && quantizeMode != "int4-weight")
    return fail("--asymmetric applies to --quantize=int4-weight only");
  if (int4Method.getNumOccurrences()) {
    if (int4Method != "rtn" && int4Method != "gptq")
      return fail("unknown --int4-method '" + int4Method +
                  "'; use rtn or gptq");
    if (quantizeMode != "int4-weight")
      return fail("--int4-method applies to --quantize=int4-weight only");
    if (int4Method == "gptq" && calibrationFile.empty())
      return fail("--int4-method=gptq needs --calibration=inputs.npz: GPTQ "
                  "weighs each layer's rounding errors by its calibration "
                  "inputs");
  }
  if (blockSize.getNumOccurrences() &&
      !llvm::is_contained({32u, 64u, 128u}, unsigned(blockSize)))
    return fail("--block-size must be 32, 64 or 128, got " +
                llvm::Twine(unsigned(blockSize)));
  if (sensitivityTarget <= 0 || sensitivityTarget > 1)
    return fail("--sensitivity-target must be in (0, 1]");
  return success();
}

/// A glob that matches exactly `name` (the pass's globs are
/// llvm::GlobPattern, where `\` escapes).
static std::string literalGlob(llvm::StringRef name) {
  std::string glob;
  for (char c : name) {
    if (llvm::StringRef("*?[]{}\\").contains(c))
      glob += '\\';
    glob += c;
  }
  return glob;
}

/// True when int4 weights are rounded with GPTQ: asked for, or by default
/// with calibration data.
static bool useGptq() {
  if (quantizeMode != "int4-weight")
    return false;
  if (int4Method.getNumOccurrences())
    return int4Method == "gptq";
  return !calibrationFile.empty();
}

/// What calibration measured for the quantize pass.
struct CalibrationStats {
  /// int8-static: each linear input's range.
  llvm::StringMap<mlir::lmopt::InputRange> ranges;
  /// int4 GPTQ: each linear input's second moments.
  llvm::StringMap<std::shared_ptr<const Hessian>> hessians;
};

/// The quantize pass's options from the flags, but for `exclude`, with what
/// calibration measured.
static mlir::lmopt::QuantizeOptions
getQuantizeOptions(ArrayRef<std::string> exclude,
                   const CalibrationStats &stats) {
  mlir::lmopt::QuantizeOptions options;
  options.mode = *mlir::lmopt::parseQuantizeMode(quantizeMode);
  if (blockSize.getNumOccurrences())
    options.blockSize = blockSize;
  options.symmetric = !asymmetric;
  options.exclude.assign(exclude.begin(), exclude.end());
  options.calibration = stats.ranges;
  options.gptq = useGptq();
  options.hessians = stats.hessians;
  options.quantizeEmbeddings = quantizeEmbeddings;
  return options;
}

static LogicalResult quantize(ModuleOp module, ArrayRef<std::string> exclude,
                              const CalibrationStats &stats) {
  return success(succeeded(mlir::lmopt::quantizeLinears(
      module, getQuantizeOptions(exclude, stats))));
}

static func::FuncOp getMain(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

/// Per linear of @main, in program order: its layer name (the pass's, else
/// its location) and whether its weight is no longer f32.
static std::vector<std::pair<std::string, bool>>
getQuantizedLinears(ModuleOp module) {
  std::vector<std::pair<std::string, bool>> linears;
  func::FuncOp main = getMain(module);
  std::vector<std::string> names = getLinearNames(main);
  main.walk([&](LinearOp linear) {
    auto type = llvm::cast<ShapedType>(linear.getWeight().getType());
    linears.emplace_back(names[linears.size()], !type.getElementType().isF32());
  });
  return linears;
}

static const float *floatData(const rt::NamedTensor &tensor) {
  return tensor.tensor.as<float>();
}

/// The min over model outputs of the cosine of `module`'s outputs against
/// `reference` (per sample, per output).
static llvm::Expected<double>
outputCosine(ModelRunner &runner, ModuleOp module, const CalibrationSet &set,
             const std::vector<std::vector<rt::NamedTensor>> &reference) {
  llvm::Expected<std::vector<std::vector<rt::NamedTensor>>> outputs =
      runner.run(module, set);
  if (!outputs)
    return outputs.takeError();
  std::vector<ErrorMeasure> errors(reference.front().size());
  for (size_t s = 0; s < reference.size(); ++s)
    for (size_t o = 0; o < errors.size(); ++o)
      if (reference[s][o].tensor.dtype == rt::DType::F32)
        errors[o].add(floatData(reference[s][o]), floatData((*outputs)[s][o]),
                      reference[s][o].tensor.elementCount());
  double worst = 1.0;
  for (const ErrorMeasure &error : errors)
    worst = std::min(worst, error.cosine());
  return worst;
}

/// Layer rows and output rows of the accuracy report.
struct Row {
  std::string name;
  ErrorMeasure error;
};

static void printRows(llvm::StringRef title, std::vector<Row> &rows) {
  if (rows.empty()) {
    llvm::errs() << "  (no " << title << ")\n";
    return;
  }
  llvm::sort(rows, [](const Row &a, const Row &b) {
    return a.error.cosine() < b.error.cosine();
  });
  size_t width = title.size();
  for (const Row &row : rows)
    width = std::max(width, row.name.size());
  auto padded = [&](llvm::StringRef text) {
    return text.str() + std::string(width - text.size(), ' ');
  };
  llvm::errs() << llvm::formatv("  {0}  {1,12}  {2,10}  {3,9}\n", padded(title),
                                "max abs err", "rel err", "cosine");
  for (const Row &row : rows)
    llvm::errs() << llvm::formatv(
        "  {0}  {1,12:e3}  {2,10:e3}  {3,9:f6}\n", padded(row.name),
        row.error.maxAbsError(), row.error.relativeError(), row.error.cosine());
}

static llvm::json::Array rowsToJSON(const std::vector<Row> &rows) {
  llvm::json::Array array;
  for (const Row &row : rows)
    array.push_back(
        llvm::json::Object{{"name", row.name},
                           {"max_abs_error", row.error.maxAbsError()},
                           {"relative_error", row.error.relativeError()},
                           {"cosine", row.error.cosine()}});
  return array;
}

/// Runs the f32 and quantized modules with probes side by side and prints
/// the per-layer and per-output errors, worst first.
static LogicalResult reportAccuracy(ModelRunner &runner, ModuleOp fp32,
                                    ModuleOp quantized,
                                    const CalibrationSet &set,
                                    llvm::json::Object &report) {
  ProbeLayout fp32Layout, quantizedLayout;
  OwningOpRef<ModuleOp> fp32Probed =
      addLinearProbes(fp32, false, true, fp32Layout);
  OwningOpRef<ModuleOp> quantizedProbed =
      addLinearProbes(quantized, false, true, quantizedLayout);
  // The quantize pass keeps the linears and their order.
  std::vector<std::pair<std::string, bool>> weights =
      getQuantizedLinears(quantized);
  if (weights.size() != fp32Layout.linears.size())
    return fail("the quantized model has " + llvm::Twine(weights.size()) +
                " linears, the f32 one " +
                llvm::Twine(fp32Layout.linears.size()));
  std::vector<Row> layers, outputs;
  std::vector<std::pair<int, int>> layerSlots;
  for (auto [i, linear] : llvm::enumerate(quantizedLayout.linears)) {
    int reference = fp32Layout.linears[i].output;
    if (!weights[i].second || linear.output < 0 || reference < 0)
      continue;
    layers.push_back({linear.name, {}});
    layerSlots.emplace_back(reference, linear.output);
  }
  std::vector<unsigned> outputSlots;
  auto add = [](ErrorMeasure &error, const rt::NamedTensor &expected,
                const rt::NamedTensor &actual) {
    error.add(floatData(expected), floatData(actual),
              expected.tensor.elementCount());
  };
  llvm::Error error = runner.runEach(
      {*fp32Probed, *quantizedProbed}, set,
      [&](size_t sample, ArrayRef<std::vector<rt::NamedTensor>> results) {
        const std::vector<rt::NamedTensor> &expected = results[0];
        const std::vector<rt::NamedTensor> &actual = results[1];
        if (sample == 0)
          for (unsigned o = 0; o < fp32Layout.numModelOutputs; ++o)
            if (expected[o].tensor.dtype == rt::DType::F32) {
              outputs.push_back({expected[o].name, {}});
              outputSlots.push_back(o);
            }
        for (auto [row, slots] : llvm::zip(layers, layerSlots))
          add(row.error, expected[slots.first], actual[slots.second]);
        for (auto [row, o] : llvm::zip(outputs, outputSlots))
          add(row.error, expected[o], actual[o]);
      });
  if (error)
    return fail(llvm::toString(std::move(error)));
  llvm::errs() << "accuracy against f32 on " << set.samples.size()
               << " calibration samples (worst first):\n";
  printRows("layer", layers);
  printRows("output", outputs);
  report["layers"] = rowsToJSON(layers);
  report["outputs"] = rowsToJSON(outputs);
  return success();
}

/// Quantizes one linear at a time, prints the most damaging, then grows an
/// exclude list (worst first) until the outputs reach the target cosine.
static LogicalResult searchSensitivity(ModelRunner &runner, ModuleOp fp32,
                                       llvm::ArrayRef<std::string> layers,
                                       const CalibrationSet &set,
                                       const CalibrationStats &table,
                                       llvm::json::Object &report) {
  llvm::Expected<std::vector<std::vector<rt::NamedTensor>>> reference =
      runner.run(fp32, set);
  if (!reference)
    return fail(llvm::toString(reference.takeError()));
  std::vector<std::pair<double, std::string>> damage;
  for (const std::string &layer : layers) {
    OwningOpRef<ModuleOp> variant(fp32.clone());
    std::vector<std::string> exclude(excludeGlobs.begin(), excludeGlobs.end());
    for (const std::string &other : layers)
      if (other != layer)
        exclude.push_back(literalGlob(other));
    if (failed(quantize(*variant, exclude, table)))
      return failure();
    llvm::Expected<double> cosine =
        outputCosine(runner, *variant, set, *reference);
    if (!cosine)
      return fail(llvm::toString(cosine.takeError()));
    damage.emplace_back(*cosine, layer);
  }
  llvm::sort(damage);
  unsigned shown = 10;
  if (!sensitivity.empty())
    llvm::StringRef(sensitivity).getAsInteger(10, shown);
  llvm::errs() << "sensitivity: output cosine vs f32 with only that layer "
                  "quantized (most damaging first):\n";
  llvm::json::Array damageJSON;
  for (auto [i, entry] : llvm::enumerate(damage)) {
    if (i < shown)
      llvm::errs() << llvm::formatv("  {0,9:f6}  {1}\n", entry.first,
                                    entry.second);
    damageJSON.push_back(
        llvm::json::Object{{"name", entry.second}, {"cosine", entry.first}});
  }
  report["sensitivity"] = std::move(damageJSON);

  // The fewest worst layers to keep f32: a binary search over k, taking
  // the output cosine as growing with k (it does up to measurement noise;
  // the answer is measured, not assumed). Keeping every layer is exact.
  auto measure = [&](size_t k) -> llvm::Expected<double> {
    if (k == damage.size())
      return 1.0;
    OwningOpRef<ModuleOp> variant(fp32.clone());
    std::vector<std::string> exclude(excludeGlobs.begin(), excludeGlobs.end());
    for (size_t i = 0; i < k; ++i)
      exclude.push_back(literalGlob(damage[i].second));
    if (failed(quantize(*variant, exclude, table)))
      return makeStringError("quantization failed");
    return outputCosine(runner, *variant, set, *reference);
  };
  size_t low = 0, high = damage.size();
  double reached = 1.0;
  while (low < high) {
    size_t middle = (low + high) / 2;
    llvm::Expected<double> cosine = measure(middle);
    if (!cosine)
      return fail(llvm::toString(cosine.takeError()));
    if (*cosine >= sensitivityTarget) {
      high = middle;
      reached = *cosine;
    } else {
      low = middle + 1;
    }
  }
  std::vector<std::string> suggestion;
  for (size_t i = 0; i < high; ++i)
    suggestion.push_back(literalGlob(damage[i].second));
  if (reached < sensitivityTarget)
    llvm::errs() << llvm::formatv(
        "sensitivity: no exclude list reaches cosine {0:f6}\n",
        sensitivityTarget.getValue());
  else if (suggestion.empty())
    llvm::errs() << llvm::formatv(
        "sensitivity: all layers quantized already reach cosine {0:f6} >= "
        "{1:f6}; nothing to exclude\n",
        reached, sensitivityTarget.getValue());
  else
    llvm::errs() << llvm::formatv("sensitivity: --exclude={0} reaches cosine "
                                  "{1:f6} (target {2:f6}, {3} of "
                                  "{4} layers kept f32)\n",
                                  llvm::join(suggestion, ","), reached,
                                  sensitivityTarget.getValue(),
                                  suggestion.size(), layers.size());
  report["suggested_exclude"] = llvm::json::Array(suggestion);
  report["suggested_cosine"] = reached;
  return success();
}

/// Adds one sample's probed linear inputs to their Hessians, one per probed
/// input (the rows: the input's elements over its last dim, K).
static void
accumulateHessians(const ProbeLayout &layout, ArrayRef<rt::NamedTensor> results,
                   std::map<int, std::shared_ptr<Hessian>> &hessians) {
  std::set<int> inputs;
  for (const ProbeLayout::Linear &linear : layout.linears)
    if (linear.input >= 0)
      inputs.insert(linear.input);
  for (int input : inputs) {
    const rt::Tensor &tensor = results[input].tensor;
    if (tensor.dtype != rt::DType::F32 || tensor.shape.empty() ||
        tensor.shape.back() == 0)
      continue;
    int64_t k = tensor.shape.back();
    std::shared_ptr<Hessian> &hessian = hessians[input];
    if (!hessian)
      hessian = std::make_shared<Hessian>(k);
    hessian->add(tensor.as<float>(), int64_t(tensor.elementCount()) / k);
  }
}

/// The Hessians by layer name; linears of one name (rare) on different
/// inputs of the same width share the sum, as their ranges join.
static llvm::StringMap<std::shared_ptr<const Hessian>>
hessiansByName(const ProbeLayout &layout,
               const std::map<int, std::shared_ptr<Hessian>> &hessians) {
  llvm::StringMap<std::vector<int>> inputsByName;
  for (const ProbeLayout::Linear &linear : layout.linears) {
    std::vector<int> &inputs = inputsByName[linear.name];
    if (hessians.count(linear.input) &&
        !llvm::is_contained(inputs, linear.input))
      inputs.push_back(linear.input);
  }
  llvm::StringMap<std::shared_ptr<const Hessian>> byName;
  for (const auto &[name, inputs] : inputsByName) {
    if (inputs.empty())
      continue;
    std::shared_ptr<Hessian> first = hessians.at(inputs.front());
    if (inputs.size() == 1) {
      byName[name] = first;
      continue;
    }
    auto sum = std::make_shared<Hessian>(*first);
    bool sameWidth = true;
    for (int input : llvm::ArrayRef(inputs).drop_front()) {
      const Hessian &other = *hessians.at(input);
      sameWidth &= other.size() == sum->size();
      if (sameWidth)
        sum->add(other);
    }
    if (sameWidth) // else no entry: the pass names the layer
      byName[name] = std::move(sum);
  }
  return byName;
}

LogicalResult
QuantizeStep::run(ModuleOp module,
                  const mlir::lmopt::cpu::KernelCodegenOptions &codegen,
                  const mlir::lmopt::cpu::BundleMeta &meta) {
  func::FuncOp main = getMain(module);
  CalibrationMethod method =
      llvm::cantFail(CalibrationMethod::parse(calibrationMethodText));
  std::optional<CalibrationSet> set;
  if (!calibrationFile.empty()) {
    llvm::Expected<CalibrationSet> loaded =
        loadCalibrationSet(calibrationFile, main);
    if (!loaded)
      return fail(llvm::toString(loaded.takeError()));
    set = std::move(*loaded);
  }
  ModelRunner runner(codegen);
  OwningOpRef<ModuleOp> fp32(module.clone());

  // Calibrate: every linear input's range over the samples, and for GPTQ
  // its second moments.
  CalibrationStats stats;
  llvm::StringMap<mlir::lmopt::InputRange> &ranges = stats.ranges;
  bool gptq = useGptq();
  if (set) {
    auto start = std::chrono::steady_clock::now();
    ProbeLayout layout;
    OwningOpRef<ModuleOp> probed = addLinearProbes(module, true, false, layout);
    // Linears of one name (rare) share an entry: their ranges join.
    std::map<std::string, RangeObserver> observers;
    // One Hessian per probed input, so that linears sharing it share one.
    std::map<int, std::shared_ptr<Hessian>> inputHessians;
    llvm::Error error = runner.runEach(
        {*probed}, *set,
        [&](size_t, ArrayRef<std::vector<rt::NamedTensor>> results) {
          for (const ProbeLayout::Linear &linear : layout.linears) {
            RangeObserver &observer = observers[linear.name];
            if (linear.input >= 0)
              observer.observe(floatData(results[0][linear.input]),
                               results[0][linear.input].tensor.elementCount());
          }
          if (gptq)
            accumulateHessians(layout, results[0], inputHessians);
        });
    if (error)
      return fail(llvm::toString(std::move(error)));
    if (gptq)
      stats.hessians = hessiansByName(layout, inputHessians);
    for (const auto &[name, observer] : observers) {
      if (observer.empty())
        continue;
      auto [lo, hi] = observer.range(method);
      ranges[name] = {lo, hi};
    }
    if (!calibrationTableOut.empty()) {
      std::string message;
      std::unique_ptr<llvm::ToolOutputFile> file =
          mlir::openOutputFile(calibrationTableOut, &message);
      if (!file)
        return fail("cannot write the calibration table: " + message);
      file->os() << llvm::formatv("{0:2}",
                                  buildCalibrationTable(observers, method,
                                                        set->samples.size()))
                 << "\n";
      file->keep();
    }
    llvm::errs() << llvm::formatv(
        "calibration: {0} samples, {1} linears, method {2} ({3:f1} s)\n",
        set->samples.size(), layout.linears.size(), method.str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }

  if (quantizeMode.empty())
    return success();
  std::vector<std::string> exclude(excludeGlobs.begin(), excludeGlobs.end());
  FailureOr<mlir::lmopt::QuantizeSummary> summary;
  {
    mlir::lmopt::QuantizeOptions options = getQuantizeOptions(exclude, stats);
    auto start = std::chrono::steady_clock::now();
    int64_t done = 0, total = stats.hessians.size();
    options.onGptqLayer = [&](llvm::StringRef name, int64_t n, int64_t k,
                              double seconds, const GptqStats &gptqStats) {
      llvm::errs() << llvm::formatv(
          "gptq: [{0}/{1}] {2} ({3}x{4}, {5:f2} s{6})\n", ++done, total, name,
          n, k, seconds,
          gptqStats.attempts > 1
              ? llvm::formatv(", dampening raised to {0:e2}", gptqStats.lambda)
                    .str()
              : std::string());
    };
    summary = mlir::lmopt::quantizeLinears(module, options);
    if (gptq && succeeded(summary))
      llvm::errs() << llvm::formatv(
          "gptq: {0} linears in {1:f1} s\n", done,
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count());
  }
  if (failed(summary))
    return failure();
  state->fp32WeightBytes = summary->weightBytesBefore;
  state->quantizedWeightBytes = summary->weightBytesAfter;
  std::vector<std::pair<std::string, bool>> linears =
      getQuantizedLinears(module);
  std::vector<std::string> quantizedLayers;
  for (const auto &[name, quantized] : linears)
    if (quantized)
      quantizedLayers.push_back(name);
  llvm::errs() << "quantize: " << quantizeMode;
  if (quantizeMode == "int4-weight")
    llvm::errs() << " (" << (gptq ? "gptq" : "rtn") << ", block "
                 << (blockSize.getNumOccurrences() ? unsigned(blockSize) : 32u)
                 << ", " << (asymmetric ? "asymmetric" : "symmetric") << ")";
  llvm::errs() << ", " << summary->quantized << " of " << linears.size()
               << " linears quantized";
  if (summary->skippedExcluded)
    llvm::errs() << ", " << summary->skippedExcluded << " excluded";
  if (summary->skippedNotConstant)
    llvm::errs() << ", " << summary->skippedNotConstant
                 << " without a constant f32 weight";
  if (summary->skippedBlockSize)
    llvm::errs() << ", " << summary->skippedBlockSize
                 << " whose K the block size does not divide";
  if (quantizeEmbeddings) {
    llvm::errs() << "; " << summary->embeddingsQuantized
                 << " embedding tables quantized (int8 per row)";
    if (summary->embeddingsSkippedSmall)
      llvm::errs() << ", " << summary->embeddingsSkippedSmall
                   << " left f32 (under "
                   << mlir::lmopt::QuantizeOptions().embeddingMinElements
                   << " elements)";
  }
  llvm::errs() << "\n";
  if (!quantizedMlirOut.empty()) {
    std::string message;
    std::unique_ptr<llvm::ToolOutputFile> file =
        mlir::openOutputFile(quantizedMlirOut, &message);
    if (!file)
      return fail("cannot write the quantized module: " + message);
    module.print(file->os());
    file->keep();
  }
  state->embeddingTables = summary->embeddingsQuantized;
  state->fp32EmbeddingBytes = summary->embeddingBytesBefore;
  state->quantizedEmbeddingBytes = summary->embeddingBytesAfter;
  llvm::json::Object &report = state->report;
  report["mode"] = quantizeMode.getValue();
  if (quantizeMode == "int4-weight")
    report["int4_method"] = gptq ? "gptq" : "rtn";
  report["quantized_linears"] = llvm::json::Array(quantizedLayers);
  report["linears"] = int64_t(linears.size());

  if (set) {
    report["calibration_samples"] = int64_t(set->samples.size());
    report["calibration_method"] = method.str();
    if (failed(reportAccuracy(runner, *fp32, module, *set, report)))
      return failure();
    if (sensitivity.getNumOccurrences() &&
        failed(searchSensitivity(runner, *fp32, quantizedLayers, *set, stats,
                                 report)))
      return failure();
  } else {
    llvm::errs() << "accuracy: the report needs --calibration=inputs.npz; "
                    "sizes only\n";
    if (quantizeMode == "int4-weight")
      llvm::errs() << "int4: weights rounded to nearest (rtn); GPTQ needs "
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
  return success();
}

LogicalResult QuantizeStep::finish(uint64_t bundleBytes) {
  if (quantizeMode.empty())
    return success();
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  double weightRatio =
      ratio(state->quantizedWeightBytes, state->fp32WeightBytes);
  llvm::errs() << llvm::formatv(
      "quantized linear weights: {0} bytes f32 -> {1} bytes {2} ({3:f3}x, "
      "scales included)\n",
      state->fp32WeightBytes, state->quantizedWeightBytes,
      quantizeMode.getValue(), weightRatio);
  llvm::json::Object &report = state->report;
  report["linear_weight_bytes_f32"] = state->fp32WeightBytes;
  report["linear_weight_bytes"] = state->quantizedWeightBytes;
  if (quantizeEmbeddings) {
    llvm::errs() << llvm::formatv(
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
    llvm::errs() << llvm::formatv(
        "bundle: {0} bytes f32 -> {1} bytes ({2:f3}x)\n",
        *state->fp32BundleBytes, bundleBytes,
        ratio(double(bundleBytes), double(*state->fp32BundleBytes)));
    report["bundle_bytes_f32"] = int64_t(*state->fp32BundleBytes);
  }
  if (quantizeReport.empty())
    return success();
  llvm::json::Value json(std::move(report));
  if (quantizeReport == "-") {
    llvm::outs() << llvm::formatv("{0:2}", json) << "\n";
    return success();
  }
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> file =
      mlir::openOutputFile(quantizeReport, &message);
  if (!file)
    return fail("cannot write the quantization report: " + message);
  file->os() << llvm::formatv("{0:2}", json) << "\n";
  file->keep();
  return success();
}
