//===- lmopt-compile.cpp - model to .lmopt bundle -------------------------===//
//
// Imports a model (.onnx or .mlir), runs lmopt-optimize-pipeline, builds the
// CPU plan, compiles its kernels and writes the bundle, printing each phase
// and what it did. All behaviour lives in the libraries; this file holds
// flags, phases and messages (docs/user-guide.md, "lmopt-compile").
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Format/PlanShapes.h"
#include "lmopt/Importer/ONNX/Importer.h"
#include "lmopt/Target/CPU/BundleEmitter.h"
#include "lmopt/Target/CPU/KernelCodegen.h"
#include "lmopt/Target/CPU/PlanBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
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
static cl::opt<std::string> target("target",
                                   cl::desc("Target: cpu (cuda comes later)"),
                                   cl::init("cpu"), cl::cat(category));
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
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("For .onnx input: pin the shape of a graph input, "
                         "name:1x128 (repeatable)"),
                cl::value_desc("name:shape"), cl::cat(category));
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
static cl::opt<std::string>
    reportFile("report",
               cl::desc("Write the fusion report and plan summary as JSON "
                        "('-' for stdout)"),
               cl::value_desc("file.json|-"), cl::cat(category));

static constexpr int kNumPhases = 5;

namespace {
/// Times a phase and prints "[n/5] name ...... 0.4 s" when it ends.
class Phase {
public:
  Phase(int number, llvm::StringRef name)
      : number(number), name(name), start(std::chrono::steady_clock::now()) {}
  void done(llvm::StringRef detail = "") {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::string label = name.str() + " ";
    label.resize(std::max<size_t>(label.size(), 14), '.');
    llvm::errs() << llvm::formatv("[{0}/{1}] {2} {3:f1} s", number, kNumPhases,
                                  label, seconds);
    if (!detail.empty())
      llvm::errs() << "  (" << detail << ")";
    llvm::errs() << "\n";
  }

private:
  int number;
  llvm::StringRef name;
  std::chrono::steady_clock::time_point start;
};
} // namespace

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
    return mlir::lmopt::importONNXModel(context, inputFile, options);
  }
  if (!inputShapes.empty() || !inputShapesFrom.empty()) {
    llvm::errs() << "error: --input-shape and --input-shapes-from apply to .onnx models; a .mlir "
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

namespace {
/// What the graph passes did, from the fusion report.
struct FusionSummary {
  /// {kind: {"fused": n, "near_misses": m}}, for the bundle's meta.
  llvm::json::Object counts;
  /// The report itself, near misses with their nodes and reasons.
  llvm::json::Object report;
  /// "near miss: attention at 'node': reason", one per near miss.
  std::vector<std::string> nearMissLines;
};
} // namespace

static FusionSummary summarizeFusions(MLIRContext &context) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::lmopt::getFusionReport(&context).writeJSON(os);
  FusionSummary summary;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return summary;
  }
  const llvm::json::Object *fusions =
      parsed->getAsObject() ? parsed->getAsObject()->getObject("fusions")
                            : nullptr;
  if (!fusions)
    return summary;
  summary.report = *fusions;
  for (const auto &[kind, value] : *fusions) {
    const llvm::json::Object *record = value.getAsObject();
    if (!record)
      continue;
    int64_t fused = record->getInteger("fused").value_or(0);
    int64_t missed = 0;
    if (const llvm::json::Array *misses = record->getArray("near_misses")) {
      missed = int64_t(misses->size());
      for (const llvm::json::Value &miss : *misses) {
        const llvm::json::Object *entry = miss.getAsObject();
        if (!entry)
          continue;
        summary.nearMissLines.push_back(
            ("near miss: " + kind.str() + " at '" +
             entry->getString("node").value_or("").str() +
             "': " + entry->getString("reason").value_or("").str()));
      }
    }
    summary.counts[kind] =
        llvm::json::Object{{"fused", fused}, {"near_misses", missed}};
  }
  return summary;
}

