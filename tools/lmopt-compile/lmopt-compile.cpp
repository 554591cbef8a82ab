//===- lmopt-compile.cpp - model to .lmopt bundle -------------------------===//
//
// Imports a model (.onnx or .mlir) and hands it to the compile driver for the
// target `--target` names (optimize, quantize, plan, kernels, bundle),
// printing each phase and what it did. All behaviour lives in the
// libraries; this file holds flags, import and messages (docs/user-guide.md,
// "lmopt-compile").
//
//===----------------------------------------------------------------------===//

#include "QuantizeFlags.h"
#include "TrainFlags.h"

#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"
#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Format/PlanShapes.h"
#include "lmopt/Importer/ONNX/Importer.h"
#include "lmopt/Quantization/QuantizeDriver.h"
#include "lmopt/Support/DiagnosedError.h"
#include "lmopt/Target/Common/CompileDriver.h"
#include "lmopt/Target/Common/TrainingReport.h"
#include "lmopt/Target/InitAllTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = ::lmopt::runtime;

static cl::OptionCategory category("lmopt-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|model.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output bundle"),
                                       cl::value_desc("model.lmopt"),
                                       cl::cat(category));
// The description lists the registered targets (main sets it).
static cl::opt<std::string> target("target", cl::init("cpu"),
                                   cl::cat(category));
static cl::opt<char>
    optLevel("O", cl::Prefix, cl::ZeroOrMore, cl::init('2'),
             cl::desc("Kernel optimization level: -O0, -O1, -O2 (default) "
                      "or -O3"),
             cl::cat(category));
static cl::opt<std::string>
    cpuName("cpu",
            cl::desc("CPU the generated kernels are compiled for (an LLVM "
                     "name such as x86-64-v3 or sapphirerapids); default: "
                     "this machine's"),
            cl::init("host"), cl::cat(category));
static cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("--target=cuda: the GPU architecture the generated "
                      "kernels are compiled for (sm_80, sm_90, ...; default "
                      "sm_90); the bundle is refused on older GPUs"),
             cl::init("sm_90"), cl::cat(category));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("--target=cuda: what the linears, matmuls and attention "
             "compute in: fp32 (default), fp16 or bf16 (weights converted at "
             "compile time; norms, softmax and residual sums stay f32). "
             "With --train: bf16 mixed precision (bf16 products into f32, "
             "f32 parameters, optimizer and everything else)"),
    cl::value_desc("fp32|fp16|bf16"), cl::init("fp32"), cl::cat(category));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("For .onnx input: pin the shape of a graph input, "
                         "name:1x128 (repeatable)"),
                cl::value_desc("name:shape"), cl::cat(category));
static cl::list<std::string> inputValues(
    "input-value",
    cl::desc("For .onnx input: bind a graph input to constant contents, "
             "name:1,-1 (repeatable; for inputs that set shapes or axes, "
             "which lmopt needs at compile time; the input leaves the "
             "bundle's inputs)"),
    cl::value_desc("name:values"), cl::cat(category));
static cl::list<std::string> maxShapes(
    "max-shape",
    cl::desc("Bound the dynamic dims of a model input, name:8x128 "
             "(repeatable): one bundle then runs every shape up to it"),
    cl::value_desc("name:shape"), cl::cat(category));
static cl::opt<std::string> inputShapesFrom(
    "input-shapes-from",
    cl::desc("For .onnx input: pin every graph input to the shape of the "
             "array of the same name in this .npz (e.g. the inputs lmopt-run "
             "will get)"),
    cl::value_desc("inputs.npz"), cl::cat(category));
