//===- LmoptModule.cpp - The lmopt._lmopt extension module ----------------===//
//
// lmopt._lmopt: compile() over lib/Driver's compileModel (the same code as
// lmopt-compile, with its options as keyword arguments and its log lines
// handed to a callback), the Session (SessionBinding.cpp) and lmopt.Error.
// The Python package (python/lmopt) wraps these in its public API.
//
//===----------------------------------------------------------------------===//

#include "Tensors.h"

#include "lmopt/Driver/ModelCompiler.h"
#include "lmopt/Driver/TrainingSpec.h"
#include "lmopt/Support/DiagnosedError.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "llvm/Support/raw_ostream.h"

namespace nb = nanobind;
using namespace lmopt::python;

void bindSession(nb::module_ &m);

namespace {
/// Keeps the log and hands each finished line to a Python callable. The
/// compiler has no exceptions: a callable that raises is not called again
/// and its exception is raised once the compile returns.
class LineStream : public llvm::raw_ostream {
public:
  explicit LineStream(nb::object callback) : callback(std::move(callback)) {
    SetUnbuffered();
  }
  std::string text;
  std::optional<nb::python_error> raised;

private:
  void write_impl(const char *ptr, size_t size) override {
    text.append(ptr, size);
    size_t end;
    while (!callback.is_none() &&
           (end = text.find('\n', sent)) != std::string::npos) {
      try {
        callback(text.substr(sent, end - sent));
      } catch (nb::python_error &error) {
        raised.emplace(std::move(error));
        callback = nb::none();
      }
      sent = end + 1;
    }
  }
  uint64_t current_pos() const override { return text.size(); }

  nb::object callback;
  size_t sent = 0;
};
} // namespace

/// The error lines of a failed compile's log, or all of it.
static std::string errorLines(const std::string &log) {
  std::string errors;
  llvm::StringRef rest = log;
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    if (line.starts_with("error: ") || line.contains(": error: ") ||
        (!errors.empty() && line.starts_with("note: ")))
      errors += (errors.empty() ? "" : "\n") + line.str();
    rest = tail;
  }
  return errors.empty() ? log : errors;
}

static std::string toJSONText(llvm::json::Object object) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object));
  return text;
}

/// compile(train={...}) (keys checked by the package) as a TrainingSpec.
static mlir::lmopt::TrainingSpec trainingSpec(const nb::dict &train) {
  mlir::lmopt::TrainingSpec spec;
  auto read = [&](const char *key, auto &field) {
    if (train.contains(key))
      field = nb::cast<std::decay_t<decltype(field)>>(train[key]);
  };
  read("loss", spec.loss);
  read("optimizer", spec.optimizer);
  read("lr", spec.lr);
  read("weight_decay", spec.weightDecay);
  read("no_decay", spec.noDecay);
  read("betas", spec.betas);
  read("adam_epsilon", spec.adamEpsilon);
  read("clip_norm", spec.clipNorm);
  read("lr_schedule", spec.schedule);
  read("warmup_steps", spec.warmupSteps);
  read("grad_accum", spec.gradAccum);
  read("disable_dropout", spec.disableDropout);
  read("distill_from", spec.distillFrom);
  read("loss_weights", spec.lossWeights);
  read("temperature", spec.temperature);
  read("distill_output", spec.distillOutput);
  return spec;
}

