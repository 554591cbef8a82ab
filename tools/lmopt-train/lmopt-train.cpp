//===- lmopt-train.cpp - Train with a compiled training bundle ------------===//
//
// Runs the entries `lmopt-compile --train` writes: `train_step` once per
// micro-batch, `optimizer_step` once per optimizer step with the
// learning-rate schedule and AdamW's bias corrections computed here, and
// `eval` on a validation set after each epoch. Batches come from an .npz of
// arrays with one row per example or a token dataset (TrainData.h). It
// shows progress, checkpoints the
// session's states with the trainer's position (a checkpoint is written in
// full before the file that names it replaces the previous one), resumes
// from it with the same results as an uninterrupted run, and stops on a
// NaN/Inf loss naming the step, leaving the last good checkpoint. Every
// failure is one line "lmopt-train: error: ..." and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "ExportOnnx.h"
#include "TrainData.h"

#include "lmopt/Format/AtomicWrite.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Runtime/Session.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace lmopt::runtime;
using namespace lmopt_train;
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

namespace {

/// The hyper-parameters lmopt-train runs with: the bundle's, overridden by
/// flags.
struct Schedule {
  double lr = 2e-5;
  std::string kind = "linear";
  int64_t warmup = 0;
  int64_t gradAccum = 1;
  double beta1 = 0.9, beta2 = 0.999;
  std::string loss = "cross-entropy";
  std::string labels = "labels";
  /// The model the bundle was compiled from, and its size then.
  std::string sourceModel;
  int64_t sourceModelBytes = -1;
  /// The ONNX initializer of each parameter whose name was recovered.
  std::map<std::string, std::string> initializers;
  /// Cross-entropy: labels lie in [0, classes) or equal ignoreIndex.
  int64_t classes = 0;
  int64_t ignoreIndex = -100;

  /// transformers' schedules: the factor for optimizer step `k` (0-based)
  /// of `total`.
  double factor(int64_t k, int64_t total) const {
    if (k < warmup)
      return double(k) / double(std::max<int64_t>(1, warmup));
    if (kind == "constant")
      return 1.0;
    double span = double(std::max<int64_t>(1, total - warmup));
    if (kind == "cosine") {
      double progress = double(k - warmup) / span;
      return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * progress)));
    }
    return std::max(0.0, double(total - k) / span);
  }
};

/// What a checkpoint's trainer file records.
struct Position {
  int64_t step = 0;  // optimizer steps done
  int64_t epoch = 0; // epochs begun
  int64_t batch = 0; // micro-batches of the epoch consumed
};

} // namespace

/// --export-bundle: compiles the exported model at `onnxPath` with the
/// lmopt-compile beside this program, at the eval entry's input shapes
/// (the labels left out); a temporary model is removed after.
static void writeInferenceBundle(const Session &session,
                                 const Schedule &schedule,
                                 const std::string &onnxPath) {
  std::vector<BundleInput> inputs;
  for (const EntryInfo &entry : session.entries())
    if (entry.name == "eval")
      for (const ValueInfo &input : entry.inputs)
        if (input.name != schedule.labels)
          inputs.push_back({input.name, input.dims, input.maxDims});
  std::string self = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&writeInferenceBundle));
  llvm::SmallString<256> compiler(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(compiler, "lmopt-compile");
  llvm::Error error =
      compileInferenceBundle(std::string(compiler), onnxPath, exportBundle,
                             inputs);
  if (exportOnnx.empty())
    llvm::sys::fs::remove(onnxPath);
  if (error)
    fail("--export-bundle: " + llvm::toString(std::move(error)));
  llvm::errs() << "wrote the trained model as an inference bundle to '"
               << exportBundle << "'\n";
}

