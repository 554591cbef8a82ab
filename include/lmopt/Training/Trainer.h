//===- Trainer.h - Training with a compiled training bundle -----*- C++ -*-===//
//
// The training loop over the entries `lmopt-compile --train` writes:
// `train_step` once per micro-batch, `optimizer_step` once per optimizer
// step with the learning-rate schedule and AdamW's bias corrections
// computed here, and `eval` on a validation set after each epoch. It
// checkpoints the session's states with the trainer's position (a
// checkpoint is written in full before the file that names it replaces the
// previous one), resumes from it with the same results as an uninterrupted
// run, stops on a NaN/Inf loss naming the step (leaving the last good
// checkpoint), and exports the trained model. lmopt-train and the Python
// package's lmopt.Trainer both run it; every failure is an llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TRAINING_TRAINER_H
#define LMOPT_TRAINING_TRAINER_H

#include "lmopt/Runtime/Session.h"
#include "lmopt/Training/ExportOnnx.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lmopt::training {

/// lmopt-train's flags. Hyper-parameters left at their "unset" value take
/// the bundle's.
struct TrainerOptions {
  std::string data;      // .npz or token dataset PREFIX.idx
  std::string eval;      // validation set (optional)
  std::string tokenizer; // token datasets must come from this tokenizer
  int64_t epochs = 1;
  int64_t steps = 0;     // > 0: optimizer steps instead of epochs
  int64_t batch = 0;     // 0: the bundle's batch
  bool shuffle = true;
  bool groupByLength = false;
  uint64_t seed = 0;
  double lr = -1;        // < 0: the bundle's
  std::string schedule;  // empty: the bundle's
  int64_t warmup = -1;   // < 0: the bundle's
  int64_t scheduleSteps = 0;
  int64_t gradAccum = 0; // 0: the bundle's
  std::string checkpointDir;
  int64_t checkpointEvery = 0;
  bool resume = false;
  std::string logLosses;
  std::string saveStates;
  std::string exportOnnx;
  std::string onnxModel; // the source model (default: the recorded one)
  std::string exportBundle;
  int64_t logEvery = 10; // a progress line every N optimizer steps
  /// The name the bundle is shown by in messages.
  std::string bundleName = "the bundle";
};

/// One optimizer step done.
struct StepRecord {
  int64_t step = 0, totalSteps = 0, epoch = 0; // step and epoch 1-based
  double loss = 0, lr = 0, gradNorm = 0;
  double samplesPerSecond = 0, etaSeconds = 0;
};

/// One evaluation of the validation set.
struct EvalRecord {
  int64_t epoch = 0; // 1-based
  double loss = 0;
  /// Cross-entropy only: accuracy in [0, 1] over `examples` labels.
  std::optional<double> accuracy;
  int64_t examples = 0;
};

/// What the caller sees of a run. Every callback is optional.
struct TrainerCallbacks {
  /// Each line of the report (progress, evaluations, the summary),
  /// without its newline.
  std::function<void(llvm::StringRef)> log;
  /// After each optimizer step; an error stops the run (after nothing
  /// else is written) and is returned.
  std::function<llvm::Error(const StepRecord &)> step;
  std::function<void(const EvalRecord &)> eval;
  /// Compiles the exported ONNX model into an inference bundle
  /// (exportBundle); the eval entry's inputs but the labels, with their
  /// dims and bounds.
  std::function<llvm::Error(const std::string &onnxPath,
                            const std::string &bundlePath,
                            const std::vector<BundleInput> &inputs)>
      compileBundle;
};

/// The checks of `options` that need no bundle (data given, epochs or
/// steps, --resume with a checkpoint directory); train() makes them too.
llvm::Error checkTrainerOptions(const TrainerOptions &options);

/// Trains with `session` (a training bundle) as `options` say.
llvm::Error train(lmopt::runtime::Session &session,
                  const TrainerOptions &options,
                  const TrainerCallbacks &callbacks);

/// Evaluates the `eval` entry over `dataPath` in batches of `batch` (0: the
/// bundle's): the mean loss and, for cross-entropy, the accuracy.
llvm::Expected<EvalRecord> evaluate(lmopt::runtime::Session &session,
                                    const std::string &dataPath,
                                    int64_t batch = 0);

} // namespace lmopt::training

#endif // LMOPT_TRAINING_TRAINER_H