static nb::dict
compile(const std::string &input, const std::string &output,
        const std::string &target, unsigned optLevel, const std::string &cpu,
        const std::string &cudaArch, const std::string &precision,
        const std::vector<std::string> &inputShapes,
        const std::vector<std::string> &inputValues,
        const std::vector<std::string> &maxShapes, int64_t kvCache,
        bool prefillAllLogits, bool omitWeights, const std::string &prune,
        std::optional<std::string> quantize, const std::string &calibration,
        const std::string &calibrationMethod,
        const std::vector<std::string> &exclude, bool quantizeEmbeddings,
        std::optional<nb::dict> train, std::optional<std::string> loss,
        nb::object log) {
  mlir::lmopt::ModelCompilerOptions options;
  options.inputPath = input;
  options.outputPath = output;
  options.target = target;
  options.optLevel = optLevel;
  options.cpu = cpu;
  options.cudaArch = cudaArch;
  options.precision = precision;
  options.inputShapes = inputShapes;
  options.inputValues = inputValues;
  options.maxShapes = maxShapes;
  options.kvCache = kvCache;
  options.prefillAllLogits = prefillAllLogits;
  options.omitWeights = omitWeights;
  options.prune = prune;
  if (quantize || !calibration.empty()) {
    mlir::lmopt::quantization::QuantizeDriverOptions q;
    q.mode = quantize.value_or("");
    q.calibrationFile = calibration;
    q.calibrationMethod = calibrationMethod;
    q.exclude = exclude;
    q.quantizeEmbeddings = quantizeEmbeddings;
    // The report is for quantized bundles; samples alone serve --prune.
    q.writeReport = quantize.has_value();
    options.quantize = std::move(q);
  }
  LineStream stream(log);
  if (train) {
    mlir::lmopt::TrainingSpec spec = trainingSpec(*train);
    options.disableDropout = spec.disableDropout;
    llvm::Expected<mlir::lmopt::TrainingOptions> training =
        mlir::lmopt::parseTrainingSpec(spec);
    if (!training)
      throw Error("error: " + llvm::toString(training.takeError()));
    options.training = std::move(*training);
  } else if (loss) {
    // The loss --prune's criterion=gradient differentiates.
    mlir::lmopt::TrainingSpec spec;
    spec.loss = *loss;
    llvm::Expected<mlir::lmopt::TrainingOptions> parsed =
        mlir::lmopt::parseTrainingSpec(spec);
    if (!parsed)
      throw Error("error: " + llvm::toString(parsed.takeError()));
    options.pruneLoss = std::move(*parsed);
  }
  std::string listing;
  llvm::raw_string_ostream listingStream(listing);
  llvm::Expected<mlir::lmopt::ModelCompileResult> result =
      mlir::lmopt::compileModel(options, stream, listingStream);
  if (stream.raised) {
    if (!result)
      llvm::consumeError(result.takeError());
    throw std::move(*stream.raised);
  }
  if (!result) {
    mlir::lmopt::printErrors(result.takeError(), stream);
    throw Error(errorLines(stream.text));
  }
  nb::dict out;
  out["report"] = toJSONText(result->toJSON());
  out["near_misses"] = nb::cast(result->nearMisses);
  out["quantization"] =
      result->quantization
          ? nb::object(
                nb::str(toJSONText(std::move(*result->quantization)).c_str()))
          : nb::none();
  out["log"] = stream.text;
  return out;
}

NB_MODULE(_lmopt, m) {
  m.doc() = "lmopt's compiler and runtime (use the lmopt package)";
  nb::exception<Error>(m, "Error", PyExc_RuntimeError);
  m.def("compile", &compile, nb::arg("input"), nb::arg("output"),
        nb::arg("target"), nb::arg("opt_level"), nb::arg("cpu"),
        nb::arg("cuda_arch"), nb::arg("precision"), nb::arg("input_shapes"),
        nb::arg("input_values"), nb::arg("max_shapes"), nb::arg("kv_cache"),
        nb::arg("prefill_all_logits"), nb::arg("omit_weights"),
        nb::arg("prune"), nb::arg("quantize").none(), nb::arg("calibration"),
        nb::arg("calibration_method"), nb::arg("exclude"),
        nb::arg("quantize_embeddings"), nb::arg("train").none(),
        nb::arg("loss").none(), nb::arg("log").none());
  m.def("targets", &mlir::lmopt::getModelCompilerTargets);
  bindSession(m);
}
