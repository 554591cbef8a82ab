//===- lmopt-compile.cpp - model to .lmopt bundle -------------------------===//
//
// Turns the flags into ModelCompilerOptions and hands them to lib/Driver's
// compileModel (import, optimize, quantize, plan, kernels, bundle, and the
// messages), which the Python package calls too; this file holds the flags
// and the JSON reports they ask for (docs/user-guide.md, "lmopt-compile").
//
//===----------------------------------------------------------------------===//

#include "QuantizeFlags.h"
#include "TrainFlags.h"

#include "lmopt/Driver/ModelCompiler.h"
#include "lmopt/Support/DiagnosedError.h"
#include "lmopt/Target/Common/CompileDriver.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

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
static cl::opt<bool> prefillAllLogits(
    "prefill-all-logits",
    cl::desc("With --kv-cache: the prefill entry returns the logits of every "
             "prompt position (by default only the last one's, all that "
             "generation reads, so the LM head multiplies one row per "
             "sequence)"),
    cl::init(false), cl::cat(category));
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
static cl::opt<bool> noFuseBf16Outputs(
    "no-fuse-bf16-outputs",
    cl::desc("Keep a bf16 linear's or an attention's f32 output when only "
             "a cast to bf16 reads it, and a linear's f32 output when only an "
             "attention with bf16 products reads it (by default the step "
             "writes bf16)"),
    cl::cat(category));
static cl::opt<bool> noFuseStaticOutputs(
    "no-fuse-static-outputs",
    cl::desc("Keep an int8 linear's f32 output when only a static "
             "quantization reads it (by default the linear writes the "
             "quantized bytes)"),
    cl::cat(category));
static cl::opt<std::string> prune(
    "prune",
    cl::desc("Structured pruning: remove a fraction of each FFN's neurons "
             "and of each attention's heads, ffn=0.5,heads=0.5 (also "
             "multiple=N to round kept counts, criterion=magnitude, or "
             "wanda or activation with --calibration, or gradient with "
             "labelled --calibration samples and --loss); the matrices "
             "shrink"),
    cl::value_desc("ffn=R,heads=R"), cl::cat(category));
static cl::opt<std::string> expose(
    "expose",
    cl::desc("Also output intermediate values: hidden-states (each encoder "
             "layer's input and the last one's output, hidden_state.0 to "
             "hidden_state.L) and/or the ONNX node names of ops, comma "
             "separated (docs/compression.md)"),
    cl::value_desc("hidden-states,NODE,..."), cl::cat(category));
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

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::lmopt::registerModelCompiler();
  std::vector<std::string> names = mlir::lmopt::getRegisteredTargetBackends();
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

  mlir::lmopt::ModelCompilerOptions options;
  options.inputPath = inputFile;
  options.outputPath = outputFile;
  options.target = target;
  if (optLevel < '0' || optLevel > '3') {
    llvm::errs() << "error: unknown optimization level -O" << char(optLevel)
                 << "; use -O0 to -O3\n";
    return EXIT_FAILURE;
  }
  options.optLevel = unsigned(optLevel - '0');
  options.cpu = cpuName;
  options.cudaArch = cudaArch;
  options.precision = precision;
  options.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  options.inputValues.assign(inputValues.begin(), inputValues.end());
  options.maxShapes.assign(maxShapes.begin(), maxShapes.end());
  options.inputShapesFrom = inputShapesFrom;
  options.kvCache = kvCache;
  options.prefillAllLogits = prefillAllLogits;
  options.dumpPlan = dumpPlan;
  options.dumpKernels = dumpKernels;
  options.fuseRowQuantization = !noFuseRowQuantization;
  options.fuseBf16Outputs = !noFuseBf16Outputs;
  options.fuseStaticOutputs = !noFuseStaticOutputs;
  options.omitWeights = omitWeights;
  options.prune = prune;
  options.expose = expose;
  // Quantization flags (QuantizeFlags.cpp), training flags (TrainFlags.cpp).
  if (lmopt_compile::isQuantizationRequested())
    options.quantize = lmopt_compile::getQuantizeDriverOptions();
  options.disableDropout = lmopt_compile::isDropoutDisabled();
  // The gradient criterion differentiates the training loss (--loss).
  bool training = lmopt_compile::isTrainingRequested();
  if (training || llvm::StringRef(prune).contains("criterion=gradient")) {
    llvm::Expected<mlir::lmopt::TrainingOptions> parsed =
        lmopt_compile::getTrainingOptions();
    if (!parsed) {
      mlir::lmopt::printErrors(parsed.takeError(), llvm::errs());
      return EXIT_FAILURE;
    }
    (training ? options.training : options.pruneLoss) = std::move(*parsed);
  }

  llvm::Expected<mlir::lmopt::ModelCompileResult> result =
      mlir::lmopt::compileModel(options, llvm::errs(), llvm::outs());
  if (!result) {
    mlir::lmopt::printErrors(result.takeError(), llvm::errs());
    return EXIT_FAILURE;
  }
  if (!reportFile.empty() &&
      failed(writeJSON(reportFile, result->toJSON(), "report")))
    return EXIT_FAILURE;
  std::string reportPath = lmopt_compile::getQuantizeReportPath();
  if (result->quantization && !reportPath.empty() &&
      failed(writeJSON(reportPath, std::move(*result->quantization),
                       "quantization report")))
    return EXIT_FAILURE;
  return EXIT_SUCCESS;
}
