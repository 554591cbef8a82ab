//===- FuzzUtil.h - Shared helpers of the runtime fuzz targets --*- C++ -*-===//
//
// The bundle, .npz and token dataset readers take a path (they map the
// file), so each input goes to a file of the process's own, rewritten for
// every input. A broken invariant aborts, which libFuzzer reports as a
// crash with the input that caused it.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOOLS_FUZZ_RUNTIME_FUZZUTIL_H
#define LMOPT_TOOLS_FUZZ_RUNTIME_FUZZUTIL_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace lmopt::fuzz {

/// Writes `size` bytes to a file named after the process id and `suffix` in
/// $TMPDIR (or /tmp), removed at exit, and returns its path. Aborts when the
/// file cannot be written: the fuzzer would otherwise test nothing.
std::string writeInputFile(const uint8_t *data, size_t size,
                           const char *suffix);

/// Prints `what` and aborts unless `ok`.
void check(bool ok, const char *what);

} // namespace lmopt::fuzz

#endif // LMOPT_TOOLS_FUZZ_RUNTIME_FUZZUTIL_H