static Schedule readSchedule(const Session &session) {
  Schedule s;
  llvm::Expected<llvm::json::Value> meta = llvm::json::parse(session.meta());
  if (!meta)
    fail("'" + bundlePath + "': the meta section is not JSON: " +
         llvm::toString(meta.takeError()));
  const llvm::json::Object *training =
      meta->getAsObject() ? meta->getAsObject()->getObject("training")
                          : nullptr;
  if (!training || session.findEntry("train_step") < 0 ||
      session.findEntry("optimizer_step") < 0)
    fail("'" + bundlePath +
         "' is not a training bundle (entries " + session.entryNames() +
         "); compile the model with lmopt-compile --train");
  if (auto loss = training->getString("loss"))
    s.loss = loss->str();
  if (auto labels = training->getString("labels"))
    s.labels = labels->str();
  s.classes = training->getInteger("classes").value_or(0);
  if (auto source = training->getString("source_model"))
    s.sourceModel = source->str();
  s.sourceModelBytes =
      training->getInteger("source_model_bytes").value_or(-1);
  if (const llvm::json::Array *params = training->getArray("parameters"))
    for (const llvm::json::Value &param : *params)
      if (const llvm::json::Object *p = param.getAsObject())
        if (auto name = p->getString("name"))
          if (auto initializer = p->getString("initializer"))
            s.initializers[name->str()] = initializer->str();
  s.ignoreIndex = training->getInteger("ignore_index").value_or(s.ignoreIndex);
  s.beta1 = training->getNumber("beta1").value_or(s.beta1);
  s.beta2 = training->getNumber("beta2").value_or(s.beta2);
  if (const llvm::json::Object *schedule = training->getObject("schedule")) {
    s.lr = schedule->getNumber("lr").value_or(s.lr);
    if (auto kind = schedule->getString("lr_schedule"))
      s.kind = kind->str();
    s.warmup = schedule->getInteger("warmup_steps").value_or(s.warmup);
    s.gradAccum = schedule->getInteger("grad_accum").value_or(s.gradAccum);
  }
  if (lrFlag > 0)
    s.lr = lrFlag;
  if (!scheduleFlag.empty())
    s.kind = scheduleFlag;
  if (warmupFlag >= 0)
    s.warmup = warmupFlag;
  if (gradAccumFlag > 0)
    s.gradAccum = gradAccumFlag;
  if (s.kind != "linear" && s.kind != "cosine" && s.kind != "constant")
    fail("--lr-schedule: unknown schedule '" + s.kind +
         "'; use linear, cosine or constant");
  return s;
}

/// This process's peak resident memory: VmHWM of /proc/self/status, which
/// (unlike getrusage's ru_maxrss) starts anew at exec and so does not count
/// the memory of the process that started this one. nullopt off Linux.
static std::optional<int64_t> peakResidentKiB() {
  // A stream: procfs reports a size of 0.
  auto status = llvm::MemoryBuffer::getFileAsStream("/proc/self/status");
  if (!status)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> lines;
  (*status)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front("VmHWM:"))
      continue;
    int64_t kib = 0;
    if (!line.trim().split(' ').first.getAsInteger(10, kib))
      return kib;
  }
  return std::nullopt;
}

/// The dropout masks' seed for micro-batch `micro` of optimizer step
/// `step`: a function of --seed and the position alone, so a resumed run
/// draws the masks an uninterrupted one would (splitmix64's finalizer).
static int64_t dropoutSeed(int64_t step, int64_t micro) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * uint64_t(step * 4096 + micro + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return int64_t(z ^ (z >> 31));
}

static NamedTensor scalar(const std::string &name, float value) {
  NamedTensor t;
  t.name = name;
  t.tensor.dtype = DType::F32;
  t.tensor.data.resize(sizeof(float));
  std::memcpy(t.tensor.data.data(), &value, sizeof(float));
  return t;
}

static float scalarOutput(const std::vector<NamedTensor> &outputs,
                          const std::string &name) {
  for (const NamedTensor &t : outputs)
    if (t.name == name && t.tensor.dtype == DType::F32 &&
        t.tensor.elementCount() == 1)
      return *t.tensor.as<float>();
  fail("the bundle's output '" + name + "' is missing or not an f32 scalar");
}

