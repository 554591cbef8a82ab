//===- TrainFlags.h - lmopt-compile's training flags ------------*- C++ -*-===//
//
// `--train` and its companions (loss, optimizer, schedule), kept apart from
// the tool's other flags like the quantization flags.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOOLS_LMOPT_COMPILE_TRAINFLAGS_H
#define LMOPT_TOOLS_LMOPT_COMPILE_TRAINFLAGS_H

#include "lmopt/Driver/TrainingSpec.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace lmopt_compile {

llvm::cl::OptionCategory &getTrainCategory();

/// True when --train was given.
bool isTrainingRequested();

/// True when --disable-dropout was given.
bool isDropoutDisabled();

/// The flags as the training entries' options, or an error naming the bad
/// flag.
llvm::Expected<mlir::lmopt::TrainingOptions> getTrainingOptions();

/// What lmopt-train runs by default, for the bundle's meta: learning rate,
/// schedule, warm-up and accumulation.

} // namespace lmopt_compile

#endif // LMOPT_TOOLS_LMOPT_COMPILE_TRAINFLAGS_H
