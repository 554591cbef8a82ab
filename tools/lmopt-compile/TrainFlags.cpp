//===- TrainFlags.cpp - lmopt-compile's training flags --------------------===//

#include "TrainFlags.h"

#include "llvm/ADT/StringExtras.h"

namespace cl = llvm::cl;

llvm::cl::OptionCategory &lmopt_compile::getTrainCategory() {
  static cl::OptionCategory category("lmopt-compile training options");
  return category;
}

static cl::opt<bool>
    train("train",
          cl::desc("Compile a training bundle (train_step, optimizer_step and "
                   "eval entries; run it with lmopt-train)"),
          cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<std::string> loss(
    "loss",
    cl::desc("The loss: cross-entropy[:output[,labels]] (default: the first "
             "output against 'labels') or mse[:output[,target]]"),
    cl::value_desc("kind:output,labels"), cl::init("cross-entropy"),
    cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<std::string>
    optimizer("optimizer", cl::desc("The optimizer: adamw (the only one)"),
              cl::init("adamw"), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<double> lr("lr", cl::desc("Peak learning rate (default 2e-5)"),
                          cl::init(2e-5),
                          cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<double>
    weightDecay("weight-decay",
                cl::desc("AdamW's decoupled weight decay (default 0.01)"),
                cl::init(0.01), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<std::string> noDecay(
    "no-decay",
    cl::desc("Comma-separated globs of parameter names that take no weight "
             "decay (default '*bias,*LayerNorm*')"),
    cl::init("*bias,*LayerNorm*"), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<std::string>
    betas("betas", cl::desc("AdamW's beta1,beta2 (default 0.9,0.999)"),
          cl::init("0.9,0.999"), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<double>
    adamEpsilon("adam-epsilon", cl::desc("AdamW's epsilon (default 1e-8)"),
                cl::init(1e-8), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<double> clipNorm(
    "clip-norm",
    cl::desc("Clip the gradients' global norm to this (default 0: no clip)"),
    cl::init(0.0), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<std::string> schedule(
    "lr-schedule",
    cl::desc("Learning-rate schedule: linear (warm-up, then linear decay to "
             "0; default), cosine or constant (after warm-up)"),
    cl::init("linear"), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<int64_t>
    warmupSteps("warmup-steps",
                cl::desc("Optimizer steps of linear warm-up (default 0)"),
                cl::init(0), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<int64_t> gradAccum(
    "grad-accum",
    cl::desc("Micro-batches whose gradients one optimizer step takes "
             "(default 1)"),
    cl::init(1), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<bool> disableDropout(
    "disable-dropout",
    cl::desc("Remove dropout (p = 0) instead of training with it"),
    cl::cat(lmopt_compile::getTrainCategory()));

bool lmopt_compile::isTrainingRequested() { return train; }
bool lmopt_compile::isDropoutDisabled() { return disableDropout; }

static llvm::Error flagError(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

llvm::Expected<mlir::lmopt::TrainingOptions>
lmopt_compile::getTrainingOptions() {
  mlir::lmopt::TrainingOptions options;
  llvm::StringRef spec = loss;
  auto [kind, rest] = spec.split(':');
  if (kind == "cross-entropy")
    options.loss = mlir::lmopt::TrainingOptions::Loss::CrossEntropy;
  else if (kind == "mse") {
    options.loss = mlir::lmopt::TrainingOptions::Loss::MeanSquaredError;
    options.labels = "target";
  } else
    return flagError("--loss: unknown loss '" + kind +
                     "'; use cross-entropy or mse");
  if (!rest.empty()) {
    auto [output, labels] = rest.split(',');
    options.output = output.str();
    if (!labels.empty())
      options.labels = labels.str();
  }
  if (optimizer != "adamw")
    return flagError("--optimizer: unknown optimizer '" + optimizer +
                     "'; use adamw");
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(betas).split(parts, ',');
  if (parts.size() != 2 || parts[0].trim().getAsDouble(options.beta1) ||
      parts[1].trim().getAsDouble(options.beta2) || options.beta1 < 0 ||
      options.beta1 >= 1 || options.beta2 < 0 || options.beta2 >= 1)
    return flagError("--betas: '" + betas +
                     "' is not two numbers in [0, 1), e.g. 0.9,0.999");
  if (!(adamEpsilon > 0))
    return flagError("--adam-epsilon must be positive");
  if (!(weightDecay >= 0))
    return flagError("--weight-decay must not be negative");
  if (!(clipNorm >= 0))
    return flagError("--clip-norm must not be negative");
  if (!(lr > 0))
    return flagError("--lr must be positive");
  if (warmupSteps < 0)
    return flagError("--warmup-steps must not be negative");
  if (gradAccum < 1)
    return flagError("--grad-accum must be 1 or more");
  if (schedule != "linear" && schedule != "cosine" && schedule != "constant")
    return flagError("--lr-schedule: unknown schedule '" + schedule +
                     "'; use linear, cosine or constant");
  options.epsilon = adamEpsilon;
  options.weightDecay = weightDecay;
  options.clipNorm = clipNorm;
  parts.clear();
  llvm::StringRef(noDecay).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef glob : parts)
    options.noDecay.push_back(glob.trim().str());
  return options;
}

llvm::json::Object lmopt_compile::getTrainingSchedule() {
  return llvm::json::Object{{"lr", double(lr)},
                            {"lr_schedule", std::string(schedule)},
                            {"warmup_steps", int64_t(warmupSteps)},
                            {"grad_accum", int64_t(gradAccum)},
                            {"weight_decay", double(weightDecay)},
                            {"dropout", disableDropout ? "disabled" : "kept"}};
}
