//===- ModelCompiler.cpp - A model file to a bundle, as one call ----------===//
//
// lmopt-compile's flow: check the options, import, check the inputs' dims,
// then the compile driver with the quantization step and the printed log.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Driver/ModelCompiler.h"

#include "CompileLog.h"
#include "DriverContext.h"

#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"
#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Importer/ONNX/Importer.h"
#include "lmopt/Support/DiagnosedError.h"
#include "lmopt/Target/InitAllTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <map>
#include <mutex>

using namespace mlir;
using namespace mlir::lmopt;

using MaxShapes = std::map<std::string, std::vector<int64_t>>;

void mlir::lmopt::registerModelCompiler() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllLmoptPasses();
    registerAllTargetBackends();
  });
}

std::string mlir::lmopt::getModelCompilerTargets() {
  registerModelCompiler();
  return llvm::join(getRegisteredTargetBackends(), ", ");
}

llvm::json::Object ModelCompileResult::toJSON() const {
  llvm::json::Object json{{"fusions", llvm::json::Object(fusions)},
                          {"plan", summary.toJSON()}};
  if (pruning)
    json["pruning"] = llvm::json::Object(*pruning);
  return json;
}

namespace {
/// Prints "error: ..." to the log and hands back a DiagnosedError.
struct Failer {
  llvm::raw_ostream &log;
  llvm::Error operator()(const llvm::Twine &message) const {
    log << "error: " << message << "\n";
    return makeDiagnosedError();
  }
  llvm::Error operator()(llvm::Error error) const {
    printErrors(std::move(error), log);
    return makeDiagnosedError();
  }
};
} // namespace

/// "1x128" with the static dims kept, for the --input-shape hint.
static std::string suggestShape(ArrayRef<int64_t> shape) {
  std::string text;
  bool firstDynamic = true;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (i)
      text += "x";
    if (!ShapedType::isDynamic(dim)) {
      text += std::to_string(dim);
      continue;
    }
    text += firstDynamic ? "1" : "128";
    firstDynamic = false;
  }
  return text;
}

/// The --max-shape bounds by input name.
static llvm::Expected<MaxShapes> parseMaxShapes(const ModelCompilerOptions &o,
                                                const Failer &fail) {
  MaxShapes bounds;
  for (const std::string &spec : o.maxShapes) {
    ImportOptions parsed;
    if (llvm::Error error = parseInputShape(spec, parsed))
      return fail("--max-shape: " + llvm::toString(std::move(error)));
    auto &[name, dims] = *parsed.inputShapes.begin();
    if (llvm::any_of(dims, ShapedType::isDynamic))
      return fail("--max-shape '" + spec +
                  "' has a '?' dim; a bound is a "
                  "number");
    if (llvm::any_of(o.inputShapes, [&](const std::string &pinned) {
          return llvm::StringRef(pinned).rsplit(':').first == name;
        }))
      return fail("input '" + name +
                  "' has both --input-shape and "
                  "--max-shape");
    if (!bounds
             .emplace(name.str(),
                      std::vector<int64_t>(dims.begin(), dims.end()))
             .second)
      return fail("--max-shape names input '" + name + "' twice");
  }
  return bounds;
}

/// Every input needs static dims or a --max-shape bound; reports them all.
static LogicalResult checkStaticInputs(func::FuncOp main,
                                       const MaxShapes &bounds,
                                       llvm::raw_ostream &log) {
  bool ok = true;
  for (BlockArgument arg : main.getArguments()) {
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.hasStaticShape())
      continue;
    std::string name = getGraphInputName(main, arg.getArgNumber());
    if (bounds.count(name))
      continue; // the plan builder checks the bounds
    std::string dims;
    llvm::raw_string_ostream os(dims);
    llvm::interleaveComma(type.getShape(), os, [&](int64_t dim) {
      if (ShapedType::isDynamic(dim))
        os << "?";
      else
        os << dim;
    });
    log << "error: input '" << name << "' has dynamic dims [" << dims
        << "]; pin them with --input-shape " << name << ":"
        << suggestShape(type.getShape()) << " or bound them with "
        << "--max-shape " << name << ":" << suggestShape(type.getShape())
        << "\n";
    ok = false;
  }
  return success(ok);
}

