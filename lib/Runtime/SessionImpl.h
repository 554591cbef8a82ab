//===- SessionImpl.h - A session's entries and states -----------*- C++ -*-===//
//
// Private to Session.cpp and SessionState.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_SESSIONIMPL_H
#define LMOPT_LIB_RUNTIME_SESSIONIMPL_H

#include "lmopt/Runtime/Device.h"
#include "lmopt/Runtime/Session.h"

#include <memory>
#include <vector>

namespace lmopt::runtime {

/// An entry point, ready to run.
struct Session::Entry {
  /// In Program::entries.
  size_t index = 0;
  /// Names the bundle, and the entry when there are several, in messages.
  std::string source;
  std::vector<std::unique_ptr<StepExecutor>> steps;
  /// Symbolic plans only: the plan with the last run's dims (the bounds'
  /// before any; the first run rebuilds every symbolic step), which steps
  /// are rebuilt from, and which steps read or write a symbolic tensor.
  Plan runPlan;
  std::vector<bool> symbolicStep;
  std::vector<int64_t> runSymbols;
  bool rebuildAll = false;
  /// Per input: where a misaligned input is copied (allocated on first use)
  /// and the alignment its readers need.
  std::vector<std::unique_ptr<DeviceBuffer>> staging;
  std::vector<size_t> inputAlignment;
  /// Data pointer of every plan tensor; inputs are bound by each run.
  std::vector<void *> tensors;
  /// Where the entry's steps start in Session::profile_.
  size_t profileOffset = 0;
  /// Recorded runs (SessionOptions::recordRuns): every step runs on the
  /// session's recording device; the inputs are staged at fixed host
  /// addresses; the recording of the current executors, once they ran
  /// eagerly once (both reset when symbolic steps are rebuilt).
  bool recordable = false;
  std::vector<std::unique_ptr<DeviceBuffer>> pinnedInputs;
  std::unique_ptr<CapturedRun> recorded;
  unsigned eagerRuns = 0;
};

/// A state tensor's bytes (its capacity, on its device) and its value.
struct Session::State {
  std::unique_ptr<DeviceBuffer> buffer;
  bool hasValue = false;
  /// The value's dims; empty without a value.
  std::vector<int64_t> dims;
};

} // namespace lmopt::runtime

#endif // LMOPT_LIB_RUNTIME_SESSIONIMPL_H