static cl::opt<int64_t> kvCache(
    "kv-cache",
    cl::desc("Compile a decoder exported with past key/values into prefill "
             "and decode entries that keep a cache of N tokens as session "
             "state, appended in place (lmopt-run --generate); bound the "
             "batch and prompt with --max-shape input_ids:BxS"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<bool> dumpPlan("dump-plan",
                              cl::desc("Print the plan to stdout (without -o, "
                                       "stop after planning)"),
                              cl::cat(category));
static cl::opt<bool>
    dumpKernels("dump-kernels",
                cl::desc("Print the outlined kernel functions to stdout "
                         "(without -o, stop after planning)"),
                cl::cat(category));
static cl::opt<bool> noFuseRowQuantization(
    "no-fuse-row-quantization",
    cl::desc("Keep an int8 linear's f32 output when it only feeds a "
             "per-token int8 linear (by default the producer writes it "
             "quantized)"),
    cl::cat(category));
static cl::opt<bool> omitWeights(
    "omit-weights",
    cl::desc("Leave the f32/f16/bf16 weights of 1024 elements or more out of "
             "the bundle: it runs only with lmopt-run --random-weights=SEED, "
             "to time a full-size model, and its outputs are meaningless"),
    cl::cat(category));
static cl::opt<std::string>
    reportFile("report",
               cl::desc("Write the fusion report and plan summary as JSON "
                        "('-' for stdout)"),
               cl::value_desc("file.json|-"), cl::cat(category));

/// "[n/5] name ...... 0.4 s  (detail)".
static void printPhase(unsigned number, llvm::StringRef name, double seconds,
                       llvm::StringRef detail) {
  std::string label = name.str() + " ";
  label.resize(std::max<size_t>(label.size(), 14), '.');
  llvm::errs() << llvm::formatv("[{0}/{1}] {2} {3:f1} s", number,
                                mlir::lmopt::kNumCompilePhases, label, seconds);
  if (!detail.empty())
    llvm::errs() << "  (" << detail << ")";
  llvm::errs() << "\n";
}

static bool hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location inner) {
    found = llvm::isa<FileLineColLoc>(inner);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

static void printPlainDiagnostic(Diagnostic &diag) {
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    llvm::errs() << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    llvm::errs() << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    llvm::errs() << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    llvm::errs() << "remark: ";
    break;
  }
  llvm::errs() << diag << "\n";
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "error: " << message << "\n";
  return EXIT_FAILURE;
}

/// Diagnosed failures have been printed already.
static int fail(llvm::Error error) {
  mlir::lmopt::printErrors(std::move(error), llvm::errs());
  return EXIT_FAILURE;
}

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

/// The --max-shape bounds by input name, or failure (reported).
static FailureOr<std::map<std::string, std::vector<int64_t>>> parseMaxShapes() {
  std::map<std::string, std::vector<int64_t>> bounds;
  for (const std::string &spec : maxShapes) {
    mlir::lmopt::ImportOptions parsed;
    if (llvm::Error error = mlir::lmopt::parseInputShape(spec, parsed)) {
      llvm::errs() << "error: --max-shape: " << llvm::toString(std::move(error))
                   << "\n";
      return failure();
    }
    auto &[name, dims] = *parsed.inputShapes.begin();
    if (llvm::any_of(dims, ShapedType::isDynamic)) {
      llvm::errs() << "error: --max-shape '" << spec
                   << "' has a '?' dim; a bound is a number\n";
      return failure();
    }
    if (llvm::is_contained(inputShapes, spec) ||
        llvm::any_of(inputShapes, [&](const std::string &pinned) {
          return llvm::StringRef(pinned).rsplit(':').first == name;
        })) {
      llvm::errs() << "error: input '" << name
                   << "' has both --input-shape and --max-shape\n";
      return failure();
    }
    if (!bounds
             .emplace(name.str(),
                      std::vector<int64_t>(dims.begin(), dims.end()))
             .second) {
      llvm::errs() << "error: --max-shape names input '" << name << "' twice\n";
      return failure();
    }
  }
  return bounds;
}

/// Every input needs static dims or a --max-shape bound.
static LogicalResult
checkStaticInputs(func::FuncOp main,
                  const std::map<std::string, std::vector<int64_t>> &bounds) {
  bool ok = true;
  for (BlockArgument arg : main.getArguments()) {
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.hasStaticShape())
      continue;
    std::string name = mlir::lmopt::getGraphInputName(main, arg.getArgNumber());
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
    llvm::errs() << "error: input '" << name << "' has dynamic dims [" << dims
                 << "]; pin them with --input-shape " << name << ":"
                 << suggestShape(type.getShape()) << " or bound them with "
                 << "--max-shape " << name << ":"
                 << suggestShape(type.getShape()) << "\n";
    ok = false;
  }
  return success(ok);
}

