//===- lmopt-train.cpp - Train with a compiled training bundle ------------===//
//
// The command line over lmopt::training::train (Trainer.h): flags into
// TrainerOptions, the report's lines to stderr, the inference bundle
// compiled by the lmopt-compile beside this program. Every failure is one
// line "lmopt-train: error: ..." and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Session.h"
#include "lmopt/Training/Trainer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <string>

using namespace lmopt::runtime;
using namespace lmopt::training;
namespace cl = llvm::cl;

static cl::OptionCategory category("lmopt-train options");
static cl::opt<std::string> bundlePath(cl::Positional, cl::Required,
                                       cl::desc("<train.lmopt>"),
                                       cl::cat(category));
static cl::opt<std::string>
    dataPath("data",
             cl::desc("Training examples: an .npz with one array per input "
                      "of train_step (and the labels), one row per example, "
                      "or a token dataset of lmopt-tokenize (PREFIX.idx)"),
             cl::value_desc("train.npz"), cl::cat(category));
static cl::opt<std::string> tokenizerPath(
    "tokenizer",
    cl::desc("With token datasets: refuse one written with another "
             "tokenizer than this tokenizer.json"),
    cl::value_desc("tokenizer.json"), cl::cat(category));
static cl::opt<std::string>
    evalPath("eval",
             cl::desc("Validation examples, evaluated after each epoch "
                      "(loss, and accuracy for cross-entropy)"),
             cl::value_desc("val.npz"), cl::cat(category));
static cl::opt<int64_t> epochs("epochs",
                               cl::desc("Passes over the data (default 1)"),
                               cl::init(1), cl::cat(category));
static cl::opt<int64_t>
    steps("steps",
          cl::desc("Optimizer steps to run instead of whole epochs (the data "
                   "wraps around)"),
          cl::init(0), cl::cat(category));
static cl::opt<int64_t>
    batch("batch",
          cl::desc("Examples per micro-batch (default: the bundle's batch)"),
          cl::init(0), cl::cat(category));
static cl::opt<bool> noShuffle("no-shuffle",
                               cl::desc("Take batches in file order"),
                               cl::cat(category));
static cl::opt<bool> groupByLength(
    "group-by-length",
    cl::desc("Batch examples of similar lengths (attention-mask counts) "
             "together: after each epoch's shuffle, every run of 50 batches' "
             "examples is sorted by length, longest first; with a bounded "
             "length (--max-shape) a batch then pads only to its longest"),
    cl::cat(category));
static cl::opt<uint64_t>
    seed("seed", cl::desc("Seed of the shuffling and of the dropout masks "
                           "(default 0)"), cl::init(0),
         cl::cat(category));
static cl::opt<double>
    lrFlag("lr", cl::desc("Peak learning rate (default: the bundle's)"),
           cl::init(-1.0), cl::cat(category));
static cl::opt<std::string>
    scheduleFlag("lr-schedule",
                 cl::desc("linear, cosine or constant (default: the "
                          "bundle's)"),
                 cl::cat(category));
static cl::opt<int64_t> warmupFlag(
    "warmup-steps", cl::desc("Warm-up optimizer steps (default: the bundle's)"),
    cl::init(-1), cl::cat(category));
