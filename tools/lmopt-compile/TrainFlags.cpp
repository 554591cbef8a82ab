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
             "output against 'labels') or mse[:output[,target]]; also "
             "what --prune criterion=gradient differentiates"),
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
static cl::opt<double> adamEpsilon("adam-epsilon",
                                   cl::desc("AdamW's epsilon (default 1e-8)"),
                                   cl::init(1e-8),
                                   cl::cat(lmopt_compile::getTrainCategory()));
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
static cl::opt<int64_t>
    gradAccum("grad-accum",
              cl::desc("Micro-batches whose gradients one optimizer step takes "
                       "(default 1)"),
              cl::init(1), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<bool> disableDropout(
    "disable-dropout",
    cl::desc("Remove dropout (p = 0) instead of training with it"),
    cl::cat(lmopt_compile::getTrainCategory()));

static cl::opt<std::string> distillFrom(
    "distill-from",
    cl::desc("Distillation: compile this teacher model's forward into the "
             "training step (same inputs, by name; its weights frozen) and "
             "train on the distillation objective"),
    cl::value_desc("teacher.onnx"), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<std::string> lossWeights(
    "loss-weights",
    cl::desc("Distillation: alpha,beta,gamma, the weights of CE(student, "
             "labels), T^2 KL(teacher || student) and MSE(student output, "
             "teacher output) (default 1,1,0; alpha 0: no labels input)"),
    cl::value_desc("a,b,g"), cl::init("1,1,0"),
    cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<double> temperature(
    "temperature",
    cl::desc("Distillation: the softmax temperature T of the KL term "
             "(default 1)"),
    cl::init(1.0), cl::cat(lmopt_compile::getTrainCategory()));
static cl::opt<std::string> distillOutput(
    "distill-output",
    cl::desc("Distillation: the outputs the MSE term compares, NAME in both "
             "models or STUDENT,TEACHER"),
    cl::value_desc("name"), cl::cat(lmopt_compile::getTrainCategory()));

bool lmopt_compile::isTrainingRequested() { return train; }
bool lmopt_compile::isDropoutDisabled() { return disableDropout; }

llvm::Expected<mlir::lmopt::TrainingOptions>
lmopt_compile::getTrainingOptions() {
  mlir::lmopt::TrainingSpec spec;
  spec.loss = loss;
  spec.optimizer = optimizer;
  spec.lr = lr;
  spec.weightDecay = weightDecay;
  spec.noDecay = noDecay;
  spec.betas = betas;
  spec.adamEpsilon = adamEpsilon;
  spec.clipNorm = clipNorm;
  spec.schedule = schedule;
  spec.warmupSteps = warmupSteps;
  spec.gradAccum = gradAccum;
  spec.disableDropout = disableDropout;
  spec.distillFrom = distillFrom;
  spec.lossWeights = lossWeights;
  spec.temperature = temperature;
  spec.distillOutput = distillOutput;
  return mlir::lmopt::parseTrainingSpec(spec);
}
