//===- Session.h - Running a compiled bundle --------------------*- C++ -*-===//
//
// A Session is a compiled model ready to run: the bundle mapped and
// validated, its program parsed, the devices it names created (through the
// Device interface only), every step of every entry point checked and
// prepared, the activation arenas allocated, and the state tensors created
// with their initial values. run() binds an entry's inputs by name,
// executes its steps in order, updates the states it writes and copies the
// outputs out. States keep their values from one run to the next (a
// key/value cache, parameters) and can be read, written, saved and loaded.
// Sessions share nothing but the read-only mapping of their bundle, so any
// number can live in one process. Several threads may call one session: its
// runs and state calls take turns on the session's lock (lockRuns()).
// docs/cpu-backend.md, "Runtime sessions and lmopt-run".
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
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  /// An entry whose steps all run on a device that records runs (CUDA
  /// graphs) is recorded on its second run with the same dims and replayed
  /// from then on (Device::canCapture). Off: every step is launched on
  /// every run.
  bool recordRuns = true;
  /// GPU devices: f32 matrix products may run on TF32 tensor cores
  /// (DeviceOptions::allowTf32).
  bool allowTf32 = false;
  /// The seed that fills the weights of a bundle compiled with
  /// --omit-weights with pseudo-random values (OmittedWeights.h), for
  /// timing it. Such a bundle is refused without one, and a bundle with its
  /// weights is refused with one.
  std::optional<uint64_t> randomWeightsSeed;
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

/// An entry point: its inputs and outputs, and the states it reads and
/// writes (by name).
struct EntryInfo {
  std::string name;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<std::string> stateReads;
  std::vector<std::string> stateWrites;
};

/// A state tensor and its current value's dims.
struct StateInfo {
  std::string name;
  DType dtype = DType::F32;
  /// Capacity: the most each dim can hold.
  std::vector<int64_t> maxDims;
  /// The device its bytes are on.
  std::string device;
  /// False until an entry or writeState gives it a value (a state whose
  /// plan says "init none"); reading it then is an error.
  bool hasValue = false;
  /// The current value's dims (empty without a value).
  std::vector<int64_t> dims;
};

/// Accumulated time of one step over the runs since the last reset.
struct StepProfile {
  /// The entry the step belongs to.
  std::string entry;
  std::string name;
  StepKind kind = StepKind::Kernel;
  /// The step's index in its entry, as `--dump-plan` numbers it.
  uint32_t index = 0;
  uint64_t calls = 0;
  double seconds = 0;
};

class BundleReader;
class Device;

class Session {
public:
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session();

  /// Opens the bundle at `path` and prepares it to run. Fails, naming the
  /// bundle, the entry, the step and the values, on a bundle that does not
  /// validate, a device this runtime or machine lacks, a plan step the
  /// device cannot run as described, a missing kernel or an allocation
  /// failure.
  static Status create(const std::string &path, const SessionOptions &options,
                       std::unique_ptr<Session> &out);

  /// Entry points in plan order; the first is the default.
  const std::vector<EntryInfo> &entries() const { return entryInfos_; }
  /// The index of the entry named `name`, or -1.
  long findEntry(std::string_view name) const;
  /// The index of the entry named `name` in `out`, or an error naming the
  /// bundle and listing its entries.
  Status findEntry(std::string_view name, size_t &out) const;
  /// The entries' names for messages: "'prefill', 'decode'".
  std::string entryNames() const;

  /// The default entry's inputs and outputs.
  const std::vector<ValueInfo> &inputs() const {
    return entryInfos_.front().inputs;
  }
  const std::vector<ValueInfo> &outputs() const {
    return entryInfos_.front().outputs;
  }
  /// The `meta` section's JSON text ("" without one).
  const std::string &meta() const { return meta_; }
  const Program &program() const { return program_; }
  /// The default entry's plan.
  const Plan &plan() const { return program_.entries.front(); }

  /// Runs, execute() and the state calls take this per-session lock, so
  /// that threads sharing a session take turns rather than race. A caller
  /// reading outputs in place (execute() then outputData()/outputTensor())
  /// from a shared session holds it across both, as the C API does:
  ///   auto lock = session.lockRuns();
  /// The lock is recursive: the session's own calls may run under it.
  /// profile() hands out a reference and takes no lock.
  std::unique_lock<std::recursive_mutex> lockRuns() const {
    return std::unique_lock<std::recursive_mutex>(runMutex_);
  }

  /// Runs entry `entry` (the default one in the overloads without it).
  /// Every input must be given exactly once, by name, with the plan's dtype
  /// and dims (for symbolic dims: any size within the bounds that keeps the
  /// plan's assumptions; outputs then take the dims that follow). States
  /// the entry reads must have values whose dims agree with the plan's for
  /// this run. `outputs` receives copies, in the order of the entry's
  /// outputs. A run that fails leaves every state's value as it was, except
  /// that bytes beyond a state's current dims may have changed.
  Status run(size_t entry, const std::vector<NamedTensorView> &inputs,
             std::vector<NamedTensor> &outputs);
  Status run(const std::vector<NamedTensorView> &inputs,
             std::vector<NamedTensor> &outputs);
  Status run(const std::vector<NamedTensor> &inputs,
             std::vector<NamedTensor> &outputs);
  /// By entry name; an unknown name fails listing the entries.
  Status run(std::string_view entry, const std::vector<NamedTensor> &inputs,
             std::vector<NamedTensor> &outputs);

