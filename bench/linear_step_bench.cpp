//===- linear_step_bench.cpp - LinearStep throughput ----------------------===//
//
// GFLOP/s of the runtime's LinearStep at BERT-base shapes, to compare with
// the dnnl_sgemm figures in TOOLCHAIN.md. Not built by CMake and not in CI;
// after building LmoptRuntime in build/ (bench_util.h is found next to
// this file):
//
//   c++ -O2 -std=c++17 -Iinclude bench/linear_step_bench.cpp
//       build/lib/libLmoptRuntime.a -ldnnl -lz -fopenmp -o /tmp/linear_bench
//   (one command line)
//   /tmp/linear_bench [threads=2] [repeats=20]
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/LinearStep.h"

#include "bench_util.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <omp.h>
#include <vector>

using namespace lmopt::runtime;
using lmopt::bench::bestOf;

namespace {
struct Shape {
  const char *what;
  int64_t m, n, k;
  bool bias, residual;
  LinearActivation act;
};
} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  std::unique_ptr<CpuContext> ctx = lmopt::bench::createContext(threads);
  if (!ctx)
    return 1;
  const Shape shapes[] = {
      {"plain", 128, 768, 768, false, false, LinearActivation::None},
      {"attn out: bias+residual", 128, 768, 768, true, true,
       LinearActivation::None},
      {"plain", 128, 3072, 768, false, false, LinearActivation::None},
      {"ffn in: bias+gelu", 128, 3072, 768, true, false,
       LinearActivation::Gelu},
      {"plain", 128, 768, 3072, false, false, LinearActivation::None},
      {"ffn out: bias+residual", 128, 768, 3072, true, true,
       LinearActivation::None},
  };
  std::printf("threads %d, best of %d\n%-26s %-16s %9s %9s  %s\n", threads,
              repeats, "step", "M x N x K", "ms", "GFLOP/s", "oneDNN impl");
  for (const Shape &s : shapes) {
    for (bool transpose : {false, true}) {
      LinearStepDesc d;
      d.name = s.what;
      d.inputFeatures = s.k;
      d.weightShape = transpose ? std::vector<int64_t>{s.n, s.k}
                                : std::vector<int64_t>{s.k, s.n};
      d.transposeWeight = transpose;
      d.hasBias = s.bias;
      d.hasResidual = s.residual;
      d.activation = s.act;
      std::unique_ptr<LinearStep> step;
      if (Status st = LinearStep::create(*ctx, d, s.m, step); !st) {
        std::fprintf(stderr, "%s\n", st.toString().c_str());
        return 1;
      }
      std::vector<float> x(size_t(s.m * s.k), 0.5f),
          w(size_t(s.k * s.n), 0.01f), b(size_t(s.n), 0.1f),
          r(size_t(s.m * s.n), 1.0f), y(size_t(s.m * s.n));
      Status st;
      double best = bestOf(repeats, [&] {
        st = step->run(x.data(), s.m, w.data(), s.bias ? b.data() : nullptr,
                       s.residual ? r.data() : nullptr, y.data());
        return bool(st);
      });
      if (!st) {
        std::fprintf(stderr, "%s\n", st.toString().c_str());
        return 1;
      }
      double gflops =
          2.0 * double(s.m) * double(s.n) * double(s.k) / best / 1e9;
      char dims[48];
      std::snprintf(dims, sizeof(dims), "%ldx%ldx%ld%s", long(s.m), long(s.n),
                    long(s.k), transpose ? " (W^T)" : "");
      std::printf("%-26s %-16s %9.3f %9.1f  %s\n", s.what, dims, best * 1e3,
                  gflops, step->implementation().c_str());
    }
  }
  // The same products through dnnl_sgemm, as TOOLCHAIN.md measured them
  // (dnnl_sgemm follows the OpenMP thread count of the caller).
  omp_set_num_threads(threads);
  for (const Shape &s : shapes) {
    if (s.bias)
      continue;
    std::vector<float> a(size_t(s.m * s.k), 0.5f), w(size_t(s.k * s.n), 0.01f),
        c(size_t(s.m * s.n));
    double best = bestOf(repeats, [&] {
      return dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, w.data(),
                        s.n, 0.0f, c.data(), s.n) == dnnl_success;
    });
    char dims[48];
    std::snprintf(dims, sizeof(dims), "%ldx%ldx%ld", long(s.m), long(s.n),
                  long(s.k));
    std::printf("%-26s %-16s %9.3f %9.1f\n", "dnnl_sgemm", dims, best * 1e3,
                2.0 * double(s.m) * double(s.n) * double(s.k) / best / 1e9);
  }
  return 0;
}
