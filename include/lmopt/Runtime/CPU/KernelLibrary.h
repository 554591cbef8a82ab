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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// A generated kernel: `args` holds the operands' then the results' data
/// pointers (include/lmopt/Target/CPU/KernelCodegen.h).
using KernelFunction = void (*)(void **args);

/// A kernel's share of its rows: the same `args`, and which of `parts` equal
/// shares of the row loop to run (the parts together do what the kernel
/// does; they may run at the same time on different threads).
using KernelPartFunction = void (*)(void **args, int64_t part, int64_t parts);

/// Runs a partitioned kernel's shares on an OpenMP team of the session's
/// thread count: the team the library steps' products use, whose workers
/// are still spinning when the kernel that follows a product starts (a team
/// of its own, woken through a condition variable, found the core taken by
/// those spinning workers: BERT-base's bf16 layer norms at batch 8 took
/// 0.52-0.55 ms instead of about 0.3). The threads take shares from a
/// counter, so the caller never waits for another thread's shares unless
/// that thread has started them: a thread scheduled late finds none left,
/// and the caller waits only for it to arrive at the region's end.
class KernelTeam {
public:
  /// `threads` (2 or more) threads, the caller included.
  explicit KernelTeam(int threads) : threads_(threads) {}

  /// Runs `part(args, p, parts)` for every p in [0, parts), on the caller
  /// and whichever team threads start in time; returns when all have
  /// finished. Callers on different threads each get their own team.
  void run(KernelPartFunction part, void **args, int64_t parts) const;

  /// The threads, the caller included.
  int size() const { return threads_; }

private:
  int threads_;
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
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_KERNELLIBRARY_H
