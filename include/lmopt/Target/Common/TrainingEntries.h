//===- TrainingEntries.h - a model's training step as entry points -*- C++ -*-===//
//
// `lmopt-compile --train` turns an exported model with a head into three
// entry points that share its parameters as session state (the design of
// the KV-cache entries, KvCacheEntries.h, applied to training):
//
// - `train_step`: the model's inputs, `labels` (or the regression target)
//   and `accumulate` (0: the step's gradients replace the stored ones, 1:
//   they add to them); runs forward, the loss and the backward pass
//   (lmopt-autodiff) and writes each parameter's gradient state. Output:
//   `loss`.
// - `optimizer_step`: `lr`, `step_size` (lr over the first bias
//   correction), `bias_correction2_sqrt` and `grad_scale` (1 / micro-batches)
//   computed by the caller for the optimizer step; clips the scaled
//   gradients to `clipNorm` by their global norm and applies AdamW with
//   decoupled weight decay per parameter group, as torch.optim.AdamW does.
//   Output: `grad_norm` (before clipping). Writes the parameters and both
//   moments.
// - `eval`: the model's inputs and labels; outputs `loss` and the model's
//   outputs, reading the parameters.
//
// Parameters are the model's floating-point constants of rank 1 or more
// that the loss depends on, named by their initializer's name (the
// constant's location); each is a state initialized from the weights
// section, with states `grad/<name>`, `adam_m/<name>` and `adam_v/<name>`
// initialized to zeros.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_TRAININGENTRIES_H
#define LMOPT_TARGET_COMMON_TRAININGENTRIES_H

#include "lmopt/Target/Common/Distillation.h"
#include "lmopt/Target/Common/KvCacheEntries.h"
#include "lmopt/Target/Common/WeightsBuilder.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt {

struct TrainingOptions {
  enum class Loss { CrossEntropy, MeanSquaredError };
  Loss loss = Loss::CrossEntropy;
  /// The model output the loss reads (logits or predictions); empty: the
  /// first output.
  std::string output;
  /// The name of the labels (target) input the entries take.
  std::string labels = "labels";
  /// Cross-entropy: labels equal to it take no part in the loss (token
  /// level losses' padding).
  int64_t ignoreIndex = -100;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weightDecay = 0.0;
  /// Parameters whose name matches one of these globs get no weight decay.
  std::vector<std::string> noDecay;
  /// Clip the gradients' global norm to this; 0 leaves them.
  double clipNorm = 0.0;
  /// Bounds of the model inputs' dynamic dims; the labels' are derived
  /// from the first input's when not given.
  std::map<std::string, std::vector<int64_t>> maxShapes;
  /// The model file the bundle was compiled from (absolute) and its size,
  /// recorded so that lmopt-train can export the trained weights into it.
  std::string sourceModel;
  int64_t sourceModelBytes = 0;
  /// --prune's value ("ffn=0.5"), recorded as the meta's "prune": --export-onnx
  /// writes an FFN-pruned student's smaller matrices into the source model and
  /// refuses one with dropped layers.
  std::string prune;
  /// Run lmopt-disable-dropout before the training pipeline.
  bool disableDropout = false;
  /// What the trainer runs by default (learning rate, schedule, warm-up,
  /// accumulation), copied to the meta's "schedule".
  llvm::json::Object schedule;
  /// Set: the module holds a teacher (kTeacherFuncName) whose forward the
  /// entries compute too, and the loss is the distillation objective
  /// (Distillation.h); with alpha 0 the entries take no labels.
  std::optional<DistillOptions> distill;
};

struct TrainingEntries {
  std::vector<::lmopt::runtime::PlanState> states;
  /// `train_step`, `optimizer_step`, `eval`.
  std::vector<EntrySpec> entries;
  /// For the bundle's meta ("training"): the loss, the parameters with
  /// their groups, the hyper-parameters compiled in.
  llvm::json::Object meta;
};

/// Builds the entries from `module`'s @main (which it erases), adding the
/// parameters' initial values to `weights`. Fails with a diagnostic naming
/// the output, input or op when the model cannot be trained this way.
FailureOr<TrainingEntries> buildTrainingEntries(ModuleOp module,
                                                const TrainingOptions &options,
                                                WeightsBuilder &weights);

/// Appends to `main` (an inference @main) the loss `options` names
/// (`loss`, `output`, `labels`, `ignoreIndex`) over that output, reading a
/// new last argument, the labels or target, named `labels` in the graph's
/// input names; returns the rank-0 loss. The results stay as they are.
/// Fails with a diagnostic naming a missing output or an output the loss
/// cannot read. lmopt-prune's gradient criterion differentiates it.
FailureOr<Value> appendModelLoss(func::FuncOp main,
                                 const TrainingOptions &options);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_TRAININGENTRIES_H
