//===- KernelLibrary.h - The bundle's generated kernels ---------*- C++ -*-===//
//
// A bundle's `kernels` section is a shared object holding the generated
// kernels. KernelLibrary loads those bytes without leaving a file behind (an
// anonymous memfd, or a temporary file unlinked as soon as it is loaded) and
// resolves entry points by name. Each library is loaded RTLD_LOCAL, so two
// sessions of the same bundle, or of two bundles exporting the same names, keep
// their own kernels.
//
// Loading runs the shared object's initializers: a bundle's kernels are native
// code, so only bundles from a trusted compiler should be run.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_KERNELLIBRARY_H
#define LMOPT_RUNTIME_CPU_KERNELLIBRARY_H

#include "lmopt/Format/Status.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lmopt::runtime {

/// A generated kernel: `args` holds the operands' then the results' data
/// pointers (include/lmopt/Target/CPU/KernelCodegen.h).
using KernelFunction = void (*)(void **args);

/// A kernel's share of its rows: the same `args`, and which of `parts` equal
/// shares of the row loop to run (the parts together do what the kernel
/// does; they may run at the same time on different threads).
using KernelPartFunction = void (*)(void **args, int64_t part, int64_t parts);

/// Helper threads that run a partitioned kernel's shares together with the
/// calling thread. Each call takes shares from a counter, so the caller
/// never waits for a helper that has not started: on a busy machine it runs
/// the remaining shares itself and waits only for shares already running
/// (an OpenMP team would wait at its barrier for every thread to be
/// scheduled). Helpers sleep between calls. One caller at a time.
class KernelTeam {
public:
  /// `helpers` threads besides the caller.
  explicit KernelTeam(int helpers);
  KernelTeam(const KernelTeam &) = delete;
  KernelTeam &operator=(const KernelTeam &) = delete;
  ~KernelTeam();

  /// Runs `part(args, p, parts)` for every p in [0, parts), on the caller
  /// and whichever helpers start in time; returns when all have finished.
  void run(KernelPartFunction part, void **args, int64_t parts);

  /// The caller plus the helpers.
  int size() const { return int(threads_.size()) + 1; }

private:
  struct Job;
  void helperLoop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<Job> job_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

class KernelLibrary {
public:
  KernelLibrary(const KernelLibrary &) = delete;
  KernelLibrary &operator=(const KernelLibrary &) = delete;
  /// Unloads the shared object; no function it handed out may run after.
  ~KernelLibrary();

  /// Loads `size` bytes of a shared object. `source` names where the bytes
  /// come from in messages ("kernels section of 'm.lmopt'"). The bytes are
  /// copied; they need not outlive the call. `allowMemfd` false goes
  /// straight to the temporary-file fallback (for tests).
  static Status load(const uint8_t *data, size_t size,
                     const std::string &source,
                     std::unique_ptr<KernelLibrary> &out,
                     bool allowMemfd = true);

  /// Resolves `entry`; fails with a message naming it when the library does
  /// not export it.
  Status lookup(const std::string &entry, KernelFunction &out) const;

  /// The partitioned form of `entry` (`__lmopt_part_<entry>`), or null when
  /// the kernel has none (its rows are not one independent loop).
  KernelPartFunction lookupPartitioned(const std::string &entry) const;

  /// The team that runs this library's partitioned kernels on `threads`
  /// threads (the session's), created on first use; null for one thread.
  KernelTeam *team(int threads) const;

  /// How the bytes were loaded: "memfd" or "temporary file".
  const char *loadedFrom() const { return loadedFrom_; }

private:
  KernelLibrary() = default;

  std::string source_;
  void *handle_ = nullptr;
  /// The memfd stays open while the library is loaded, so that its
  /// /proc/self/fd name cannot be reused by another library meanwhile.
  int fd_ = -1;
  const char *loadedFrom_ = "";
  mutable std::mutex teamMutex_;
  mutable std::unique_ptr<KernelTeam> team_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_KERNELLIBRARY_H