static FailureOr<OwningOpRef<ModuleOp>> importModel(MLIRContext &context,
                                                    llvm::SourceMgr &sources) {
  if (llvm::StringRef(inputFile).ends_with(".onnx")) {
    mlir::lmopt::ImportOptions options;
    for (const std::string &spec : inputShapes)
      if (llvm::Error error = mlir::lmopt::parseInputShape(spec, options)) {
        llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
        return failure();
      }
    for (const std::string &spec : inputValues)
      if (llvm::Error error = mlir::lmopt::parseInputValue(spec, options)) {
        llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
        return failure();
      }
    if (!inputShapesFrom.empty()) {
      std::vector<::lmopt::runtime::NamedTensor> arrays;
      ::lmopt::runtime::Status status =
          ::lmopt::runtime::readNpz(inputShapesFrom, arrays);
      if (!status.isOk()) {
        llvm::errs() << "error: --input-shapes-from: " << status.message()
                     << "\n";
        return failure();
      }
      for (const ::lmopt::runtime::NamedTensor &array : arrays) {
        if (array.tensor.shape.empty()) {
          llvm::errs() << "error: --input-shapes-from: '" << inputShapesFrom
                       << "' member '" << array.name
                       << "' is a scalar; graph inputs here have dims\n";
          return failure();
        }
        // An explicit --input-shape for the same input wins.
        options.inputShapes.try_emplace(
            array.name, SmallVector<int64_t>(array.tensor.shape.begin(),
                                             array.tensor.shape.end()));
      }
    }
    // Training keeps each source parameter its own (ImportOptions).
    options.untieInitializerAliases = lmopt_compile::isTrainingRequested();
    return mlir::lmopt::importONNXModel(context, inputFile, options);
  }
  if (!inputShapes.empty() || !inputShapesFrom.empty() ||
      !inputValues.empty()) {
    llvm::errs() << "error: --input-shape, --input-shapes-from and "
                    "--input-value apply to "
                    ".onnx models; a .mlir "
                    "model states its shapes in @main's signature\n";
    return failure();
  }
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(inputFile, &message);
  if (!buffer) {
    llvm::errs() << "error: " << message << "\n";
    return failure();
  }
  sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return failure();
  return std::move(module);
}

static void printFusions(const mlir::lmopt::FusionSummary &summary) {
  std::map<std::string, int64_t> fired;
  for (const auto &[kind, value] : summary.counts)
    if (int64_t fused = value.getAsObject()->getInteger("fused").value_or(0))
      fired[kind.str()] = fused;
  llvm::errs() << "fusions:";
  if (fired.empty())
    llvm::errs() << " none";
  bool first = true;
  for (const auto &[kind, count] : fired) {
    llvm::errs() << (first ? " " : ", ") << kind << " " << count;
    first = false;
  }
  llvm::errs() << " (near misses: " << summary.nearMissLines.size() << ")\n";
  for (const std::string &line : summary.nearMissLines)
    llvm::errs() << "  " << line << "\n";
}

/// "symbols: input_ids.0 <= 8, ..." and the assumptions, for a plan with
/// symbolic dims.
static void printSymbols(const rt::Plan &plan, bool named) {
  if (!plan.isSymbolic())
    return;
  if (named)
    llvm::errs() << "entry '" << plan.name << "' ";
  llvm::errs() << "symbols:";
  for (auto [i, symbol] : llvm::enumerate(plan.symbols))
    llvm::errs() << (i ? ", " : " ") << symbol.name << " <= " << symbol.bound;
  llvm::errs() << "\nassumptions:";
  if (plan.assumptions.empty())
    llvm::errs() << " none";
  for (auto [i, assumption] : llvm::enumerate(plan.assumptions))
    llvm::errs() << (i ? ", " : " ")
                 << rt::formatDimExpr(plan, plan.exprs[assumption.lhs])
                 << (assumption.kind == rt::PlanAssumption::Kind::Equal
                         ? " == "
                         : " <= ")
                 << rt::formatDimExpr(plan, plan.exprs[assumption.rhs]);
  llvm::errs() << " (checked on every run)\n";
}

/// Writes `json` to `path` ('-' for stdout); `what` names it in the error.
static LogicalResult writeJSON(llvm::StringRef path, llvm::json::Value json,
                               llvm::StringRef what) {
  if (path == "-") {
    llvm::outs() << llvm::formatv("{0:2}", json) << "\n";
    return success();
  }
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &message);
  if (!file) {
    llvm::errs() << "error: cannot write the " << what << ": " << message
                 << "\n";
    return failure();
  }
  file->os() << llvm::formatv("{0:2}", json) << "\n";
  file->keep();
  return success();
}

static LogicalResult writeReport(const llvm::json::Object &fusions,
                                 const mlir::lmopt::PlanSummary &summary) {
  return writeJSON(reportFile,
                   llvm::json::Object{{"fusions", llvm::json::Object(fusions)},
                                      {"plan", summary.toJSON()}},
                   "report");
}