  /// Runs entry `entry` without copying the outputs out: outputData(i) then
  /// points at its output i (in an arena, or the input or weight it is),
  /// valid until the next run and while the inputs live.
  Status execute(size_t entry, const NamedTensorView *inputs, size_t count);
  Status execute(const NamedTensorView *inputs, size_t count) {
    return execute(0, inputs, count);
  }
  const void *outputData(size_t index) const;
  /// Output `index` of the last executed entry with the dims of the last
  /// run (of the plan before any).
  const PlanTensor &outputTensor(size_t index) const;

  /// States in plan order.
  std::vector<StateInfo> states() const;
  /// A copy of state `name`'s current value, dense. Fails for an unknown
  /// state (listing them) or one without a value.
  Status readState(std::string_view name, Tensor &out) const;
  /// Gives state `name` the value `value`: the state's dtype and rank, each
  /// dim at most the capacity's.
  Status writeState(std::string_view name, const TensorView &value);
  /// Puts every state back to its initial value (zeros, the bundle's
  /// bytes, or no value), as when the session was created.
  Status resetStates();
  /// Writes every state that has a value to `path` as an `.npz` archive,
  /// one member per state (its name), atomically: the file is complete or
  /// untouched.
  Status saveStates(const std::string &path) const;
  /// Reads an `.npz` archive of state values (as saveStates writes) and
  /// gives each named state its value. Every member is checked (an existing
  /// state, its dtype and rank, dims within the capacity) before any state
  /// changes; states the archive does not name keep their values.
  Status loadStates(const std::string &path);

  /// Per step of every entry, in plan order; empty unless
  /// SessionOptions::profile.
  const std::vector<StepProfile> &profile() const { return profile_; }
  void resetProfile();

  /// True when the bundle was compiled with --omit-weights and its weights
  /// are random placeholders: its outputs mean nothing.
  bool hasRandomWeights() const { return randomWeights_; }

private:
  Session();
  struct Entry;
  struct State;
  /// Points weights_ at the weights section, or, for a bundle compiled with
  /// --omit-weights, at an owned buffer with random values where weights
  /// were left out.
  Status loadWeights(const SessionOptions &options);
  Status createDevices(const SessionOptions &options);
  Status createStates();
  Status createEntry(size_t index, const SessionOptions &options);
  Status bindInputs(Entry &entry, const NamedTensorView *inputs, size_t count);
  /// Symbolic plans: evaluates every dim from the inputs' and the states'
  /// and rebuilds the steps whose tensors changed dims since the last run.
  Status bindShapes(Entry &entry, const std::vector<const TensorView *> &bound);
  /// Enqueues the entry's steps (timed when profiling).
  Status runSteps(Entry &entry);
  /// Runs a recordable entry: eagerly, recorded, or replayed.
  Status runRecorded(Entry &entry);
  Status checkStateReads(const Entry &entry) const;
  /// The state named `name`, or a message listing the states.
  Status findState(std::string_view name, size_t &out) const;
  Status setStateValue(size_t index, const TensorView &value);

  /// Held by every run and state call (lockRuns()).
  mutable std::recursive_mutex runMutex_;
  std::string path_;
  std::unique_ptr<BundleReader> reader_;
  Program program_;
  std::string meta_;
  const uint8_t *weights_ = nullptr;
  /// Bytes of the weights layout the plan indexes.
  uint64_t weightsSize_ = 0;
  /// The weights of a bundle compiled with --omit-weights or with sparse
  /// weights, rebuilt at load (weights_ points here); null when weights_ is
  /// the mapped section.
  std::unique_ptr<uint8_t, void (*)(void *)> ownedWeights_{nullptr, nullptr};
  /// The bundle was compiled with --omit-weights (and given a seed).
  bool randomWeights_ = false;
  /// The byte ranges [begin, end) of the weights section that some step of
  /// some entry reads in place (so a packed copy may not release them);
  /// computed once, at creation.
  std::vector<std::pair<uint64_t, uint64_t>> weightsReadInPlace_;
  std::vector<EntryInfo> entryInfos_;
  /// Devices first: buffers, states and executors refer to them and are
  /// destroyed before them.
  std::vector<std::unique_ptr<Device>> devices_;
  /// Per device: its copy of the weights section (null for the host, which
  /// reads the mapping).
  std::vector<std::unique_ptr<class DeviceBuffer>> deviceWeights_;
  /// Per device: the arena, sized for the entry that needs the most.
  std::vector<std::unique_ptr<class DeviceBuffer>> arenas_;
  std::vector<std::unique_ptr<State>> states_;
  std::vector<std::unique_ptr<Entry>> entries_;
  /// The entry execute() ran last.
  size_t lastEntry_ = 0;
  bool packLinearWeights_ = true;
  bool profiling_ = false;
  /// The device (index) whose entries' runs are recorded, or -1.
  int recordDevice_ = -1;
  std::vector<StepProfile> profile_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_SESSION_H
