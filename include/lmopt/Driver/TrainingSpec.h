//===- TrainingSpec.h - lmopt-compile --train's options as text -*- C++ -*-===//
//
// The training flags as the user gives them (the loss spec, betas, globs),
// checked and turned into TrainingOptions with the schedule the bundle's
// meta records. lmopt-compile's flags and the Python package's
// compile(train=...) both fill a TrainingSpec (docs/training.md).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DRIVER_TRAININGSPEC_H
#define LMOPT_DRIVER_TRAININGSPEC_H

#include "lmopt/Target/Common/TrainingEntries.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::lmopt {

/// One field per training flag, with the flags' defaults.
struct TrainingSpec {
  /// cross-entropy[:output[,labels]] or mse[:output[,target]].
  std::string loss = "cross-entropy";
  std::string optimizer = "adamw";
  double lr = 2e-5;
  double weightDecay = 0.01;
  /// Comma-separated globs of parameters without weight decay.
  std::string noDecay = "*bias,*LayerNorm*";
  /// beta1,beta2.
  std::string betas = "0.9,0.999";
  double adamEpsilon = 1e-8;
  double clipNorm = 0;
  /// linear, cosine or constant.
  std::string schedule = "linear";
  int64_t warmupSteps = 0;
  int64_t gradAccum = 1;
  bool disableDropout = false;
  /// Distillation (docs/training.md): the teacher model; empty for none.
  std::string distillFrom;
  /// alpha,beta,gamma: the weights of the cross-entropy, KL and MSE terms.
  std::string lossWeights = "1,1,0";
  double temperature = 1.0;
  /// The output pair of the MSE term: NAME (both models) or
  /// STUDENT,TEACHER.
  std::string distillOutput;
};

/// The checked options, their schedule and dropout choice included; the
/// error names the flag and what it takes.
llvm::Expected<TrainingOptions> parseTrainingSpec(const TrainingSpec &spec);

} // namespace mlir::lmopt

#endif // LMOPT_DRIVER_TRAININGSPEC_H