static void printSummary(const mlir::lmopt::PlanSummary &summary) {
  llvm::errs() << "steps:";
  bool first = true;
  for (const auto &[kind, count] : summary.steps) {
    llvm::errs() << (first ? " " : ", ") << count << " " << kind;
    first = false;
  }
  llvm::errs() << " (" << summary.numSteps << " in all)\n";
  llvm::errs() << "kernels: " << summary.numKernels << "\n";
  llvm::errs() << "weights: " << summary.weightsBytes << " bytes\n";
  if (summary.omittedWeights && summary.omittedWeights->first == 0)
    llvm::errs() << "omitted weights: none (no f32/f16/bf16 weight of 1024 "
                    "elements or more); the bundle has all its weights\n";
  else if (summary.omittedWeights)
    llvm::errs() << "omitted weights: " << summary.omittedWeights->first
                 << " tensors, " << summary.omittedWeights->second
                 << " bytes (--omit-weights: run the bundle with lmopt-run "
                    "--random-weights=SEED, to time it only)\n";
  for (const mlir::lmopt::PlanRewriteCount &rewrite : summary.rewrites)
    if (rewrite.count)
      llvm::errs() << rewrite.description << ": " << rewrite.count << "\n";
  llvm::errs() << "arena: " << summary.arenaBytes << " bytes (naive "
               << summary.naiveArenaBytes << " bytes";
  if (summary.naiveArenaBytes)
    llvm::errs() << llvm::formatv(", {0:f0}%",
                                  100.0 * double(summary.arenaBytes) /
                                      double(summary.naiveArenaBytes));
  llvm::errs() << "; " << summary.inPlaceLinears << " in-place residuals)\n";
  llvm::errs() << "bundle: " << *summary.bundleBytes << " bytes -> "
               << outputFile << "\n";
}

namespace {
/// Prints what the compile driver did as it goes, and runs the quantization
/// step between optimization and planning.
class CompileLog : public mlir::lmopt::CompileObserver {
public:
  explicit CompileLog(mlir::lmopt::quantization::QuantizeDriver *quantizer)
      : quantizer(quantizer) {}

  void phaseDone(unsigned number, llvm::StringRef name, double seconds,
                 llvm::StringRef detail) override {
    printPhase(number, name, seconds, detail);
  }
  void optimized(const mlir::lmopt::FusionSummary &fusions) override {
    fusionReport = fusions.report;
    printFusions(fusions);
  }
  llvm::Error beforePlan(ModuleOp module,
                         const mlir::lmopt::BundleMeta &meta) override {
    return quantizer ? quantizer->run(module, meta) : llvm::Error::success();
  }
  void planned(const mlir::lmopt::BundlePlan &bundle) override {
    bool named = bundle.entries.size() > 1;
    if (named) {
      llvm::errs() << "entries:";
      for (const mlir::lmopt::TargetPlan &entry : bundle.entries)
        llvm::errs() << " " << entry.plan.name << " ("
                     << entry.plan.steps.size() << " steps)";
      llvm::errs() << "\n";
    }
    uint64_t stateBytes = 0;
    for (const rt::PlanState &state : bundle.states)
      stateBytes += state.byteSize();
    if (!bundle.states.empty())
      llvm::errs() << "states: " << bundle.states.size() << " ("
                   << bundle.states.front().name << " "
                   << rt::dtypeName(bundle.states.front().dtype) << " "
                   << rt::formatDims(bundle.states.front().dims)
                   << (bundle.states.size() > 1 ? ", ..." : "") << "), "
                   << stateBytes << " bytes in a session\n";
    if (std::optional<llvm::StringRef> precision =
            bundle.training.getString("precision"))
      llvm::errs() << "mixed precision: " << *precision
                   << " products into f32; parameters, gradients and the "
                      "optimizer f32\n";
    if (std::optional<int64_t> dropouts =
            bundle.training.getInteger("dropouts");
        dropouts && *dropouts)
      llvm::errs() << "dropout: " << *dropouts
                   << " in training mode, masks from train_step's "
                      "'dropout_seed' (--disable-dropout removes them)\n";
    if (const llvm::json::Object *memory =
            bundle.training.getObject("memory"))
      mlir::lmopt::printSavedActivations(llvm::errs(), *memory);
    for (const mlir::lmopt::TargetPlan &entry : bundle.entries) {
      printSymbols(entry.plan, named);
      if (!dumpPlan)
        continue;
      if (named)
        llvm::outs() << "entry '" << entry.plan.name << "':\n";
      mlir::lmopt::printPlan(llvm::outs(), entry, bundle.weights.size());
    }
    if (dumpPlan)
      for (const rt::PlanState &state : bundle.states)
        llvm::outs() << "state '" << state.name << "' "
                     << rt::dtypeName(state.dtype) << " "
                     << rt::formatDims(state.dims) << " init "
                     << rt::planStateInitName(state.init) << "\n";
    if (dumpKernels && bundle.kernels)
      bundle.kernels.get().print(llvm::outs());
    // Keep the listing ahead of the later phases' lines when both go to one
    // stream.
    llvm::outs().flush();
  }
  void kernelsCompiled(const mlir::lmopt::CompiledKernels &,
                       llvm::StringRef description) override {
    if (!description.empty())
      llvm::errs() << description << "\n";
  }