/// The .onnx import options the shape and value flags give.
static llvm::Error addImportOptions(const ModelCompilerOptions &o,
                                    ImportOptions &options,
                                    const Failer &fail) {
  for (const std::string &spec : o.inputShapes)
    if (llvm::Error error = parseInputShape(spec, options))
      return fail(std::move(error));
  for (const std::string &spec : o.inputValues)
    if (llvm::Error error = parseInputValue(spec, options))
      return fail(std::move(error));
  if (o.inputShapesFrom.empty())
    return llvm::Error::success();
  std::vector<::lmopt::runtime::NamedTensor> arrays;
  ::lmopt::runtime::Status status =
      ::lmopt::runtime::readNpz(o.inputShapesFrom, arrays);
  if (!status.isOk())
    return fail("--input-shapes-from: " + status.message());
  for (const ::lmopt::runtime::NamedTensor &array : arrays) {
    if (array.tensor.shape.empty())
      return fail("--input-shapes-from: '" + o.inputShapesFrom + "' member '" +
                  array.name + "' is a scalar; graph inputs here have dims");
    // An explicit --input-shape for the same input wins.
    options.inputShapes.try_emplace(
        array.name, SmallVector<int64_t>(array.tensor.shape.begin(),
                                         array.tensor.shape.end()));
  }
  return llvm::Error::success();
}

static llvm::Expected<OwningOpRef<ModuleOp>>
importModel(const ModelCompilerOptions &o, MLIRContext &context,
            llvm::SourceMgr &sources, const Failer &fail) {
  if (llvm::StringRef(o.inputPath).ends_with(".onnx")) {
    ImportOptions options;
    if (llvm::Error error = addImportOptions(o, options, fail))
      return std::move(error);
    // Training keeps each source parameter its own (ImportOptions).
    options.untieInitializerAliases = o.training.has_value();
    FailureOr<OwningOpRef<ModuleOp>> module =
        importONNXModel(context, o.inputPath, options);
    if (failed(module))
      return makeDiagnosedError();
    return std::move(*module);
  }
  if (!o.inputShapes.empty() || !o.inputShapesFrom.empty() ||
      !o.inputValues.empty())
    return fail("--input-shape, --input-shapes-from and --input-value apply "
                "to .onnx models; a .mlir model states its shapes in "
                "@main's signature");
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(o.inputPath, &message);
  if (!buffer)
    return fail(message);
  sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return makeDiagnosedError();
  return std::move(module);
}

/// Imports --distill-from's teacher with the student's input shapes and
/// values (by name) and moves its @main into `module` as the teacher
/// function the training entries inline (Distillation.h).
static llvm::Error importTeacher(const ModelCompilerOptions &o,
                                 ModuleOp module, const Failer &fail) {
  const std::string &path = o.training->distill->teacherPath;
  if (!llvm::StringRef(path).ends_with(".onnx"))
    return fail("--distill-from: '" + path + "' is not an .onnx model");
  ImportOptions options;
  if (llvm::Error error = addImportOptions(o, options, fail))
    return std::move(error);
  options.untieInitializerAliases = true;
  options.ignoreUnknownInputs = true;
  FailureOr<OwningOpRef<ModuleOp>> teacher =
      importONNXModel(*module.getContext(), path, options);
  if (failed(teacher))
    return makeDiagnosedError();
  auto main = (*teacher)->lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return fail("--distill-from: '" + path + "' has no graph to compile");
  main->remove();
  main.setSymName(kTeacherFuncName);
  // --prune cuts the student only.
  main->setAttr(kFrozenAttrName, UnitAttr::get(module.getContext()));
  module.getBody()->push_back(main);
  return llvm::Error::success();
}

/// The --prune criterion when it ranks units by what calibration samples
/// make of the model (wanda, activation, gradient), else "".
static std::string sampleCriterion(const ModelCompilerOptions &o) {
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(o.prune).split(items, ',');
  for (llvm::StringRef item : items)
    if (item.consume_front("criterion=") &&
        (item == "wanda" || item == "activation" || item == "gradient"))
      return item.str();
  return "";
}

