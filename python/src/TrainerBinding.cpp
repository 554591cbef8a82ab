//===- TrainerBinding.cpp - lmopt._lmopt's trainer ------------------------===//
//
// lmopt::training::train and evaluate (the code lmopt-train runs) on a
// session of a training bundle. The GIL is released while the trainer
// works and taken back for each callback; an exception a callback raises
// stops the run and is raised again once the trainer has returned.
//
//===----------------------------------------------------------------------===//

#include "Tensors.h"

#include "lmopt/Training/Trainer.h"

#include <nanobind/stl/string.h>

#include <optional>

namespace nb = nanobind;
using namespace lmopt;
using namespace lmopt::python;

namespace {
/// Calls Python back from the trainer's thread of work.
struct Callbacks {
  nb::object log, step, eval, compileBundle;
  std::optional<nb::python_error> raised;

  /// Runs `call` with the GIL; a Python exception is kept and becomes an
  /// error that stops the trainer.
  template <typename F> llvm::Error withPython(F &&call) {
    nb::gil_scoped_acquire acquire;
    if (raised)
      return llvm::createStringError("stopped by a Python exception");
    try {
      call();
      // Ctrl-C reaches Python only while it holds the GIL.
      if (PyErr_CheckSignals() != 0)
        throw nb::python_error();
    } catch (nb::python_error &error) {
      raised.emplace(std::move(error));
      return llvm::createStringError("stopped by a Python exception");
    }
    return llvm::Error::success();
  }
};

template <typename T> T read(const nb::dict &options, const char *key, T fallback) {
  return options.contains(key) && !options[key].is_none()
             ? nb::cast<T>(options[key])
             : fallback;
}

nb::dict evalDict(const training::EvalRecord &record) {
  nb::dict d;
  d["epoch"] = record.epoch;
  d["loss"] = record.loss;
  d["accuracy"] = record.accuracy ? nb::cast(*record.accuracy) : nb::none();
  d["examples"] = record.examples;
  return d;
}
} // namespace

/// Trains with `session`; `options` holds TrainerOptions' fields by their
/// snake_case names (python/lmopt/_api.py's Trainer.fit checks them).
void trainSession(runtime::Session &session, const nb::dict &options,
                  nb::object log, nb::object step, nb::object eval,
                  nb::object compileBundle) {
  training::TrainerOptions o;
  o.data = read<std::string>(options, "data", "");
  o.eval = read<std::string>(options, "eval", "");
  o.tokenizer = read<std::string>(options, "tokenizer", "");
  o.epochs = read<int64_t>(options, "epochs", o.epochs);
  o.steps = read<int64_t>(options, "steps", o.steps);
  o.batch = read<int64_t>(options, "batch", o.batch);
  o.shuffle = read<bool>(options, "shuffle", o.shuffle);
  o.groupByLength = read<bool>(options, "group_by_length", o.groupByLength);
  o.seed = read<uint64_t>(options, "seed", o.seed);
  o.lr = read<double>(options, "lr", o.lr);
  o.schedule = read<std::string>(options, "lr_schedule", "");
  o.warmup = read<int64_t>(options, "warmup_steps", o.warmup);
  o.scheduleSteps = read<int64_t>(options, "schedule_steps", o.scheduleSteps);
  o.gradAccum = read<int64_t>(options, "grad_accum", o.gradAccum);
  o.checkpointDir = read<std::string>(options, "checkpoint_dir", "");
  o.checkpointEvery =
      read<int64_t>(options, "checkpoint_every", o.checkpointEvery);
  o.resume = read<bool>(options, "resume", o.resume);
  o.logLosses = read<std::string>(options, "log_losses", "");
  o.saveStates = read<std::string>(options, "save_states", "");
  o.exportOnnx = read<std::string>(options, "export_onnx", "");
  o.onnxModel = read<std::string>(options, "onnx_model", "");
  o.exportBundle = read<std::string>(options, "export_bundle", "");
  o.logEvery = read<int64_t>(options, "log_every", o.logEvery);
  o.bundleName = read<std::string>(options, "bundle_name", o.bundleName);

  Callbacks py{log, step, eval, compileBundle, std::nullopt};
  training::TrainerCallbacks callbacks;
  callbacks.log = [&](llvm::StringRef line) {
    if (!py.log.is_none())
      llvm::consumeError(py.withPython([&] { py.log(line.str()); }));
  };
  callbacks.step = [&](const training::StepRecord &r) -> llvm::Error {
    return py.withPython([&] {
      if (py.step.is_none())
        return;
      nb::dict d;
      d["step"] = r.step;
      d["total_steps"] = r.totalSteps;
      d["epoch"] = r.epoch;
      d["loss"] = r.loss;
      d["lr"] = r.lr;
      d["grad_norm"] = r.gradNorm;
      d["samples_per_second"] = r.samplesPerSecond;
      d["eta_seconds"] = r.etaSeconds;
      py.step(d);
    });
  };
  callbacks.eval = [&](const training::EvalRecord &record) {
    if (!py.eval.is_none())
      llvm::consumeError(py.withPython([&] { py.eval(evalDict(record)); }));
  };
  callbacks.compileBundle =
      [&](const std::string &onnxPath, const std::string &bundlePath,
          const std::vector<training::BundleInput> &inputs) -> llvm::Error {
    return py.withPython([&] {
      nb::list shapes;
      for (const training::BundleInput &input : inputs) {
        nb::list dims, maxDims;
        for (int64_t d : input.dims)
          dims.append(d);
        for (int64_t d : input.maxDims)
          maxDims.append(d);
        shapes.append(nb::make_tuple(input.name, dims, maxDims));
      }
      py.compileBundle(onnxPath, bundlePath, shapes);
    });
  };
  llvm::Error error = llvm::Error::success();
  {
    nb::gil_scoped_release release;
    error = training::train(session, o, callbacks);
  }
  if (py.raised) {
    llvm::consumeError(std::move(error));
    throw std::move(*py.raised);
  }
  if (error)
    throw Error(llvm::toString(std::move(error)));
}

nb::dict evaluateSession(runtime::Session &session, const std::string &data,
                         int64_t batch) {
  llvm::Expected<training::EvalRecord> record = [&] {
    nb::gil_scoped_release release;
    return training::evaluate(session, data, batch);
  }();
  if (!record)
    throw Error(llvm::toString(record.takeError()));
  return evalDict(*record);
}