  /// The fusion report, for --report.
  llvm::json::Object fusionReport;

private:
  mlir::lmopt::quantization::QuantizeDriver *quantizer;
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::lmopt::registerAllLmoptPasses();
  mlir::lmopt::registerAllTargetBackends();
  std::vector<std::string> names = mlir::lmopt::getRegisteredTargetBackends();
  std::string targets = llvm::join(names, ", ");
  std::string targetHelp = "Target to compile for:";
  for (auto [i, name] : llvm::enumerate(names))
    targetHelp +=
        (i ? "; " : " ") + name + " (" +
        mlir::lmopt::lookupTargetBackend(name)->getDescription().str() + ")";
  target.setDescription(targetHelp);
  cl::HideUnrelatedOptions({&category, &lmopt_compile::getQuantizeCategory(),
                            &lmopt_compile::getTrainCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "lmopt-compile: compile a transformer model to a .lmopt bundle\n");

  const mlir::lmopt::TargetBackend *backend =
      mlir::lmopt::lookupTargetBackend(target);
  if (!backend)
    return fail("unknown target '" + target +
                "'; registered targets: " + targets);
  if (optLevel < '0' || optLevel > '3')
    return fail(llvm::Twine("unknown optimization level -O") +
                llvm::Twine(char(optLevel)) + "; use -O0 to -O3");
  if (outputFile.empty() && !dumpPlan && !dumpKernels)
    return fail("no output file; pass -o model.lmopt (or --dump-plan)");
  std::optional<mlir::lmopt::Precision> precisionValue =
      mlir::lmopt::parsePrecision(precision);
  if (!precisionValue)
    return fail("--precision: unknown precision '" + precision +
                "'; use fp32, fp16 or bf16");
  // Quantization flags (QuantizeFlags.cpp).
  std::optional<mlir::lmopt::quantization::QuantizeDriverOptions> quantize;
  if (lmopt_compile::isQuantizationRequested()) {
    if (*precisionValue != mlir::lmopt::Precision::FP32)
      return fail("--precision=" + precision +
                  " and --quantize both choose the linears' types; give one");
    quantize = lmopt_compile::getQuantizeDriverOptions();
    if (llvm::Error error =
            mlir::lmopt::quantization::checkQuantizeOptions(*quantize))
      return fail(std::move(error));
  }

  std::optional<mlir::lmopt::TrainingOptions> training;
  if (lmopt_compile::isTrainingRequested()) {
    if (quantize)
      return fail("--train and --quantize: train the float model, then "
                  "quantize the trained one");
    if (kvCache != 0)
      return fail("--train and --kv-cache do not go together: a training "
                  "step runs whole sequences");
    if (target != "cpu")
      return fail("--train: training bundles compile for --target=cpu for "
                  "now");
    llvm::Expected<mlir::lmopt::TrainingOptions> options =
        lmopt_compile::getTrainingOptions();
    if (!options)
      return fail(options.takeError());
    training = std::move(*options);
    training->disableDropout = lmopt_compile::isDropoutDisabled();
    training->schedule = lmopt_compile::getTrainingSchedule();
    llvm::SmallString<256> source(inputFile);
    uint64_t bytes = 0;
    if (llvm::StringRef(inputFile).ends_with(".onnx") &&
        !llvm::sys::fs::make_absolute(source) &&
        !llvm::sys::fs::file_size(source, bytes)) {
      training->sourceModel = std::string(source);
      training->sourceModelBytes = int64_t(bytes);
    }
  } else if (lmopt_compile::isDropoutDisabled()) {
    return fail("--disable-dropout applies to --train (inference bundles "
                "never run dropout)");
  }

  DialectRegistry registry;
  registry.insert<mlir::lmopt::LmoptDialect, arith::ArithDialect,
                  func::FuncDialect, tensor::TensorDialect>();
  mlir::lmopt::registerONNXImportDialects(registry);
  mlir::lmopt::registerGradientModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the node; the whole op would drown them.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sources;
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  // Diagnostics located only by node name (ONNX imports, loc("...")) read
  // better without the source manager's "<unknown>:0" prefix.
  ScopedDiagnosticHandler byNode(&context, [](Diagnostic &diag) {
    if (hasFileLocation(diag.getLocation()))
      return failure(); // the source manager's handler shows the line
    printPlainDiagnostic(diag);
    for (Diagnostic &note : diag.getNotes())
      printPlainDiagnostic(note);
    return success();
  });

  // 1. Import; the driver does the rest.
  auto importStart = std::chrono::steady_clock::now();
  FailureOr<OwningOpRef<ModuleOp>> imported = importModel(context, sources);
  if (failed(imported))
    return EXIT_FAILURE;
  ModuleOp module = imported->get();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return fail("'" + inputFile + "' has no func.func @main to compile");
  FailureOr<std::map<std::string, std::vector<int64_t>>> bounds =
      parseMaxShapes();
  // With --kv-cache the cache's bounds come from it (KvCacheEntries.h).
  if (failed(bounds) ||
      (kvCache == 0 && failed(checkStaticInputs(main, *bounds))))
    return EXIT_FAILURE;
  if (kvCache < 0)
    return fail("--kv-cache=" + std::to_string(kvCache) +
                " is negative; give the cache's capacity in tokens");
  printPhase(1, "import",
             std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           importStart)
                 .count(),
             std::to_string(main.getNumArguments()) + " inputs, " +
                 std::to_string(main.getNumResults()) + " outputs");