/// The --prune item that selects layers by block importance ("layers=6"),
/// or "".
static std::string layerSelection(const ModelCompilerOptions &o) {
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(o.prune).split(items, ',');
  for (llvm::StringRef item : items)
    if (item.starts_with("layers="))
      return item.str();
  return "";
}

/// The quantization step's options, with --prune's need for calibration.
static std::optional<quantization::QuantizeDriverOptions>
getQuantizeOptions(const ModelCompilerOptions &o) {
  std::optional<quantization::QuantizeDriverOptions> options = o.quantize;
  if (options) {
    std::string criterion = sampleCriterion(o);
    options->pruneCalibration =
        criterion == "wanda" || criterion == "activation";
    options->pruneBlockImportance = !layerSelection(o).empty();
    if (criterion == "gradient")
      options->pruneGradientLoss = o.pruneLoss.value_or(TrainingOptions());
  }
  return options;
}

/// The option checks that need no model; fills the driver's options.
static llvm::Error checkOptions(const ModelCompilerOptions &o,
                                CompileOptions &options, const Failer &fail) {
  if (!lookupTargetBackend(o.target))
    return fail("unknown target '" + o.target +
                "'; registered targets: " + getModelCompilerTargets());
  if (o.optLevel > 3)
    return fail("unknown optimization level -O" + std::to_string(o.optLevel) +
                "; use -O0 to -O3");
  if (o.outputPath.empty() && !o.dumpPlan && !o.dumpKernels)
    return fail("no output file; pass -o model.lmopt (or --dump-plan)");
  std::optional<Precision> precision = parsePrecision(o.precision);
  if (!precision)
    return fail("--precision: unknown precision '" + o.precision +
                "'; use fp32, fp16 or bf16");
  std::string criterion = sampleCriterion(o);
  if (!criterion.empty() && (!o.quantize || o.quantize->calibrationFile.empty()))
    return fail("--prune criterion=" + criterion +
                (criterion == "gradient"
                     ? " ranks units by the loss's gradients on labelled "
                       "calibration samples; give them with "
                       "--calibration=samples.npz (the model's inputs and "
                       "the loss's labels)"
                     : " ranks units by their activations on calibration "
                       "samples; give them with --calibration=inputs.npz"));
  std::string selection = layerSelection(o);
  double count = 0.0;
  if (!selection.empty() &&
      (llvm::StringRef(selection).drop_front(7).getAsDouble(count) ||
       !(count > 0.0)))
    return fail("--prune " + selection +
                " is neither a whole number of layers to keep nor a "
                "fraction in (0, 1)");
  if (!selection.empty() &&
      (!o.quantize || o.quantize->calibrationFile.empty()))
    return fail("--prune " + selection +
                " ranks encoder layers by their block importance on "
                "calibration samples; give them with "
                "--calibration=inputs.npz (or choose with keep-layers)");
  if (o.quantize) {
    // Samples for --prune alone leave the types to --precision.
    bool pruneOnly = o.quantize->mode.empty() &&
                     (!criterion.empty() || !selection.empty()) &&
                     o.quantize->calibrationTableOut.empty();
    if (*precision != Precision::FP32 && !pruneOnly)
      return fail("--precision=" + o.precision +
                  " and --quantize both choose the linears' types; give one");
    if (llvm::Error error =
            quantization::checkQuantizeOptions(*getQuantizeOptions(o)))
      return fail(std::move(error));
  }
  if (o.training) {
    if (o.quantize && !criterion.empty())
      return fail("--train and --prune criterion=" + criterion +
                  ": the calibration run is for inference bundles; prune "
                  "with criterion=magnitude");
    if (o.quantize && !selection.empty())
      return fail("--train and --prune " + selection +
                  ": the calibration run is for inference bundles; choose "
                  "the layers with keep-layers (an inference compile with " +
                  selection + " prints their importance)");
    if (o.quantize)
      return fail("--train and --quantize: train the float model, then "
                  "quantize the trained one");
    if (o.kvCache != 0)
      return fail("--train and --kv-cache do not go together: a training "
                  "step runs whole sequences");
    if (o.target != "cpu")
      return fail("--train: training bundles compile for --target=cpu for "
                  "now");
  } else if (o.disableDropout) {
    return fail("--disable-dropout applies to --train (inference bundles "
                "never run dropout)");
  }
  if (o.prefillAllLogits && o.kvCache == 0)
    return fail("--prefill-all-logits applies to the prefill entry of "
                "--kv-cache; give --kv-cache=N");
  llvm::StringRef arch = o.cudaArch;
  unsigned sm = 0;
  if (!arch.consume_front("sm_") || arch.getAsInteger(10, sm) || sm < 75 ||
      sm > 200)
    return fail("--cuda-arch: '" + o.cudaArch +
                "' is not a GPU architecture lmopt compiles for; use sm_75 "
                "or newer, e.g. sm_90");
  options.target.optLevel = o.optLevel;
  options.target.cpu = o.cpu;
  options.target.cudaSmVersion = sm;
  options.target.fuseRowQuantization = o.fuseRowQuantization;
  options.target.fuseBf16Outputs = o.fuseBf16Outputs;
  options.target.fuseStaticOutputs = o.fuseStaticOutputs;
  options.target.precision = *precision;
  options.outputPath = o.outputPath;
  options.modelName = llvm::sys::path::stem(o.inputPath).str();
  options.omitWeights = o.omitWeights;
  if (!o.prune.empty()) {
    // "ffn=0.5,keep-layers=0,2,heads=0.5": a comma before a key starts
    // the next option; the others separate a list's items.
    std::string spec;
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(o.prune).split(items, ',');
    for (auto [i, item] : llvm::enumerate(items))
      spec += (i == 0 ? "" : item.contains('=') ? " " : ",") + item.str();
    std::string problem;
    std::unique_ptr<Pass> prune = createPrunePass();
    if (failed(prune->initializeOptions(spec, [&](const Twine &msg) {
          problem = llvm::StringRef(msg.str()).trim().str();
          return failure();
        })))
      return fail("--prune='" + o.prune + "': " +
                  (problem.empty() ? "a value does not parse" : problem) +
                  " (keys: ffn, heads, keep-layers, layers, multiple, "
                  "criterion, sparsity)");
    // N:M-sparse weights are stored compressed; a training bundle keeps
    // their layout (the trained weights export into the source model) and
    // its step keeps their zeros.
    bool sparse = llvm::StringRef(spec).contains("sparsity=");
    if (sparse && o.training)
      spec += " transpose-sparse=false";
    options.prune = spec;
    options.sparseWeights = sparse && !o.training;
  }
  if (!o.expose.empty()) {
    if (o.training || o.kvCache != 0)
      return fail("--expose adds outputs to @main; it does not go with "
                  "--train or --kv-cache");
    // "hidden-states,/a/b,/c/d": the shorthand, and op names for values=.
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(o.expose).split(items, ',', -1, false);
    std::string names;
    bool hidden = false;
    for (llvm::StringRef item : items) {
      if (item == "hidden-states")
        hidden = true;
      else
        names += (names.empty() ? "" : ",") + item.str();
    }
    if (hidden)
      options.expose = "hidden-states=true";
    if (!names.empty())
      options.expose += (hidden ? " values=" : "values=") + names;
    if (options.expose.empty())
      return fail("--expose='" + o.expose +
                  "' names nothing; give hidden-states or op names");
  }
  return llvm::Error::success();
}