static void printFusions(const FusionSummary &summary) {
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
static void printSymbols(const rt::Plan &plan) {
  if (!plan.isSymbolic())
    return;
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

static std::map<std::string, int64_t> countSteps(const rt::Plan &plan) {
  std::map<std::string, int64_t> counts;
  for (const rt::PlanStep &step : plan.steps)
    ++counts[rt::stepKindName(step.kind)];
  return counts;
}

static LogicalResult writeReport(const FusionSummary &fusions,
                                 const mlir::lmopt::cpu::CpuPlan &plan,
                                 std::optional<uint64_t> bundleBytes) {
  llvm::json::Object steps;
  for (const auto &[kind, count] : countSteps(plan.plan))
    steps[kind] = count;
  llvm::json::Object summary{
      {"steps", std::move(steps)},
      {"kernels", int64_t(plan.numKernels)},
      {"weights_bytes", int64_t(plan.weights.size())},
      {"arena_bytes", int64_t(plan.plan.arenaSize())},
      {"naive_arena_bytes", int64_t(plan.memory.naiveSize)},
      {"in_place_linears", int64_t(plan.memory.inPlaceLinears)},
      {"fused_row_quantizations", int64_t(plan.fusedRowQuantizations)},
  };
  if (bundleBytes)
    summary["bundle_bytes"] = int64_t(*bundleBytes);
  llvm::json::Value report(
      llvm::json::Object{{"fusions", llvm::json::Object(fusions.report)},
                         {"plan", std::move(summary)}});
  if (reportFile == "-") {
    llvm::outs() << llvm::formatv("{0:2}", report) << "\n";
    return success();
  }
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> file =
      openOutputFile(reportFile, &message);
  if (!file) {
    llvm::errs() << "error: cannot write the report: " << message << "\n";
    return failure();
  }
  file->os() << llvm::formatv("{0:2}", report) << "\n";
  file->keep();
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::lmopt::registerAllLmoptPasses();
  cl::HideUnrelatedOptions({&category, &lmopt_compile::getQuantizeCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "lmopt-compile: compile a transformer model to a .lmopt bundle\n");

  if (target != "cpu")
    return fail("target '" + target + "' is not supported yet");
  if (optLevel < '0' || optLevel > '3')
    return fail(llvm::Twine("unknown optimization level -O") +
                llvm::Twine(char(optLevel)) + "; use -O0 to -O3");
  if (outputFile.empty() && !dumpPlan && !dumpKernels)
    return fail("no output file; pass -o model.lmopt (or --dump-plan)");
  // Quantization flags (Quantize.cpp).
  lmopt_compile::QuantizeStep quantizeStep;
  bool quantizing = lmopt_compile::QuantizeStep::requested();
  if (quantizing && failed(quantizeStep.checkFlags()))
    return EXIT_FAILURE;

  DialectRegistry registry;
  registry.insert<mlir::lmopt::LmoptDialect, arith::ArithDialect,
                  func::FuncDialect, tensor::TensorDialect>();
  mlir::lmopt::registerONNXImportDialects(registry);
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

  // 1. Import.
  Phase importPhase(1, "import");
  FailureOr<OwningOpRef<ModuleOp>> imported = importModel(context, sources);
  if (failed(imported))
    return EXIT_FAILURE;
  ModuleOp module = imported->get();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return fail("'" + inputFile + "' has no func.func @main to compile");
  FailureOr<std::map<std::string, std::vector<int64_t>>> bounds =
      parseMaxShapes();
  if (failed(bounds) || failed(checkStaticInputs(main, *bounds)))
    return EXIT_FAILURE;
  importPhase.done(std::to_string(main.getNumArguments()) + " inputs, " +
                   std::to_string(main.getNumResults()) + " outputs");

  // 2. Graph optimization: the registered pipeline.
  Phase optimizePhase(2, "optimize");
  PassManager pm(&context);
  mlir::lmopt::buildLmoptOptimizePipeline(pm);
  if (failed(pm.run(module)))
    return EXIT_FAILURE;
  optimizePhase.done();
  FusionSummary fusions = summarizeFusions(context);
  printFusions(fusions);
  mlir::lmopt::cpu::KernelCodegenOptions codegen;
  codegen.optLevel = unsigned(optLevel - '0');
  codegen.cpu = cpuName;
  mlir::lmopt::cpu::BundleMeta meta;
  meta.modelName = llvm::sys::path::stem(inputFile).str();
  meta.fusions = llvm::json::Object(fusions.counts);
  if (quantizing && failed(quantizeStep.run(module, codegen, meta)))
    return EXIT_FAILURE;

  // 3. Plan: steps, weights, kernels to generate, memory.
  Phase planPhase(3, "plan");
  mlir::lmopt::cpu::PlanBuildOptions planOptions;
  planOptions.maxShapes = *bounds;
  planOptions.fuseRowQuantization = !noFuseRowQuantization;
  FailureOr<mlir::lmopt::cpu::CpuPlan> plan =
      mlir::lmopt::cpu::buildCpuPlan(module, planOptions);
  if (failed(plan))
    return EXIT_FAILURE;
  planPhase.done(std::to_string(plan->plan.steps.size()) + " steps");
  printSymbols(plan->plan);
  if (dumpPlan)
    mlir::lmopt::cpu::printPlan(llvm::outs(), *plan);
  if (dumpKernels && plan->kernels)
    plan->kernels->print(llvm::outs());
  // Keep the listing ahead of the later phases' lines when both go to one
  // stream.
  llvm::outs().flush();
  if (outputFile.empty()) {
    if (!reportFile.empty() && failed(writeReport(fusions, *plan, {})))
      return EXIT_FAILURE;
    return EXIT_SUCCESS;
  }

  // 4. Kernels.
  Phase kernelPhase(4, "kernels");
  std::vector<uint8_t> kernels;
  std::vector<std::string> cpuFeatures;
  if (plan->numKernels > 0) {
    FailureOr<std::vector<uint8_t>> compiled =
        mlir::lmopt::cpu::compileKernels(*plan->kernels, codegen);
    if (failed(compiled))
      return EXIT_FAILURE;
    kernels = std::move(*compiled);
    llvm::Expected<std::vector<std::string>> features =
        mlir::lmopt::cpu::getKernelCpuFeatures(codegen);
    if (!features)
      return fail(llvm::toString(features.takeError()));
    cpuFeatures = std::move(*features);
  }
  kernelPhase.done(std::to_string(plan->numKernels) + " kernels");
  if (!cpuFeatures.empty())
    llvm::errs() << "kernels need CPU features: "
                 << llvm::join(cpuFeatures, ", ") << "\n";

  // 5. Bundle.
  Phase writePhase(5, "write");
  llvm::Expected<uint64_t> bundleBytes = mlir::lmopt::cpu::writeCpuBundle(
      outputFile, *plan, kernels,
      mlir::lmopt::cpu::buildMetaJSON(plan->plan, meta), cpuFeatures);
  if (!bundleBytes)
    return fail("cannot write '" + outputFile +
                "': " + llvm::toString(bundleBytes.takeError()));
  writePhase.done();

  std::map<std::string, int64_t> steps = countSteps(plan->plan);
  llvm::errs() << "steps:";
  bool first = true;
  for (const auto &[kind, count] : steps) {
    llvm::errs() << (first ? " " : ", ") << count << " " << kind;
    first = false;
  }
  llvm::errs() << " (" << plan->plan.steps.size() << " in all)\n";
  llvm::errs() << "kernels: " << plan->numKernels << "\n";
  llvm::errs() << "weights: " << plan->weights.size() << " bytes\n";
  if (plan->fusedRowQuantizations)
    llvm::errs() << "int8 linears writing their output quantized for the "
                    "next: "
                 << plan->fusedRowQuantizations << "\n";
  const mlir::lmopt::cpu::MemoryPlanStats &memory = plan->memory;
  llvm::errs() << "arena: " << memory.arenaSize << " bytes (naive "
               << memory.naiveSize << " bytes";
  if (memory.naiveSize)
    llvm::errs() << llvm::formatv(
        ", {0:f0}%", 100.0 * double(memory.arenaSize) / memory.naiveSize);
  llvm::errs() << "; " << memory.inPlaceLinears << " in-place residuals)\n";
  llvm::errs() << "bundle: " << *bundleBytes << " bytes -> " << outputFile
               << "\n";
  if (!reportFile.empty() && failed(writeReport(fusions, *plan, *bundleBytes)))
    return EXIT_FAILURE;
  if (quantizing && failed(quantizeStep.finish(*bundleBytes)))
    return EXIT_FAILURE;
  return EXIT_SUCCESS;
}