  mlir::lmopt::CompileOptions options;
  options.target.optLevel = unsigned(optLevel - '0');
  options.target.cpu = cpuName;
  {
    llvm::StringRef arch = cudaArch;
    unsigned sm = 0;
    if (!arch.consume_front("sm_") || arch.getAsInteger(10, sm) || sm < 75 ||
        sm > 200)
      return fail("--cuda-arch: '" + cudaArch +
                  "' is not a GPU architecture lmopt compiles for; use sm_75 "
                  "or newer, e.g. sm_90");
    options.target.cudaSmVersion = sm;
  }
  options.target.fuseRowQuantization = !noFuseRowQuantization;
  options.target.precision = *precisionValue;
  if (kvCache > 0)
    options.kvCache = mlir::lmopt::KvCacheOptions{kvCache, *bounds};
  if (training) {
    training->maxShapes = *bounds;
    options.training = std::move(training);
  }
  options.plan.maxShapes = std::move(*bounds);
  options.outputPath = outputFile;
  options.modelName = llvm::sys::path::stem(inputFile).str();
  options.omitWeights = omitWeights;
  mlir::lmopt::CompileDriver driver(*backend, options);
  std::unique_ptr<mlir::lmopt::quantization::QuantizeDriver> quantizer;
  if (quantize)
    quantizer = std::make_unique<mlir::lmopt::quantization::QuantizeDriver>(
        *quantize, *backend, options.target, llvm::errs());
  CompileLog log(quantizer.get());
  llvm::Expected<mlir::lmopt::PlanSummary> summary = driver.run(module, log);
  if (!summary)
    return fail(summary.takeError());
  if (outputFile.empty()) {
    if (!reportFile.empty() && failed(writeReport(log.fusionReport, *summary)))
      return EXIT_FAILURE;
    return EXIT_SUCCESS;
  }

  printSummary(*summary);
  if (!reportFile.empty() && failed(writeReport(log.fusionReport, *summary)))
    return EXIT_FAILURE;
  if (!quantizer || quantize->mode.empty())
    return EXIT_SUCCESS;
  llvm::json::Object quantizeReport = quantizer->finish(*summary->bundleBytes);
  std::string reportPath = lmopt_compile::getQuantizeReportPath();
  if (!reportPath.empty() &&
      failed(writeJSON(reportPath, std::move(quantizeReport),
                       "quantization report")))
    return EXIT_FAILURE;
  return EXIT_SUCCESS;
}