/// The training options with the source model recorded (for export).
static TrainingOptions withSourceModel(const ModelCompilerOptions &o) {
  TrainingOptions training = *o.training;
  training.disableDropout = o.disableDropout;
  training.prune = o.prune;
  llvm::SmallString<256> source(o.inputPath);
  uint64_t bytes = 0;
  if (llvm::StringRef(o.inputPath).ends_with(".onnx") &&
      !llvm::sys::fs::make_absolute(source) &&
      !llvm::sys::fs::file_size(source, bytes)) {
    training.sourceModel = std::string(source);
    training.sourceModelBytes = int64_t(bytes);
  }
  return training;
}

llvm::Expected<ModelCompileResult>
mlir::lmopt::compileModel(const ModelCompilerOptions &o, llvm::raw_ostream &log,
                          llvm::raw_ostream &listing) {
  registerModelCompiler();
  Failer fail{log};
  CompileOptions options;
  if (llvm::Error error = checkOptions(o, options, fail))
    return std::move(error);
  const TargetBackend &backend = *lookupTargetBackend(o.target);

  DriverContext driverContext(log);
  MLIRContext &context = driverContext.getContext();
  llvm::SourceMgr &sources = driverContext.getSources();

  // 1. Import; the driver does the rest.
  auto importStart = std::chrono::steady_clock::now();
  llvm::Expected<OwningOpRef<ModuleOp>> imported =
      importModel(o, context, sources, fail);
  if (!imported)
    return imported.takeError();
  ModuleOp module = imported->get();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return fail("'" + o.inputPath + "' has no func.func @main to compile");
  if (o.training && o.training->distill)
    if (llvm::Error error = importTeacher(o, module, fail))
      return std::move(error);
  llvm::Expected<MaxShapes> bounds = parseMaxShapes(o, fail);
  if (!bounds)
    return bounds.takeError();
  // With --kv-cache the cache's bounds come from it (KvCacheEntries.h).
  if (o.kvCache == 0 && failed(checkStaticInputs(main, *bounds, log)))
    return makeDiagnosedError();
  if (o.kvCache < 0)
    return fail("--kv-cache=" + std::to_string(o.kvCache) +
                " is negative; give the cache's capacity in tokens");
  printPhase(log, 1, "import",
             std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           importStart)
                 .count(),
             std::to_string(main.getNumArguments()) + " inputs, " +
                 std::to_string(main.getNumResults()) + " outputs");

  if (o.kvCache > 0)
    options.kvCache = KvCacheOptions{o.kvCache, *bounds, o.prefillAllLogits};
  if (o.training) {
    options.training = withSourceModel(o);
    options.training->maxShapes = *bounds;
  }
  options.plan.maxShapes = std::move(*bounds);
  std::unique_ptr<quantization::QuantizeDriver> quantizer;
  if (o.quantize)
    quantizer = std::make_unique<quantization::QuantizeDriver>(
        *getQuantizeOptions(o), backend, options.target, log);
  CompileDriver driver(backend, options);
  CompileLog compileLog(quantizer.get(), log, listing, o.dumpPlan,
                        o.dumpKernels);
  llvm::Expected<PlanSummary> summary = driver.run(module, compileLog);
  if (!summary)
    return fail(summary.takeError());

  ModelCompileResult result;
  result.summary = std::move(*summary);
  result.fusions = std::move(compileLog.fusionReport);
  result.nearMisses = std::move(compileLog.nearMisses);
  if (compileLog.beforePruning && compileLog.afterPruning)
    result.pruning = pruneReportJSON(*compileLog.beforePruning,
                                     *compileLog.afterPruning,
                                     result.summary.bundleBytes);
  if (o.outputPath.empty())
    return std::move(result);
  printSummary(log, result.summary, o.outputPath);
  if (result.pruning) {
    // The unpruned bundle is not written: it would hold the cut weights
    // too.
    int64_t cut = compileLog.beforePruning->bytes -
                  compileLog.afterPruning->bytes;
    int64_t compressed = 0;
    if (const auto &sparse = result.summary.sparseWeights)
      compressed = sparse->denseBytes - sparse->storedBytes;
    log << "prune: bundle " << *result.summary.bundleBytes
        << " bytes; unpruned about "
        << int64_t(*result.summary.bundleBytes) + cut + compressed
        << " (plus the " << cut << " bytes of cut weights";
    if (compressed)
      log << " and the " << compressed
          << " bytes the sparse weights' zeros take dense";
    log << ")\n";
  }
  if (quantizer && !o.quantize->mode.empty())
    result.quantization = quantizer->finish(*result.summary.bundleBytes);
  return std::move(result);
}
