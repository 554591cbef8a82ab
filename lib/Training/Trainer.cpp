//===- Trainer.cpp - Training with a compiled training bundle -------------===//

#include "lmopt/Training/Trainer.h"

#include "lmopt/Format/AtomicWrite.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Training/TrainData.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
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
#include <set>

using namespace lmopt::runtime;
using namespace lmopt::training;

#define TRY(expr)                                                              \
  if (llvm::Error error = (expr))                                              \
    return error;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The hyper-parameters a run uses: the bundle's, overridden by options.
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
  /// Parameters trained with the model but not part of it (a distillation
  /// projection): --export-onnx leaves them out.
  std::set<std::string> notExported;
  /// lmopt-compile's --prune ("" without).
  std::string prune;
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

/// Reports lines through the callbacks' log.
struct Report {
  const TrainerCallbacks &callbacks;
  void line(const std::string &text) const {
    if (callbacks.log)
      callbacks.log(text);
  }
};

template <typename... Args>
std::string formatted(const char *fmt, Args... args) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format(fmt, args...);
  return text;
}

} // namespace

static llvm::Expected<Schedule> readSchedule(const Session &session,
                                             const TrainerOptions &options) {
  Schedule s;
  llvm::Expected<llvm::json::Value> meta = llvm::json::parse(session.meta());
  if (!meta)
    return trainError(options.bundleName + ": the meta section is not JSON: " +
                      llvm::toString(meta.takeError()));
  const llvm::json::Object *training =
      meta->getAsObject() ? meta->getAsObject()->getObject("training")
                          : nullptr;
  if (!training || session.findEntry("train_step") < 0 ||
      session.findEntry("optimizer_step") < 0)
    return trainError(options.bundleName +
                      " is not a training bundle (entries " +
                      session.entryNames() +
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
        if (auto name = p->getString("name")) {
          if (auto initializer = p->getString("initializer"))
            s.initializers[name->str()] = initializer->str();
          if (p->getBoolean("export") == false)
            s.notExported.insert(name->str());
        }
  if (auto prune = training->getString("prune"))
    s.prune = prune->str();
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
  if (options.lr > 0)
    s.lr = options.lr;
  if (!options.schedule.empty())
    s.kind = options.schedule;
  if (options.warmup >= 0)
    s.warmup = options.warmup;
  if (options.gradAccum > 0)
    s.gradAccum = options.gradAccum;
  if (s.kind != "linear" && s.kind != "cosine" && s.kind != "constant")
    return trainError("--lr-schedule: unknown schedule '" + s.kind +
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
/// `step`: a function of the seed and the position alone, so a resumed run
/// draws the masks an uninterrupted one would (splitmix64's finalizer).
static int64_t dropoutSeed(uint64_t seed, int64_t step, int64_t micro) {
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

static llvm::Expected<float>
scalarOutput(const std::vector<NamedTensor> &outputs, const std::string &name) {
  for (const NamedTensor &t : outputs)
    if (t.name == name && t.tensor.dtype == DType::F32 &&
        t.tensor.elementCount() == 1)
      return *t.tensor.as<float>();
  return trainError("the bundle's output '" + name +
                    "' is missing or not an f32 scalar");
}

static std::string checkpointFile(const TrainerOptions &options,
                                  const std::string &name) {
  llvm::SmallString<256> path(options.checkpointDir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

static std::string statesName(int64_t step) {
  return "states-" + std::to_string(step) + ".npz";
}

/// Writes the states, then the trainer file naming them (atomically), then
/// drops the previous checkpoint's states.
static llvm::Error writeCheckpoint(Session &session,
                                   const TrainerOptions &options,
                                   const Position &at,
                                   const std::string &previous) {
  if (std::error_code ec =
          llvm::sys::fs::create_directories(options.checkpointDir))
    return trainError("cannot create '" + options.checkpointDir +
                      "': " + ec.message());
  std::string states = statesName(at.step);
  TRY(toError(session.saveStates(checkpointFile(options, states)),
              "checkpoint"));
  llvm::json::Object trainer{
      {"states", states},
      {"step", at.step},
      {"epoch", at.epoch},
      {"batch", at.batch},
      {"seed", int64_t(options.seed)},
      {"shuffle", options.shuffle},
      {"group_by_length", options.groupByLength},
      {"bundle_meta_size", int64_t(session.meta().size())}};
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(std::move(trainer)) << "\n";
  // Checked write by write; on a full disk no temporary is left and the
  // previous trainer file still names the previous states.
  TRY(toError(lmopt::runtime::writeFileAtomically(
                  checkpointFile(options, "trainer.json"), json),
              "checkpoint"));
  if (!previous.empty() && previous != states)
    llvm::sys::fs::remove(checkpointFile(options, previous));
  return llvm::Error::success();
}

/// Reads the trainer file and loads its states.
static llvm::Expected<Position> readCheckpoint(Session &session,
                                               const TrainerOptions &options,
                                               std::string &states) {
  std::string target = checkpointFile(options, "trainer.json");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(target);
  if (!buffer)
    return trainError("--resume: cannot read '" + target +
                      "': " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  const llvm::json::Object *object = json ? json->getAsObject() : nullptr;
  if (!object)
    return trainError(
        "--resume: '" + target + "' is not a trainer checkpoint" +
        (json ? std::string() : ": " + llvm::toString(json.takeError())));
  std::optional<llvm::StringRef> name = object->getString("states");
  std::optional<int64_t> step = object->getInteger("step"),
                         epoch = object->getInteger("epoch"),
                         batchAt = object->getInteger("batch"),
                         size = object->getInteger("bundle_meta_size");
  if (!name || !step || !epoch || !batchAt || !size || *step < 0 ||
      *epoch < 0 || *batchAt < 0 || name->contains('/'))
    return trainError("--resume: '" + target +
                      "' lacks or has bad fields (states, step, epoch, "
                      "batch, bundle_meta_size)");
  if (*size != int64_t(session.meta().size()))
    return trainError("--resume: the checkpoint in '" +
                      options.checkpointDir +
                      "' was written for another bundle");
  if (object->getInteger("seed").value_or(-1) != int64_t(options.seed) ||
      object->getBoolean("shuffle").value_or(true) != options.shuffle ||
      object->getBoolean("group_by_length").value_or(false) !=
          options.groupByLength)
    return trainError("--resume: give the same --seed, --no-shuffle and "
                      "--group-by-length as the run that wrote the "
                      "checkpoint");
  states = name->str();
  TRY(toError(session.loadStates(checkpointFile(options, states)),
              "--resume: '" + checkpointFile(options, states) + "'"));
  Position at;
  at.step = *step;
  at.epoch = *epoch;
  at.batch = *batchAt;
  return at;
}

/// Loss and accuracy of `eval` over `data` in batches of `batchSize`.
static llvm::Expected<EvalRecord> evaluateData(Session &session,
                                               const Dataset &data,
                                               int64_t batchSize,
                                               const Schedule &schedule,
                                               int64_t epoch) {
  long entry = session.findEntry("eval");
  if (entry < 0)
    return trainError("the bundle has no eval entry");
  int64_t batches = data.count / batchSize;
  double lossSum = 0;
  int64_t correct = 0, counted = 0;
  std::vector<int64_t> rows(static_cast<size_t>(batchSize));
  for (int64_t b = 0; b < batches; ++b) {
    std::iota(rows.begin(), rows.end(), b * batchSize);
    std::vector<NamedTensor> inputs = gather(data, rows), outputs;
    trimPadding(inputs, session.entries()[size_t(entry)]);
    TRY(toError(session.run("eval", inputs, outputs), "eval"));
    llvm::Expected<float> loss = scalarOutput(outputs, "loss");
    if (!loss)
      return loss.takeError();
    lossSum += *loss;
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
  EvalRecord record;
  record.epoch = epoch + 1;
  record.loss = lossSum / double(std::max<int64_t>(1, batches));
  record.examples = counted;
  if (counted)
    record.accuracy = double(correct) / double(counted);
  return record;
}

static std::string evalLine(const EvalRecord &record) {
  std::string line = formatted("eval epoch %lld: loss %.4f",
                               (long long)record.epoch, record.loss);
  if (record.accuracy)
    line += formatted(", accuracy %.2f%% (%lld examples)",
                      100.0 * *record.accuracy, (long long)record.examples);
  return line;
}

/// The batch of the train entry's data inputs (its bound when symbolic).
static int64_t bundleBatch(const EntryInfo &train) {
  for (const ValueInfo &input : train.inputs)
    if (input.name != "accumulate" && input.name != "dropout_seed" &&
        !input.dims.empty())
      return input.dims[0] >= 0 ? input.dims[0] : input.maxDims[0];
  return 0;
}

llvm::Expected<EvalRecord> lmopt::training::evaluate(Session &session,
                                                     const std::string &path,
                                                     int64_t batch) {
  TrainerOptions options;
  llvm::Expected<Schedule> schedule = readSchedule(session, options);
  if (!schedule)
    return schedule.takeError();
  long entry = session.findEntry("eval");
  if (entry < 0)
    return trainError("the bundle has no eval entry");
  const EntryInfo &eval = session.entries()[size_t(entry)];
  int64_t batchSize = batch > 0 ? batch : bundleBatch(eval);
  DataSpec spec{schedule->labels, schedule->classes, schedule->ignoreIndex,
                ""};
  llvm::Expected<Dataset> data = readDataset(path, eval, batchSize, {}, spec);
  if (!data)
    return data.takeError();
  return evaluateData(session, *data, batchSize, *schedule, 0);
}

/// The trained parameters under their ONNX initializers' names.
static llvm::Expected<std::vector<NamedTensor>>
trainedParameters(Session &session, const Schedule &schedule) {
  std::vector<NamedTensor> parameters;
  for (const StateInfo &state : session.states()) {
    if (llvm::StringRef(state.name).contains('/') ||
        schedule.notExported.count(state.name))
      continue;
    NamedTensor t;
    auto initializer = schedule.initializers.find(state.name);
    t.name = initializer == schedule.initializers.end() ? state.name
                                                        : initializer->second;
    TRY(toError(session.readState(state.name, t.tensor), "--export-onnx"));
    parameters.push_back(std::move(t));
  }
  return parameters;
}

/// --export-onnx and --export-bundle, after the run.
static llvm::Error exportModel(Session &session, const TrainerOptions &options,
                               const Schedule &schedule,
                               const TrainerCallbacks &callbacks,
                               const Report &report) {
  // The inference bundle compiles the exported model: --export-onnx's, or
  // one written beside the bundle and removed after.
  std::string onnxOut = options.exportOnnx.empty() &&
                                !options.exportBundle.empty()
                            ? options.exportBundle + ".tmp.onnx"
                            : options.exportOnnx;
  if (onnxOut.empty())
    return llvm::Error::success();
  std::string source =
      options.onnxModel.empty() ? schedule.sourceModel : options.onnxModel;
  if (source.empty())
    return trainError("--export-onnx: the bundle records no source model; "
                      "give it with --onnx-model");
  uint64_t bytes = 0;
  if (options.onnxModel.empty() &&
      (llvm::sys::fs::file_size(source, bytes) ||
       int64_t(bytes) != schedule.sourceModelBytes))
    return trainError("--export-onnx: '" + source +
                      "', the model the bundle was compiled from, is missing "
                      "or has changed; give it with --onnx-model");
  llvm::Expected<std::vector<NamedTensor>> parameters =
      trainedParameters(session, schedule);
  if (!parameters)
    return parameters.takeError();
  if (llvm::Error error = exportTrainedOnnx(source, onnxOut, *parameters,
                                            !schedule.prune.empty()))
    return trainError("--export-onnx: " + llvm::toString(std::move(error)));
  if (!options.exportOnnx.empty())
    report.line("wrote the trained model to '" + options.exportOnnx + "' (" +
                std::to_string(parameters->size()) + " parameters)");
  if (options.exportBundle.empty())
    return llvm::Error::success();
  std::vector<BundleInput> inputs;
  for (const EntryInfo &entry : session.entries())
    if (entry.name == "eval")
      for (const ValueInfo &input : entry.inputs)
        if (input.name != schedule.labels)
          inputs.push_back({input.name, input.dims, input.maxDims});
  llvm::Error error =
      callbacks.compileBundle
          ? callbacks.compileBundle(onnxOut, options.exportBundle, inputs)
          : trainError("no compiler to compile the inference bundle with");
  if (options.exportOnnx.empty())
    llvm::sys::fs::remove(onnxOut);
  if (error)
    return trainError("--export-bundle: " + llvm::toString(std::move(error)));
  report.line("wrote the trained model as an inference bundle to '" +
              options.exportBundle + "'");
  return llvm::Error::success();
}

llvm::Error lmopt::training::checkTrainerOptions(const TrainerOptions &options) {
  if (options.data.empty())
    return trainError("no training data; pass --data train.npz");
  if (options.epochs < 1 && options.steps < 1)
    return trainError("--epochs must be 1 or more (or give --steps)");
  if (options.resume && options.checkpointDir.empty())
    return trainError("--resume needs --checkpoint-dir");
  return llvm::Error::success();
}

llvm::Error lmopt::training::train(Session &session,
                                   const TrainerOptions &options,
                                   const TrainerCallbacks &callbacks) {
  const Report report{callbacks};
  TRY(checkTrainerOptions(options));
  llvm::Expected<Schedule> scheduleOr = readSchedule(session, options);
  if (!scheduleOr)
    return scheduleOr.takeError();
  const Schedule &schedule = *scheduleOr;
  // Refused before training: a student without some of the source model's
  // layers is no longer its graph (FFN pruning only shrinks matrices).
  if ((!options.exportOnnx.empty() || !options.exportBundle.empty()) &&
      llvm::StringRef(schedule.prune).contains("keep-layers"))
    return trainError(
        "--export-onnx: the bundle was compiled with --prune=" +
        schedule.prune +
        ", which drops layers of the source model; write the reduced model "
        "with lmopt-reduce-layers and train that one to export it");
  const EntryInfo &train =
      session.entries()[size_t(session.findEntry("train_step"))];
  int64_t batchSize = options.batch > 0 ? options.batch : bundleBatch(train);
  for (const ValueInfo &input : train.inputs)
    if (input.name != "accumulate" && !input.dims.empty() &&
        ((input.dims[0] >= 0 && input.dims[0] != batchSize) ||
         batchSize > input.maxDims[0]))
      return trainError("--batch " + std::to_string(batchSize) +
                        ": the bundle's '" + input.name + "' takes " +
                        formatDims(input.dims) +
                        "; recompile with that batch or bound it with "
                        "--max-shape");
  bool hasDropout = llvm::any_of(train.inputs, [](const ValueInfo &input) {
    return input.name == "dropout_seed";
  });
  DataSpec spec{schedule.labels, schedule.classes, schedule.ignoreIndex,
                options.tokenizer};
  auto readStart = Clock::now();
  llvm::Expected<Dataset> dataOr =
      readDataset(options.data, train, batchSize,
                  {"accumulate", "dropout_seed"}, spec);
  if (!dataOr)
    return dataOr.takeError();
  const Dataset &data = *dataOr;
  double readSeconds = secondsSince(readStart);
  if (options.groupByLength && data.lengths.empty())
    return trainError("--group-by-length: '" + options.data +
                      "' has no [examples, length] attention_mask to measure "
                      "lengths by");
  std::optional<Dataset> evalData;
  if (!options.eval.empty()) {
    long evalEntry = session.findEntry("eval");
    if (evalEntry < 0)
      return trainError("--eval: the bundle has no eval entry");
    llvm::Expected<Dataset> read =
        readDataset(options.eval, session.entries()[size_t(evalEntry)],
                    batchSize, {}, spec);
    if (!read)
      return read.takeError();
    evalData = std::move(*read);
  }

  int64_t batchesPerEpoch = data.count / batchSize;
  int64_t stepsPerEpoch = batchesPerEpoch / schedule.gradAccum;
  if (stepsPerEpoch < 1)
    return trainError("one optimizer step takes " +
                      std::to_string(schedule.gradAccum) + " batches of " +
                      std::to_string(batchSize) + "; '" + options.data +
                      "' has " + std::to_string(data.count) + " examples");
  int64_t totalSteps =
      options.steps > 0 ? options.steps : stepsPerEpoch * options.epochs;
  int64_t paramCount = 0;
  for (const StateInfo &state : session.states())
    if (!llvm::StringRef(state.name).contains('/')) {
      int64_t n = 1;
      for (int64_t d : state.maxDims)
        n *= d;
      paramCount += n;
    }
  report.line(formatted(
      "training %s: %lld parameters; %lld examples, batch %lld x %lld "
      "micro-batches, %lld optimizer steps; lr %g (%s, %lld warm-up steps)",
      options.bundleName.c_str(), (long long)paramCount,
      (long long)data.count, (long long)batchSize,
      (long long)schedule.gradAccum, (long long)totalSteps, schedule.lr,
      schedule.kind.c_str(), (long long)schedule.warmup));
  if (hasDropout)
    report.line("dropout: on, masks seeded by --seed " +
                std::to_string(options.seed) + " and the step");
  if (data.count % batchSize)
    report.line("note: the last " + std::to_string(data.count % batchSize) +
                " examples of each epoch make no full batch and are skipped");

  Position at;
  std::string lastCheckpoint;
  if (options.resume) {
    llvm::Expected<Position> resumed =
        readCheckpoint(session, options, lastCheckpoint);
    if (!resumed)
      return resumed.takeError();
    at = *resumed;
    report.line("resumed at optimizer step " + std::to_string(at.step) +
                " (epoch " + std::to_string(at.epoch + 1) + ", batch " +
                std::to_string(at.batch) + ")");
  }
  std::unique_ptr<llvm::raw_fd_ostream> lossLog;
  if (!options.logLosses.empty()) {
    std::error_code ec;
    lossLog = std::make_unique<llvm::raw_fd_ostream>(
        options.logLosses, ec,
        options.resume ? llvm::sys::fs::OF_Append : llvm::sys::fs::OF_None);
    if (ec)
      return trainError("cannot write '" + options.logLosses +
                        "': " + ec.message());
  }

  auto start = Clock::now();
  // When the first step (which also sets up the steps' primitives) ended.
  std::optional<Clock::time_point> firstStepDone;
  int64_t startStep = at.step;
  // Lengths the micro-batches ran at, when trimPadding applies.
  int64_t trimmedTokens = 0, trimmedBatches = 0;
  // Time spent cutting micro-batches out of the data.
  double batchingSeconds = 0;
  const Ordering ordering{options.shuffle, options.seed,
                          options.groupByLength};
  std::vector<int64_t> order = epochOrder(data, at.epoch, batchSize, ordering);
  auto runEval = [&]() -> llvm::Error {
    llvm::Expected<EvalRecord> record =
        evaluateData(session, *evalData, batchSize, schedule, at.epoch);
    if (!record)
      return record.takeError();
    report.line(evalLine(*record));
    if (callbacks.eval)
      callbacks.eval(*record);
    return llvm::Error::success();
  };
  auto endEpoch = [&]() -> llvm::Error {
    if (evalData)
      TRY(runEval());
    ++at.epoch;
    at.batch = 0;
    order = epochOrder(data, at.epoch, batchSize, ordering);
    return llvm::Error::success();
  };
  auto checkpoint = [&]() -> llvm::Error {
    TRY(writeCheckpoint(session, options, at, lastCheckpoint));
    lastCheckpoint = statesName(at.step);
    return llvm::Error::success();
  };
  while (at.step < totalSteps) {
    if (at.batch + schedule.gradAccum > batchesPerEpoch) {
      TRY(endEpoch());
      if (!options.checkpointDir.empty())
        TRY(checkpoint());
      continue;
    }
    double lossSum = 0;
    for (int64_t micro = 0; micro < schedule.gradAccum; ++micro) {
      llvm::ArrayRef<int64_t> rows(order.data() + at.batch * batchSize,
                                   size_t(batchSize));
      auto batchStart = Clock::now();
      std::vector<NamedTensor> inputs = gather(data, rows), outputs;
      if (int64_t length = trimPadding(inputs, train); length > 0) {
        trimmedTokens += length;
        ++trimmedBatches;
      }
      batchingSeconds += secondsSince(batchStart);
      inputs.push_back(scalar("accumulate", micro ? 1.0f : 0.0f));
      if (hasDropout) {
        NamedTensor t;
        t.name = "dropout_seed";
        t.tensor.dtype = DType::I64;
        int64_t value = dropoutSeed(options.seed, at.step, micro);
        t.tensor.data.resize(sizeof(value));
        std::memcpy(t.tensor.data.data(), &value, sizeof(value));
        inputs.push_back(std::move(t));
      }
      TRY(toError(session.run("train_step", inputs, outputs),
                  "train_step (optimizer step " + std::to_string(at.step + 1) +
                      ")"));
      llvm::Expected<float> loss = scalarOutput(outputs, "loss");
      if (!loss)
        return loss.takeError();
      if (!std::isfinite(*loss))
        return trainError(
            "the loss is " + std::to_string(*loss) + " at optimizer step " +
            std::to_string(at.step + 1) + " (epoch " +
            std::to_string(at.epoch + 1) + ", micro-batch " +
            std::to_string(micro + 1) + "); stopping" +
            (lastCheckpoint.empty()
                 ? std::string()
                 : "; the last good checkpoint is '" +
                       checkpointFile(options, lastCheckpoint) + "'"));
      lossSum += *loss;
      ++at.batch;
    }
    double lr = schedule.lr *
                schedule.factor(at.step, options.scheduleSteps > 0
                                             ? options.scheduleSteps
                                             : totalSteps);
    double t = double(at.step + 1);
    double bc1 = 1.0 - std::pow(schedule.beta1, t);
    double bc2 = 1.0 - std::pow(schedule.beta2, t);
    std::vector<NamedTensor> inputs{
        scalar("lr", float(lr)), scalar("step_size", float(lr / bc1)),
        scalar("bias_correction2_sqrt", float(std::sqrt(bc2))),
        scalar("grad_scale", float(1.0 / double(schedule.gradAccum)))};
    std::vector<NamedTensor> outputs;
    TRY(toError(session.run("optimizer_step", inputs, outputs),
                "optimizer_step " + std::to_string(at.step + 1)));
    llvm::Expected<float> gradNorm = scalarOutput(outputs, "grad_norm");
    if (!gradNorm)
      return gradNorm.takeError();
    ++at.step;
    if (!firstStepDone)
      firstStepDone = Clock::now();
    StepRecord record;
    record.step = at.step;
    record.totalSteps = totalSteps;
    record.epoch = at.epoch + 1;
    record.loss = lossSum / double(schedule.gradAccum);
    record.lr = lr;
    record.gradNorm = *gradNorm;
    double seconds = secondsSince(start);
    record.samplesPerSecond =
        double((at.step - startStep) * schedule.gradAccum * batchSize) /
        std::max(seconds, 1e-9);
    record.etaSeconds =
        seconds / double(at.step - startStep) * double(totalSteps - at.step);
    if (lossLog) {
      // Checked line by line: a full disk is an error now, not an abort
      // when the stream is closed.
      *lossLog << llvm::format("%.8g", record.loss) << "\n";
      lossLog->flush();
      if (std::error_code ec = lossLog->error()) {
        lossLog->clear_error();
        return trainError("--log-losses: cannot write '" + options.logLosses +
                          "': " + ec.message());
      }
    }
    if (at.step == totalSteps ||
        (options.logEvery > 0 && at.step % options.logEvery == 0))
      report.line(formatted(
          "step %lld/%lld  epoch %lld  loss %.4f  lr %.3g  grad-norm %.3g  "
          "%.1f samples/s  ETA %.0f s",
          (long long)at.step, (long long)totalSteps, (long long)record.epoch,
          record.loss, lr, record.gradNorm, record.samplesPerSecond,
          record.etaSeconds));
    if (callbacks.step)
      TRY(callbacks.step(record));
    if (!options.checkpointDir.empty() && options.checkpointEvery > 0 &&
        at.step % options.checkpointEvery == 0 && at.step < totalSteps)
      TRY(checkpoint());
  }
  auto loopEnd = Clock::now();
  if (at.batch + schedule.gradAccum > batchesPerEpoch) {
    TRY(endEpoch());
  } else if (evalData && options.steps > 0) {
    TRY(runEval());
  }
  if (!options.checkpointDir.empty())
    TRY(writeCheckpoint(session, options, at, lastCheckpoint));
  if (!options.saveStates.empty())
    TRY(toError(session.saveStates(options.saveStates), "--save-states"));
  TRY(exportModel(session, options, schedule, callbacks, report));
  double seconds = secondsSince(start);
  std::string done = formatted("done: %lld optimizer steps in %.1f s",
                               (long long)(at.step - startStep), seconds);
  if (firstStepDone && at.step - startStep > 1) {
    double rest =
        std::chrono::duration<double>(loopEnd - *firstStepDone).count();
    done += formatted(" (%.4f s per step after the first)",
                      rest / double(at.step - startStep - 1));
  }
  report.line(done);
  report.line(formatted(
      "data: %.3f s reading '%s', %.3f s batching (%.2f%% of the run)",
      readSeconds, options.data.c_str(), batchingSeconds,
      seconds > 0
          ? 100.0 * (readSeconds + batchingSeconds) / (seconds + readSeconds)
          : 0.0));
  if (trimmedBatches) {
    int64_t bound = 0;
    for (const ValueInfo &input : train.inputs)
      if (input.name == "attention_mask")
        bound = input.maxDims[1];
    report.line(formatted(
        "sequence: micro-batches ran at %.1f tokens on average (their "
        "longest example's length; bound %lld)",
        double(trimmedTokens) / double(trimmedBatches), (long long)bound));
  }
  if (std::optional<int64_t> peak = peakResidentKiB())
    report.line("peak memory: " + std::to_string(*peak / 1024) + " MiB");
  return llvm::Error::success();
}