static std::string checkpointFile(const std::string &name) {
  llvm::SmallString<256> path(checkpointDir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// Writes the states, then the trainer file naming them (atomically), then
/// drops the previous checkpoint's states.
static void writeCheckpoint(Session &session, const Position &at,
                            const std::string &previous) {
  if (std::error_code ec = llvm::sys::fs::create_directories(checkpointDir))
    fail("cannot create '" + checkpointDir + "': " + ec.message());
  std::string states = "states-" + std::to_string(at.step) + ".npz";
  check(session.saveStates(checkpointFile(states)), "checkpoint");
  llvm::json::Object trainer{
      {"states", states},         {"step", at.step},
      {"epoch", at.epoch},        {"batch", at.batch},
      {"seed", int64_t(seed)},    {"shuffle", !noShuffle},
      {"group_by_length", bool(groupByLength)},
      {"bundle_meta_size", int64_t(session.meta().size())}};
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(std::move(trainer)) << "\n";
  // Checked write by write; on a full disk no temporary is left and the
  // previous trainer file still names the previous states.
  check(lmopt::runtime::writeFileAtomically(checkpointFile("trainer.json"),
                                            json),
        "checkpoint");
  if (!previous.empty() && previous != states)
    llvm::sys::fs::remove(checkpointFile(previous));
}

/// Reads the trainer file and loads its states.
static Position readCheckpoint(Session &session, std::string &statesName) {
  std::string target = checkpointFile("trainer.json");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(target);
  if (!buffer)
    fail("--resume: cannot read '" + target +
         "': " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  const llvm::json::Object *object = json ? json->getAsObject() : nullptr;
  if (!object)
    fail("--resume: '" + target + "' is not a trainer checkpoint" +
         (json ? std::string() : ": " + llvm::toString(json.takeError())));
  Position at;
  std::optional<llvm::StringRef> states = object->getString("states");
  std::optional<int64_t> step = object->getInteger("step"),
                         epoch = object->getInteger("epoch"),
                         batchAt = object->getInteger("batch"),
                         size = object->getInteger("bundle_meta_size");
  if (!states || !step || !epoch || !batchAt || !size || *step < 0 ||
      *epoch < 0 || *batchAt < 0 || states->contains('/'))
    fail("--resume: '" + target + "' lacks or has bad fields (states, step, "
         "epoch, batch, bundle_meta_size)");
  if (*size != int64_t(session.meta().size()))
    fail("--resume: the checkpoint in '" + checkpointDir +
         "' was written for another bundle");
  if (object->getInteger("seed").value_or(-1) != int64_t(seed) ||
      object->getBoolean("shuffle").value_or(true) == noShuffle ||
      object->getBoolean("group_by_length").value_or(false) != groupByLength)
    fail("--resume: give the same --seed, --no-shuffle and "
         "--group-by-length as the run that wrote the checkpoint");
  statesName = states->str();
  check(session.loadStates(checkpointFile(statesName)),
        "--resume: '" + checkpointFile(statesName) + "'");
  at.step = *step;
  at.epoch = *epoch;
  at.batch = *batchAt;
  return at;
}

/// Loss and accuracy of `eval` over `data` in batches of `batchSize`.
static void evaluate(Session &session, const Dataset &data, int64_t batchSize,
                     const Schedule &schedule, int64_t epoch) {
  long entry = session.findEntry("eval");
  if (entry < 0)
    fail("the bundle has no eval entry");
  int64_t batches = data.count / batchSize;
  double lossSum = 0;
  int64_t correct = 0, counted = 0;
  std::vector<int64_t> rows(static_cast<size_t>(batchSize));
  for (int64_t b = 0; b < batches; ++b) {
    std::iota(rows.begin(), rows.end(), b * batchSize);
    std::vector<NamedTensor> inputs = gather(data, rows), outputs;
    trimPadding(inputs, session.entries()[size_t(entry)]);
    check(session.run("eval", inputs, outputs), "eval");
    lossSum += scalarOutput(outputs, "loss");
    if (schedule.loss != "cross-entropy" || outputs.size() < 2)
      continue;
    const Tensor &logits = outputs[1].tensor;
    const NamedTensor *labels = nullptr;
    for (const NamedTensor &t : inputs)
      if (t.name == schedule.labels)
        labels = &t;
    if (!labels || logits.dtype != DType::F32 || logits.shape.empty())
      continue;
    int64_t classes = logits.shape.back();
    int64_t n = int64_t(logits.elementCount()) / classes;
    for (int64_t i = 0; i < n; ++i) {
      const float *row = logits.as<float>() + i * classes;
      int64_t label = labels->tensor.as<int64_t>()[i];
      if (label < 0)
        continue;
      correct += std::max_element(row, row + classes) - row == label;
      ++counted;
    }
  }
  llvm::errs() << llvm::format("eval epoch %lld: loss %.4f",
                               (long long)epoch + 1,
                               lossSum / double(std::max<int64_t>(1, batches)));
  if (counted)
    llvm::errs() << llvm::format(", accuracy %.2f%% (%lld examples)",
                                 100.0 * double(correct) / double(counted),
                                 (long long)counted);
  llvm::errs() << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "lmopt-train: train with a bundle compiled by lmopt-compile --train\n");
  if (dataPath.empty())
    fail("no training data; pass --data train.npz");
  if (epochs < 1 && steps < 1)
    fail("--epochs must be 1 or more (or give --steps)");
  if (resume && checkpointDir.empty())
    fail("--resume needs --checkpoint-dir");

  SessionOptions options;
  options.threads = threads;
  std::unique_ptr<Session> session;
  check(Session::create(bundlePath, options, session), "'" + bundlePath + "'");
  Schedule schedule = readSchedule(*session);
  const EntryInfo &train =
      session->entries()[size_t(session->findEntry("train_step"))];
  int64_t bundleBatch = 0;
  for (const ValueInfo &input : train.inputs)
    if (input.name != "accumulate" && input.name != "dropout_seed" &&
        !input.dims.empty()) {
      bundleBatch = input.dims[0] >= 0 ? input.dims[0] : input.maxDims[0];
      break;
    }
  int64_t batchSize = batch > 0 ? int64_t(batch) : bundleBatch;
  for (const ValueInfo &input : train.inputs)
    if (input.name != "accumulate" && !input.dims.empty() &&
        ((input.dims[0] >= 0 && input.dims[0] != batchSize) ||
         batchSize > input.maxDims[0]))
      fail("--batch " + std::to_string(batchSize) + ": the bundle's '" +
           input.name + "' takes " + formatDims(input.dims) +
           "; recompile with that batch or bound it with --max-shape");
  bool hasDropout = llvm::any_of(train.inputs, [](const ValueInfo &input) {
    return input.name == "dropout_seed";
  });
  DataSpec spec{schedule.labels, schedule.classes, schedule.ignoreIndex,
                tokenizerPath};
  auto readStart = std::chrono::steady_clock::now();
  Dataset data = readDataset(dataPath, train, batchSize,
                             {"accumulate", "dropout_seed"}, spec);
  double readSeconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - readStart)
                           .count();
  if (groupByLength && data.lengths.empty())
    fail("--group-by-length: '" + dataPath +
         "' has no [examples, length] attention_mask to measure lengths by");
  std::optional<Dataset> evalData;
  if (!evalPath.empty()) {
    long evalEntry = session->findEntry("eval");
    if (evalEntry < 0)
      fail("--eval: the bundle has no eval entry");
    evalData = readDataset(evalPath, session->entries()[size_t(evalEntry)],
                           batchSize, {}, spec);
  }

  int64_t batchesPerEpoch = data.count / batchSize;
  int64_t stepsPerEpoch = batchesPerEpoch / schedule.gradAccum;
  if (stepsPerEpoch < 1)
    fail("one optimizer step takes " + std::to_string(schedule.gradAccum) +
         " batches of " + std::to_string(batchSize) + "; '" + dataPath +
         "' has " + std::to_string(data.count) + " examples");
  int64_t totalSteps = steps > 0 ? int64_t(steps) : stepsPerEpoch * epochs;
  int64_t paramCount = 0;
  for (const StateInfo &state : session->states())
    if (!llvm::StringRef(state.name).contains('/')) {
      int64_t n = 1;
      for (int64_t d : state.maxDims)
        n *= d;
      paramCount += n;
    }
  llvm::errs() << "training '" << bundlePath << "': " << paramCount
               << " parameters; " << data.count << " examples, batch "
               << batchSize << " x " << schedule.gradAccum
               << " micro-batches, " << totalSteps << " optimizer steps; lr "
               << llvm::format("%g", schedule.lr) << " (" << schedule.kind
               << ", " << schedule.warmup << " warm-up steps)\n";
  if (hasDropout)
    llvm::errs() << "dropout: on, masks seeded by --seed " << uint64_t(seed)
                 << " and the step\n";
  if (data.count % batchSize)
    llvm::errs() << "note: the last " << data.count % batchSize
                 << " examples of each epoch make no full batch and are "
                    "skipped\n";

  Position at;
  std::string lastCheckpoint;
  if (resume) {
    at = readCheckpoint(*session, lastCheckpoint);
    llvm::errs() << "resumed at optimizer step " << at.step << " (epoch "
                 << at.epoch + 1 << ", batch " << at.batch << ")\n";
  }
  std::unique_ptr<llvm::raw_fd_ostream> lossLog;
  if (!logLosses.empty()) {
    std::error_code ec;
    lossLog = std::make_unique<llvm::raw_fd_ostream>(
        logLosses, ec,
        resume ? llvm::sys::fs::OF_Append : llvm::sys::fs::OF_None);
    if (ec)
      fail("cannot write '" + logLosses + "': " + ec.message());
  }

  auto start = std::chrono::steady_clock::now();
  // When the first step (which also sets up the steps' primitives) ended.
  std::optional<std::chrono::steady_clock::time_point> firstStepDone;
  int64_t startStep = at.step;
  // Lengths the micro-batches ran at, when trimPadding applies.
  int64_t trimmedTokens = 0, trimmedBatches = 0;
  // Time spent cutting micro-batches out of the data.
  double batchingSeconds = 0;
  const Ordering ordering{!noShuffle, uint64_t(seed), groupByLength};
  std::vector<int64_t> order = epochOrder(data, at.epoch, batchSize, ordering);
  auto endEpoch = [&](bool complete) {
    if (complete && evalData)
      evaluate(*session, *evalData, batchSize, schedule, at.epoch);
    ++at.epoch;
    at.batch = 0;
    order = epochOrder(data, at.epoch, batchSize, ordering);
  };
  while (at.step < totalSteps) {
    if (at.batch + schedule.gradAccum > batchesPerEpoch) {
      endEpoch(/*complete=*/true);
      if (!checkpointDir.empty()) {
        writeCheckpoint(*session, at, lastCheckpoint);
        lastCheckpoint = "states-" + std::to_string(at.step) + ".npz";
      }
      continue;
    }
    double lossSum = 0;
    for (int64_t micro = 0; micro < schedule.gradAccum; ++micro) {
      llvm::ArrayRef<int64_t> rows(order.data() + at.batch * batchSize,
                                   size_t(batchSize));
      auto batchStart = std::chrono::steady_clock::now();
      std::vector<NamedTensor> inputs = gather(data, rows), outputs;
      if (int64_t length = trimPadding(inputs, train); length > 0) {
        trimmedTokens += length;
        ++trimmedBatches;
      }
      batchingSeconds += std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - batchStart)
                             .count();
      inputs.push_back(scalar("accumulate", micro ? 1.0f : 0.0f));
      if (hasDropout) {
        NamedTensor t;
        t.name = "dropout_seed";
        t.tensor.dtype = DType::I64;
        int64_t value = dropoutSeed(at.step, micro);
        t.tensor.data.resize(sizeof(value));
        std::memcpy(t.tensor.data.data(), &value, sizeof(value));
        inputs.push_back(std::move(t));
      }
      check(session->run("train_step", inputs, outputs),
            "train_step (optimizer step " + std::to_string(at.step + 1) + ")");
      float loss = scalarOutput(outputs, "loss");
      if (!std::isfinite(loss))
        fail("the loss is " + std::to_string(loss) + " at optimizer step " +
             std::to_string(at.step + 1) + " (epoch " +
             std::to_string(at.epoch + 1) + ", micro-batch " +
             std::to_string(micro + 1) + "); stopping" +
             (lastCheckpoint.empty()
                  ? std::string()
                  : "; the last good checkpoint is '" +
                        checkpointFile(lastCheckpoint) + "'"));
      lossSum += loss;
      ++at.batch;
    }
    double lr = schedule.lr *
                schedule.factor(at.step, scheduleSteps > 0 ? int64_t(scheduleSteps)
                                                           : totalSteps);
    double t = double(at.step + 1);
    double bc1 = 1.0 - std::pow(schedule.beta1, t);
    double bc2 = 1.0 - std::pow(schedule.beta2, t);
    std::vector<NamedTensor> inputs{
        scalar("lr", float(lr)), scalar("step_size", float(lr / bc1)),
        scalar("bias_correction2_sqrt", float(std::sqrt(bc2))),
        scalar("grad_scale", float(1.0 / double(schedule.gradAccum)))};
    std::vector<NamedTensor> outputs;
    check(session->run("optimizer_step", inputs, outputs),
          "optimizer_step " + std::to_string(at.step + 1));
    float gradNorm = scalarOutput(outputs, "grad_norm");
    ++at.step;
    if (!firstStepDone)
      firstStepDone = std::chrono::steady_clock::now();
    double loss = lossSum / double(schedule.gradAccum);
    if (lossLog) {
      // Checked line by line: a full disk is an error now, not an abort
      // when the stream is closed.
      *lossLog << llvm::format("%.8g", loss) << "\n";
      lossLog->flush();
      if (std::error_code ec = lossLog->error()) {
        lossLog->clear_error();
        fail("--log-losses: cannot write '" + logLosses + "': " +
             ec.message());
      }
    }
    if (at.step == totalSteps || (logEvery > 0 && at.step % logEvery == 0)) {
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      double rate = double((at.step - startStep) * schedule.gradAccum *
                           batchSize) /
                    std::max(seconds, 1e-9);
      double eta = seconds / double(at.step - startStep) *
                   double(totalSteps - at.step);
      llvm::errs() << llvm::format(
          "step %lld/%lld  epoch %lld  loss %.4f  lr %.3g  grad-norm %.3g  "
          "%.1f samples/s  ETA %.0f s\n",
          (long long)at.step, (long long)totalSteps, (long long)at.epoch + 1,
          loss, lr, gradNorm, rate, eta);
    }
    if (!checkpointDir.empty() && checkpointEvery > 0 &&
        at.step % checkpointEvery == 0 && at.step < totalSteps) {
      writeCheckpoint(*session, at, lastCheckpoint);
      lastCheckpoint = "states-" + std::to_string(at.step) + ".npz";
    }
  }
  auto loopEnd = std::chrono::steady_clock::now();
  bool epochDone = at.batch + schedule.gradAccum > batchesPerEpoch;
  if (epochDone)
    endEpoch(/*complete=*/true);
  else if (evalData && steps > 0)
    evaluate(*session, *evalData, batchSize, schedule, at.epoch);
  if (!checkpointDir.empty())
    writeCheckpoint(*session, at, lastCheckpoint);
  if (!saveStatesPath.empty())
    check(session->saveStates(saveStatesPath), "--save-states");
  // The inference bundle compiles the exported model: --export-onnx's, or
  // one written beside the bundle and removed after.
  std::string onnxOut = exportOnnx.empty() && !exportBundle.empty()
                            ? exportBundle + ".tmp.onnx"
                            : std::string(exportOnnx);
  if (!onnxOut.empty()) {
    std::string source = onnxModel.empty() ? schedule.sourceModel
                                           : std::string(onnxModel);
    if (source.empty())
      fail("--export-onnx: the bundle records no source model; give it with "
           "--onnx-model");
    uint64_t bytes = 0;
    if (onnxModel.empty() &&
        (llvm::sys::fs::file_size(source, bytes) ||
         int64_t(bytes) != schedule.sourceModelBytes))
      fail("--export-onnx: '" + source +
           "', the model the bundle was compiled from, is missing or has "
           "changed; give it with --onnx-model");
    std::vector<NamedTensor> parameters;
    for (const StateInfo &state : session->states()) {
      if (llvm::StringRef(state.name).contains('/'))
        continue;
      NamedTensor t;
      auto initializer = schedule.initializers.find(state.name);
      t.name = initializer == schedule.initializers.end()
                   ? state.name
                   : initializer->second;
      check(session->readState(state.name, t.tensor), "--export-onnx");
      parameters.push_back(std::move(t));
    }
    if (llvm::Error error =
            exportTrainedOnnx(source, onnxOut, parameters))
      fail("--export-onnx: " + llvm::toString(std::move(error)));
    if (!exportOnnx.empty())
      llvm::errs() << "wrote the trained model to '" << exportOnnx << "' ("
                   << parameters.size() << " parameters)\n";
  }
  if (!exportBundle.empty())
    writeInferenceBundle(*session, schedule, onnxOut);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  llvm::errs() << llvm::format("done: %lld optimizer steps in %.1f s",
                               (long long)(at.step - startStep), seconds);
  if (firstStepDone && at.step - startStep > 1) {
    double rest =
        std::chrono::duration<double>(loopEnd - *firstStepDone).count();
    llvm::errs() << llvm::format(" (%.4f s per step after the first)",
                                 rest / double(at.step - startStep - 1));
  }
  llvm::errs() << "\n";
  llvm::errs() << llvm::format(
      "data: %.3f s reading '%s', %.3f s batching (%.2f%% of the run)\n",
      readSeconds, dataPath.c_str(), batchingSeconds,
      seconds > 0 ? 100.0 * (readSeconds + batchingSeconds) /
                        (seconds + readSeconds)
                  : 0.0);
  if (trimmedBatches) {
    int64_t bound = 0;
    for (const ValueInfo &input : train.inputs)
      if (input.name == "attention_mask")
        bound = input.maxDims[1];
    llvm::errs() << llvm::format(
        "sequence: micro-batches ran at %.1f tokens on average (their "
        "longest example's length; bound %lld)\n",
        double(trimmedTokens) / double(trimmedBatches), (long long)bound);
  }
  if (std::optional<int64_t> peak = peakResidentKiB())
    llvm::errs() << "peak memory: " << *peak / 1024 << " MiB\n";
  return 0;
}
