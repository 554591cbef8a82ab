//===- bench_util.h - Helpers shared by the step benchmarks -----*- C++ -*-===//
//
// Header-only, found next to the including file, so each benchmark still
// builds with its one-line command.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_BENCH_BENCH_UTIL_H
#define LMOPT_BENCH_BENCH_UTIL_H

#include "lmopt/Runtime/CPU/LinearStep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

namespace lmopt::bench {

/// Best time of `repeats` runs of `fn` after 3 warm-up runs; -1 on failure.
template <typename Fn> inline double bestOf(int repeats, Fn fn) {
  double best = 1e30;
  for (int i = 0; i < repeats + 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (!fn())
      return -1;
    auto t1 = std::chrono::steady_clock::now();
    if (i >= 3)
      best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

/// A context with `threads` threads; null, with the reason on stderr, on
/// failure.
inline std::unique_ptr<runtime::CpuContext> createContext(int threads) {
  std::unique_ptr<runtime::CpuContext> ctx;
  if (runtime::Status st = runtime::CpuContext::create({threads}, ctx); !st) {
    std::fprintf(stderr, "%s\n", st.toString().c_str());
    return nullptr;
  }
  return ctx;
}

} // namespace lmopt::bench

#endif // LMOPT_BENCH_BENCH_UTIL_H
