//===- linear_step_bench.cpp - LinearStep throughput ----------------------===//
//
// GFLOP/s of the runtime's LinearStep at BERT-base shapes, packed weights
// (createPacked: static rows, weight reordered once) against plain ones
// (create: run-time rows, weight read in its stored layout), with
// dnnl_sgemm on the same product as a yardstick. The three run interleaved
// in one process (A, B, C, A, B, C, ..., the order rotating every round), so
// that a loaded machine slows them alike; each prints the median and the
// best of its rounds. Not built by CMake and not in CI; after building
// LmoptRuntime in build/ (bench_util.h is found next to this file):
//
//   c++ -O2 -std=c++17 -Iinclude bench/linear_step_bench.cpp
//   build/lib/libLmoptRuntime.a build/lib/libLmoptFormat.a -ldnnl -lz -lfmt
//   -fopenmp -o /tmp/linear_bench
//   /tmp/linear_bench [threads=2] [rounds=30] [transpose=0] [rows=128,1024]
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/LinearStep.h"

#include "bench_util.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <omp.h>
#include <string>
#include <vector>

using namespace lmopt::runtime;
using lmopt::bench::interleave;
using lmopt::bench::median;
using lmopt::bench::Variant;

namespace {

struct Shape {
  int64_t k, n;
  /// The epilogue BERT-base gives this product.
  const char *what;
  bool bias, residual;
  LinearActivation act;
};

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 30;
  bool transpose = argc > 3 && std::atoi(argv[3]) != 0;
  std::vector<int64_t> rowCounts;
  if (!lmopt::bench::parseRowCounts(argc > 4 ? argv[4] : "128,1024",
                                    rowCounts))
    return 1;
  std::unique_ptr<CpuContext> ctx = lmopt::bench::createContext(threads);
  if (!ctx)
    return 1;
  const Shape shapes[] = {
      {768, 768, "attn out", true, true, LinearActivation::None},
      {768, 2304, "qkv", true, false, LinearActivation::None},
      {768, 3072, "ffn in", true, false, LinearActivation::Gelu},
      {3072, 768, "ffn out", true, true, LinearActivation::None},
  };
  std::printf("threads %d, %d interleaved rounds, weight %s; GFLOP/s median "
              "/ best\n",
              threads, rounds, transpose ? "[N, K]" : "[K, N]");
  std::printf("%-6s %-5s %-5s %-28s %15s %15s %15s  %s\n", "M", "K", "N",
              "epilogue", "packed", "plain", "dnnl_sgemm",
              "impl packed | plain");
  for (int64_t m : rowCounts) {
    for (const Shape &s : shapes) {
      for (bool epilogue : {false, true}) {
        LinearStepDesc d;
        d.name = s.what;
        d.inputFeatures = s.k;
        d.weightShape = transpose ? std::vector<int64_t>{s.n, s.k}
                                  : std::vector<int64_t>{s.k, s.n};
        d.transposeWeight = transpose;
        d.hasBias = epilogue && s.bias;
        d.hasResidual = epilogue && s.residual;
        d.activation = epilogue ? s.act : LinearActivation::None;
        std::vector<float> x(size_t(m * s.k), 0.5f),
            w(size_t(s.k * s.n), 0.01f), b(size_t(s.n), 0.1f),
            r(size_t(m * s.n), 1.0f), y(size_t(m * s.n)), c(size_t(m * s.n));
        std::unique_ptr<LinearStep> packed, plain;
        Status st = LinearStep::createPacked(*ctx, d, m, w.data(), packed);
        if (st)
          st = LinearStep::create(*ctx, d, m, plain);
        if (!st) {
          std::fprintf(stderr, "%s\n", st.toString().c_str());
          return 1;
        }
        auto stepRun = [&](const LinearStep &step) {
          return [&, stepPtr = &step] {
            st = stepPtr->run(x.data(), m, w.data(),
                              d.hasBias ? b.data() : nullptr,
                              d.hasResidual ? r.data() : nullptr, y.data());
            return bool(st);
          };
        };
        std::vector<Variant> variants = {
            {"packed", stepRun(*packed), {}},
            {"plain", stepRun(*plain), {}},
            {"dnnl_sgemm",
             [&] {
               // dnnl_sgemm follows the caller's OpenMP thread count.
               omp_set_num_threads(threads);
               return dnnl_sgemm('N', transpose ? 'T' : 'N', m, s.n, s.k, 1.0f,
                                 x.data(), s.k, w.data(), transpose ? s.k : s.n,
                                 0.0f, c.data(), s.n) == dnnl_success;
             },
             {}},
        };
        if (!interleave(variants, rounds)) {
          std::fprintf(stderr, "%s\n", st.toString().c_str());
          return 1;
        }
        double flop = 2.0 * double(m) * double(s.n) * double(s.k);
        std::string what =
            epilogue ? std::string(s.what) + ":" + (d.hasBias ? " bias" : "") +
                           (d.activation != LinearActivation::None
                                ? std::string(" ") +
                                      linearActivationName(d.activation)
                                : "") +
                           (d.hasResidual ? " residual" : "")
                     : "none";
        std::printf("%-6ld %-5ld %-5ld %-28s", long(m), long(s.k), long(s.n),
                    what.c_str());
        for (const Variant &v : variants) {
          double best = *std::min_element(v.seconds.begin(), v.seconds.end());
          char cell[32];
          std::snprintf(cell, sizeof(cell), "%.0f / %.0f",
                        flop / median(v.seconds) / 1e9, flop / best / 1e9);
          std::printf(" %15s", cell);
        }
        std::printf("  %s | %s\n", packed->implementation().c_str(),
                    plain->implementation().c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
