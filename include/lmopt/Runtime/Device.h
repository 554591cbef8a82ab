//===- Device.h - What a session needs of the hardware ----------*- C++ -*-===//
//
// A session runs a bundle's steps on the devices its program names (the
// host CPU first; a GPU next), and reaches each only through this
// interface, in the manner of IREE's HAL device: memory, copies, the
// device's kernel payload, step executors and synchronization. A device for
// hardware that not every machine has loads its libraries at run time
// (dlopen), so the runtime builds and its tests run without them; a bundle
// that needs a device this runtime or machine lacks is refused when the
// session is created, naming it.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_DEVICE_H
#define LMOPT_RUNTIME_DEVICE_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lmopt::runtime {

struct DeviceOptions {
  /// Threads for the device's host-side work; 0 keeps the library default
  /// (OMP_NUM_THREADS or all cores).
  int threads = 0;
  /// GPU devices: f32 matrix products may round their inputs to TF32 (10
  /// mantissa bits) on tensor cores.
  bool allowTf32 = false;
};

/// Memory a device allocated, zero-filled; freed with the object.
class DeviceBuffer {
public:
  virtual ~DeviceBuffer();
  /// The device address of the first byte (null for an empty buffer).
  void *data() const { return data_; }
  uint64_t size() const { return size_; }

protected:
  void *data_ = nullptr;
  uint64_t size_ = 0;
};

/// One plan step, ready to run.
class StepExecutor {
public:
  virtual ~StepExecutor();
  /// Runs the step. `tensors[i]` is the data pointer of plan tensor `i` on
  /// its device (inputs bound, weights mapped, arena and state tensors in
  /// their buffers); results are written through them.
  virtual Status run(void *const *tensors) const = 0;
  /// The plan tensor (a weight) whose bytes the executor copied when it was
  /// built and does not read again, or -1.
  virtual int64_t copiedWeight() const { return -1; }
};

/// What a device needs to build one step's executor.
struct StepBuildContext {
  /// The program (devices and states: a state tensor's capacity).
  const Program &program;
  /// The entry's plan, with this run's dims when rebuilt for a run.
  const Plan &plan;
  /// Names the bundle in messages.
  std::string source;
  /// The weights section in host memory (verified), for steps that copy a
  /// weight when they are built; null when the bundle has none.
  const uint8_t *weights = nullptr;
  /// Library steps may copy their weight into the layout their kernel
  /// prefers, once (for the CPU: linear steps packed for oneDNN).
  bool packWeights = true;
};

/// Work a device recorded (Device::endCapture), replayed as one launch.
class CapturedRun {
public:
  virtual ~CapturedRun();
};

class Device {
public:
  enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

  virtual ~Device();

  /// The name bundles use for it ("cpu").
  virtual const char *name() const = 0;
  /// Checks the bundle's `requires` lines (Requirements.h) before any of
  /// its code is loaded; fails naming what this machine lacks.
  virtual Status checkRequirements(const uint8_t *data, size_t size,
                                   const std::string &source) = 0;
  /// Allocates `bytes` zero-filled bytes of device memory (an empty buffer
  /// for 0).
  virtual Status allocate(uint64_t bytes,
                          std::unique_ptr<DeviceBuffer> &out) = 0;
  /// Copies `bytes` bytes; host pointers are ordinary memory.
  virtual Status copy(void *dst, const void *src, uint64_t bytes,
                      CopyKind kind) = 0;
  /// Loads the device's kernel payload (the bytes of the section its
  /// program entry names); `source` names it in messages.
  virtual Status loadKernels(const uint8_t *data, size_t size,
                             const std::string &source) = 0;
  /// Validates `step` (counts, dtypes, dims, attributes, aliasing) and
  /// prepares its executor. Messages read "bundle '<source>': <kind> step
  /// '<name>': <what is wrong>".
  virtual Status createStep(const StepBuildContext &context,
                            const PlanStep &step,
                            std::unique_ptr<StepExecutor> &out) = 0;
  /// Returns when every step run so far has finished.
  virtual Status synchronize() = 0;

  //===--------------------------------------------------------------------===//
  // Recorded runs (CUDA graphs). A device whose steps only enqueue work can
  // record what a run's steps enqueue and replay it as one launch; the
  // session records an entry once the same executors have run eagerly once
  // (docs/architecture.md, "Recorded runs"). Everything a recorded step
  // reads or writes must then stay at the same address: inputs go through
  // host staging from allocateHost, the host's arena comes from it too.
  //===--------------------------------------------------------------------===//

  /// True when beginCapture/endCapture/replay work.
  virtual bool canCapture() const { return false; }
  /// From now on the steps' work is recorded instead of run.
  virtual Status beginCapture();
  /// Stops recording and returns what was recorded; after a failed step,
  /// the session still calls it (and drops the result) to leave capture.
  virtual Status endCapture(std::unique_ptr<CapturedRun> &out);
  /// Enqueues a recorded run.
  virtual Status replay(const CapturedRun &run);
  /// Host memory this device copies to and from without an intermediate
  /// (pinned pages), zero-filled; ordinary host memory by default.
  virtual Status allocateHost(uint64_t bytes,
                              std::unique_ptr<DeviceBuffer> &out);

  /// True when steps only enqueue work that the device runs later (a GPU):
  /// a profile then times them with the device's timers (recordTimer), as
  /// the host clock only sees the enqueueing.
  virtual bool asynchronous() const { return false; }
  /// Asynchronous devices: records timer `index` in the device's queue
  /// (created on first use, then reused).
  virtual Status recordTimer(size_t index);
  /// After synchronize(): the seconds between timers `from` and `to`.
  virtual Status timerSeconds(size_t from, size_t to, double &seconds);
};

/// Creates the device named `name`. Fails with Unsupported naming the
/// devices this runtime has, or naming what is missing on this machine
/// (a driver, a library).
Status createDevice(std::string_view name, const DeviceOptions &options,
                    std::unique_ptr<Device> &out);

/// The device names createDevice knows, whether or not this machine has
/// the hardware.
std::vector<std::string> knownDevices();

/// Copies the state view `dims` of a state laid out with `capacity` dims
/// (row-major) at `state` to the dense tensor at `dense`, or, with
/// `toState`, the other way; host memory, `elementSize` bytes per element.
/// A view is a prefix along every axis: element (i0, ..., in) of the view
/// is element (i0, ..., in) of the state.
void copyStateView(void *dense, void *state, const std::vector<int64_t> &dims,
                   const std::vector<int64_t> &capacity, size_t elementSize,
                   bool toState);

/// How a state view of `dims` (no dim 0) lies in its state of `capacity`
/// dims, row-major with `elementSize`-byte elements: the innermost axes the
/// view spans whole, and the next axis' prefix, are one contiguous run of
/// `run` bytes, once per index of the axes [0, outer).
struct StateViewRuns {
  /// The state's byte strides, per axis.
  std::vector<uint64_t> stride;
  size_t outer = 0;
  uint64_t run = 0;
};
StateViewRuns stateViewRuns(const std::vector<int64_t> &dims,
                            const std::vector<int64_t> &capacity,
                            size_t elementSize);

/// True when the view `dims` of a state with `capacity` dims is one dense
/// block at the state's start: it differs from the capacity in the first
/// axis at most (or holds no element).
bool isDenseStateView(const std::vector<int64_t> &dims,
                      const std::vector<int64_t> &capacity);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_DEVICE_H