static cl::opt<int64_t> scheduleSteps(
    "schedule-steps",
    cl::desc("Optimizer steps the schedule decays over (default: those this "
             "run makes); a run stopped early keeps the longer run's rates"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> gradAccumFlag(
    "grad-accum",
    cl::desc("Micro-batches per optimizer step (default: the bundle's)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string> checkpointDir(
    "checkpoint-dir",
    cl::desc("Write a checkpoint here after each epoch (and each "
             "--checkpoint-every steps)"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<int64_t>
    checkpointEvery("checkpoint-every",
                    cl::desc("Also checkpoint every N optimizer steps"),
                    cl::init(0), cl::cat(category));
static cl::opt<bool>
    resume("resume",
           cl::desc("Continue from the checkpoint in --checkpoint-dir"),
           cl::cat(category));
static cl::opt<std::string>
    logLosses("log-losses",
              cl::desc("Write one line per optimizer step: its loss"),
              cl::value_desc("losses.txt"), cl::cat(category));
static cl::opt<std::string>
    saveStatesPath("save-states",
                   cl::desc("Write the final states (parameters, moments) "
                            "as .npz"),
                   cl::value_desc("final.npz"), cl::cat(category));
static cl::opt<std::string> exportOnnx(
    "export-onnx",
    cl::desc("Write the trained model as ONNX: the model the bundle was "
             "compiled from with the trained parameters"),
    cl::value_desc("trained.onnx"), cl::cat(category));
static cl::opt<std::string> onnxModel(
    "onnx-model",
    cl::desc("With --export-onnx: the source model (default: the path "
             "lmopt-compile recorded)"),
    cl::value_desc("model.onnx"), cl::cat(category));
static cl::opt<std::string> exportBundle(
    "export-bundle",
    cl::desc("Compile the trained model (--export-onnx's model) into an "
             "inference bundle, with lmopt-compile beside lmopt-train, at "
             "the shapes the eval entry takes"),
    cl::value_desc("trained.lmopt"), cl::cat(category));
static cl::opt<int64_t> logEvery("log-every",
                                 cl::desc("Progress line every N optimizer "
                                          "steps (default 10)"),
                                 cl::init(10), cl::cat(category));
static cl::opt<int> threads("num-threads",
                            cl::desc("Threads for library steps (0: all)"),
                            cl::init(0), cl::cat(category));


[[noreturn]] static void fail(const llvm::Twine &message) {
  llvm::errs() << "lmopt-train: error: " << message << "\n";
  std::exit(1);
}

/// --export-bundle: compiles the exported model with the lmopt-compile
/// beside this program.
static llvm::Error compileWithTool(const std::string &onnxPath,
                                   const std::string &outPath,
                                   const std::vector<BundleInput> &inputs) {
  std::string self = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&compileWithTool));
  llvm::SmallString<256> compiler(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(compiler, "lmopt-compile");
  return compileInferenceBundle(std::string(compiler), onnxPath, outPath,
                                inputs);
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "lmopt-train: train with a bundle compiled by lmopt-compile --train\n");
  TrainerOptions options;
  options.data = dataPath;
  options.eval = evalPath;
  options.tokenizer = tokenizerPath;
  options.epochs = epochs;
  options.steps = steps;
  options.batch = batch;
  options.shuffle = !noShuffle;
  options.groupByLength = groupByLength;
  options.seed = seed;
  options.lr = lrFlag;
  options.schedule = scheduleFlag;
  options.warmup = warmupFlag;
  options.scheduleSteps = scheduleSteps;
  options.gradAccum = gradAccumFlag;
  options.checkpointDir = checkpointDir;
  options.checkpointEvery = checkpointEvery;
  options.resume = resume;
  options.logLosses = logLosses;
  options.saveStates = saveStatesPath;
  options.exportOnnx = exportOnnx;
  options.onnxModel = onnxModel;
  options.exportBundle = exportBundle;
  options.logEvery = logEvery;
  options.bundleName = "'" + bundlePath + "'";
  // Before the bundle is loaded: a wrong command line fails at once.
  if (llvm::Error error = checkTrainerOptions(options))
    fail(llvm::toString(std::move(error)));

  SessionOptions sessionOptions;
  sessionOptions.threads = threads;
  std::unique_ptr<Session> session;
  if (Status status = Session::create(bundlePath, sessionOptions, session);
      !status)
    fail("'" + bundlePath + "': " + status.message());
  TrainerCallbacks callbacks;
  callbacks.log = [](llvm::StringRef line) { llvm::errs() << line << "\n"; };
  callbacks.compileBundle = compileWithTool;
  if (llvm::Error error = train(*session, options, callbacks))
    fail(llvm::toString(std::move(error)));
  return 0;
}
