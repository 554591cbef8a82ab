//===- Session.h - Running a compiled bundle --------------------*- C++ -*-===//
//
// A Session is a compiled model ready to run: the bundle mapped and
// validated, its plan parsed, every step checked and prepared (oneDNN
// primitives built, kernels loaded), and the activation arena allocated.
// run() binds inputs by name, executes the steps in order and copies the
// outputs out. Sessions share nothing but the read-only mapping of their
// bundle, so any number can live in one process; one session serves one
// thread at a time. docs/cpu-backend.md, "Runtime sessions and lmopt-run".
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_SESSION_H
#define LMOPT_RUNTIME_SESSION_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lmopt::runtime {

struct SessionOptions {
  /// Threads for library steps; 0 keeps oneDNN's default (OMP_NUM_THREADS or
  /// all cores).
  int threads = 0;
  /// Time every step (Session::profile()).
  bool profile = false;
  /// Linear steps copy their weight, reordered for oneDNN's kernel, when the
  /// session is created (LinearStep::createPacked); the mapped pages of a
  /// weight that nothing else reads are then released. Off: every call reads
  /// the weight in place and oneDNN repacks it each time.
  bool packLinearWeights = true;
};

/// A caller's tensor, read in place by run(): nothing is copied unless its
/// data is not aligned for what reads it.
struct TensorView {
  DType dtype = DType::F32;
  const int64_t *dims = nullptr;
  size_t rank = 0;
  const void *data = nullptr;
  /// Must equal the product of the dims times the element size.
  uint64_t byteSize = 0;

  static TensorView of(const Tensor &tensor);
};

struct NamedTensorView {
  std::string_view name;
  TensorView tensor;
};

/// A model input or output as the plan declares it.
struct ValueInfo {
  std::string name;
  DType dtype = DType::F32;
  /// -1 for a symbolic dim (any size up to maxDims).
  std::vector<int64_t> dims;
  /// The dims at the symbols' bounds (equal to dims for a static value).
  std::vector<int64_t> maxDims;
};

/// Accumulated time of one step over the runs since the last reset.
struct StepProfile {
  std::string name;
  StepKind kind = StepKind::Kernel;
  uint64_t calls = 0;
  double seconds = 0;
};

class StepExecutor;
class CpuContext;
class KernelLibrary;
class BundleReader;

class Session {
public:
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session();

  /// Opens the bundle at `path` and prepares it to run. Fails, naming the
  /// bundle, the step and the values, on a bundle that does not validate, a
  /// plan step this runtime cannot run as described, a missing kernel or an
  /// allocation failure.
  static Status create(const std::string &path, const SessionOptions &options,
                       std::unique_ptr<Session> &out);

  const std::vector<ValueInfo> &inputs() const { return inputs_; }
  const std::vector<ValueInfo> &outputs() const { return outputs_; }
  /// The `meta` section's JSON text ("" without one).
  const std::string &meta() const { return meta_; }
  const Plan &plan() const { return plan_; }

  /// Runs the model. Every input must be given exactly once, by name, with
  /// the plan's dtype and dims (for symbolic dims: any size within the
  /// bounds that keeps the plan's assumptions; outputs then take the dims
  /// that follow). `outputs` receives copies, in the order of outputs().
  Status run(const std::vector<NamedTensorView> &inputs,
             std::vector<NamedTensor> &outputs);
  Status run(const std::vector<NamedTensor> &inputs,
             std::vector<NamedTensor> &outputs);

  /// Runs the model without copying the outputs out: outputData(i) then
  /// points at output i (in the arena, or the input or weight it is), valid
  /// until the next run and while the inputs live.
  Status execute(const NamedTensorView *inputs, size_t count);
  const void *outputData(size_t index) const;
  /// Output `index` with the dims of the last run (of the plan before any).
  const PlanTensor &outputTensor(size_t index) const;

  /// Per step, in plan order; empty unless SessionOptions::profile.
  const std::vector<StepProfile> &profile() const { return profile_; }
  void resetProfile();

private:
  Session();
  Status bindInputs(const NamedTensorView *inputs, size_t count);
  /// Symbolic plans: evaluates every dim from the inputs' and rebuilds the
  /// steps whose tensors changed dims since the last run.
  Status bindShapes(const std::vector<const TensorView *> &bound);

  std::string path_;
  std::unique_ptr<BundleReader> reader_;
  Plan plan_;
  std::string meta_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
  /// Declared before the executors, which refer to them.
  std::unique_ptr<CpuContext> cpu_;
  std::unique_ptr<KernelLibrary> kernels_;
  std::vector<std::unique_ptr<StepExecutor>> steps_;
  /// Symbolic plans only: the plan with the last run's dims (the bounds'
  /// before any; the first run rebuilds every symbolic step), which steps
  /// are rebuilt from, and which steps read or write a symbolic tensor.
  Plan runPlan_;
  std::vector<bool> symbolicStep_;
  std::vector<int64_t> runSymbols_;
  bool rebuildAll_ = false;
  bool packLinearWeights_ = true;
  struct AlignedBuffer;
  std::unique_ptr<AlignedBuffer> arena_;
  /// Per input: where a misaligned input is copied (allocated on first use)
  /// and the alignment its readers need.
  std::vector<std::unique_ptr<AlignedBuffer>> staging_;
  std::vector<size_t> inputAlignment_;
  /// Data pointer of every plan tensor; inputs are bound by each run.
  std::vector<void *> tensors_;
  bool profiling_ = false;
  std::vector<StepProfile> profile_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_SESSION_H
