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

#include "lmopt/Runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace lmopt::runtime {

/// A generated kernel: `args` holds the operands' then the results' data
/// pointers (include/lmopt/Target/CPU/KernelCodegen.h).
using KernelFunction = void (*)(void **args);

/// A kernel's share of its rows: the same `args`, and which of `parts` equal
/// shares of the row loop to run (the parts together do what the kernel
/// does; they may run at the same time on different threads).
using KernelPartFunction = void (*)(void **args, int64_t part, int64_t parts);

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
