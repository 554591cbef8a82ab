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
#include <functional>
#include <memory>
#include <string>
#include <vector>

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

struct Variant {
  std::string name;
  std::function<bool()> run;
  std::vector<double> seconds;
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// 3 warm-up rounds, then `rounds` timed ones; in round r the variants run
/// starting from variant r mod count. False when a run fails.
inline bool interleave(std::vector<Variant> &variants, int rounds) {
  size_t count = variants.size();
  for (int r = 0; r < rounds + 3; ++r)
    for (size_t i = 0; i < count; ++i) {
      Variant &v = variants[(size_t(r) + i) % count];
      auto t0 = std::chrono::steady_clock::now();
      if (!v.run())
        return false;
      auto t1 = std::chrono::steady_clock::now();
      if (r >= 3)
        v.seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
  return true;
}

} // namespace lmopt::bench

#endif // LMOPT_BENCH_BENCH_UTIL_H
