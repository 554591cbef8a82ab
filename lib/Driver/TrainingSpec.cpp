//===- TrainingSpec.cpp - lmopt-compile --train's options as text ---------===//

#include "lmopt/Driver/TrainingSpec.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <cstdio>

using namespace mlir::lmopt;

static llvm::Error flagError(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

/// --loss into the options' loss, output and labels.
static llvm::Error parseLoss(llvm::StringRef spec, TrainingOptions &options) {
  auto [kind, rest] = spec.split(':');
  if (kind == "cross-entropy") {
    options.loss = TrainingOptions::Loss::CrossEntropy;
  } else if (kind == "mse") {
    options.loss = TrainingOptions::Loss::MeanSquaredError;
    options.labels = "target";
  } else {
    return flagError("--loss: unknown loss '" + kind +
                     "'; use cross-entropy or mse");
  }
  if (!rest.empty()) {
    auto [output, labels] = rest.split(',');
    options.output = output.str();
    if (!labels.empty())
      options.labels = labels.str();
  }
  return llvm::Error::success();
}

/// The distillation flags into the options' distill.
static llvm::Error parseDistill(const TrainingSpec &spec,
                               TrainingOptions &options) {
  if (spec.distillFrom.empty()) {
    if (!spec.distillOutput.empty())
      return flagError("--distill-output applies with --distill-from");
    return llvm::Error::success();
  }
  DistillOptions distill;
  distill.teacherPath = spec.distillFrom;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(spec.lossWeights).split(parts, ',');
  double *weights[] = {&distill.alpha, &distill.beta, &distill.gamma};
  const char *names[] = {"alpha", "beta", "gamma"};
  if (parts.size() != 3)
    return flagError("--loss-weights: '" + spec.lossWeights +
                     "' is not three numbers alpha,beta,gamma (the "
                     "cross-entropy, KL and MSE terms), e.g. 0.5,0.5,0");
  for (int i = 0; i < 3; ++i) {
    if (parts[i].trim().getAsDouble(*weights[i]) || !std::isfinite(*weights[i]))
      return flagError("--loss-weights: " + llvm::Twine(names[i]) + " '" +
                       parts[i] + "' is not a number");
    if (*weights[i] < 0)
      return flagError("--loss-weights: " + llvm::Twine(names[i]) + " is " +
                       parts[i] + "; the weights must not be negative");
  }
  if (distill.alpha == 0 && distill.beta == 0 && distill.gamma == 0)
    return flagError("--loss-weights: alpha, beta and gamma are all 0: "
                     "nothing to train");
  if (!(spec.temperature > 0) || !std::isfinite(spec.temperature)) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", spec.temperature);
    return flagError("--temperature " + llvm::Twine(shown) +
                     ": the temperature must be positive");
  }
  distill.temperature = spec.temperature;
  if (distill.gamma > 0 && spec.distillOutput.empty())
    return flagError("--loss-weights: gamma is " + parts[2] +
                     " but no --distill-output names the outputs the MSE "
                     "term compares");
  if (distill.gamma == 0 && !spec.distillOutput.empty())
    return flagError("--distill-output names '" + spec.distillOutput +
                     "' but gamma (--loss-weights' third) is 0");
  auto [student, teacher] = llvm::StringRef(spec.distillOutput).split(',');
  distill.studentOutput = student.trim().str();
  distill.teacherOutput =
      teacher.empty() ? distill.studentOutput : teacher.trim().str();
  options.distill = std::move(distill);
  return llvm::Error::success();
}

llvm::Expected<TrainingOptions>
mlir::lmopt::parseTrainingSpec(const TrainingSpec &spec) {
  TrainingOptions options;
  if (llvm::Error error = parseLoss(spec.loss, options))
    return std::move(error);
  if (spec.optimizer != "adamw")
    return flagError("--optimizer: unknown optimizer '" + spec.optimizer +
                     "'; use adamw");
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(spec.betas).split(parts, ',');
  if (parts.size() != 2 || parts[0].trim().getAsDouble(options.beta1) ||
      parts[1].trim().getAsDouble(options.beta2) || options.beta1 < 0 ||
      options.beta1 >= 1 || options.beta2 < 0 || options.beta2 >= 1)
    return flagError("--betas: '" + spec.betas +
                     "' is not two numbers in [0, 1), e.g. 0.9,0.999");
  if (!(spec.adamEpsilon > 0))
    return flagError("--adam-epsilon must be positive");
  if (!(spec.weightDecay >= 0))
    return flagError("--weight-decay must not be negative");
  if (!(spec.clipNorm >= 0))
    return flagError("--clip-norm must not be negative");
  if (!(spec.lr > 0))
    return flagError("--lr must be positive");
  if (spec.warmupSteps < 0)
    return flagError("--warmup-steps must not be negative");
  if (spec.gradAccum < 1)
    return flagError("--grad-accum must be 1 or more");
  if (spec.schedule != "linear" && spec.schedule != "cosine" &&
      spec.schedule != "constant")
    return flagError("--lr-schedule: unknown schedule '" + spec.schedule +
                     "'; use linear, cosine or constant");
  options.epsilon = spec.adamEpsilon;
  options.weightDecay = spec.weightDecay;
  options.clipNorm = spec.clipNorm;
  parts.clear();
  llvm::StringRef(spec.noDecay).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef glob : parts)
    options.noDecay.push_back(glob.trim().str());
  options.disableDropout = spec.disableDropout;
  if (llvm::Error error = parseDistill(spec, options))
    return std::move(error);
  options.schedule = llvm::json::Object{
      {"lr", spec.lr},
      {"lr_schedule", spec.schedule},
      {"warmup_steps", spec.warmupSteps},
      {"grad_accum", spec.gradAccum},
      {"weight_decay", spec.weightDecay},
      {"dropout", spec.disableDropout ? "disabled" : "kept"}};
  return options;
}
