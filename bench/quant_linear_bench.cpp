//===- quant_linear_bench.cpp - Low-bit linear steps against f32 ----------===//
//
// Milliseconds per call of the runtime's f32 LinearStep (packed weights)
// and of QuantLinearStep in every mode, at BERT-base shapes with their
// epilogues, interleaved in one process (A, B, C, ..., the order rotating
// every round) so that a loaded machine slows them alike; prints each
// variant's median and its speedup over f32 (f32 median / variant median).
// Not built by CMake and not in CI; after building LmoptRuntime in build/:
//
//   c++ -O2 -std=c++17 -Iinclude bench/quant_linear_bench.cpp
//   build/lib/libLmoptRuntime.a build/lib/libLmoptFormat.a -ldnnl -lz -lfmt
//   -fopenmp -o /tmp/quant_bench
//   /tmp/quant_bench [threads=2] [rounds=20] [rows=128,1024] [clock=wall]
//
// clock=cpu times each call by the process's CPU time instead of the wall
// clock: on a machine other jobs load, a one-thread run then counts only
// the cycles the call itself got (cache disturbance by the other jobs
// remains). With several threads it also counts OpenMP's spinning, so use
// it with threads=1.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/LinearStep.h"
#include "lmopt/Runtime/CPU/QuantLinearStep.h"

#include "bench_util.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

using namespace lmopt::runtime;
using lmopt::bench::interleave;
using lmopt::bench::median;
using lmopt::bench::Variant;

namespace {

struct Shape {
  int64_t k, n;
  const char *what;
  bool residual;
  LinearActivation act;
};

/// bench::interleave with the process's CPU time as the clock.
bool interleaveCpu(std::vector<Variant> &variants, int rounds) {
  auto now = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  };
  size_t count = variants.size();
  for (int r = 0; r < rounds + 3; ++r)
    for (size_t i = 0; i < count; ++i) {
      Variant &v = variants[(size_t(r) + i) % count];
      double t0 = now();
      if (!v.run())
        return false;
      double t1 = now();
      if (r >= 3)
        v.seconds.push_back(t1 - t0);
    }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  std::vector<int64_t> rowCounts;
  if (!lmopt::bench::parseRowCounts(argc > 3 ? argv[3] : "128,1024",
                                    rowCounts))
    return 1;
  bool cpuClock = argc > 4 && std::strcmp(argv[4], "clock=cpu") == 0;
  std::unique_ptr<CpuContext> ctx = lmopt::bench::createContext(threads);
  if (!ctx)
    return 1;
  // Every BERT-base linear has a bias; weights stored [N, K] as ONNX
  // exporters and the quantize pass leave them.
  const Shape shapes[] = {
      {768, 768, "attn out +res", true, LinearActivation::None},
      {768, 2304, "qkv", false, LinearActivation::None},
      {768, 3072, "ffn in gelu", false, LinearActivation::Gelu},
      {3072, 768, "ffn out +res", true, LinearActivation::None},
  };
  const QuantLinearMode modes[] = {QuantLinearMode::Int8DynamicPerToken,
                                   QuantLinearMode::Int8DynamicPerTensor,
                                   QuantLinearMode::Int8Static,
                                   QuantLinearMode::BF16,
                                   QuantLinearMode::Int4WeightOnly,
                                   QuantLinearMode::FP16};
  const char *shortName[] = {"",     "i8tok",   "i8tensor", "i8static",
                             "bf16", "int4b32", "fp16"};
  std::printf("threads %d, %d interleaved rounds, %s clock; ms median "
              "(speedup over f32)\n",
              threads, rounds, cpuClock ? "process CPU" : "wall");
  std::printf("%-5s %-5s %-5s %-14s %9s", "M", "K", "N", "linear", "f32");
  for (QuantLinearMode mode : modes)
    std::printf(" %17s", shortName[int(mode)]);
  std::printf("\n");
  std::vector<std::string> impls;
  for (int64_t m : rowCounts)
    for (const Shape &s : shapes) {
      std::vector<float> x(size_t(m * s.k)), w(size_t(s.k * s.n), 0.01f),
          b(size_t(s.n), 0.1f), r(size_t(m * s.n), 1.0f),
          y(size_t(m * s.n));
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = float(int(i % 23) - 11) * 0.1f;
      std::vector<int8_t> w8(size_t(s.k * s.n), 3);
      std::vector<uint8_t> w4(size_t(s.n * s.k / 2), 0x5A), xq(x.size(), 130);
      std::vector<uint16_t> wbf(size_t(s.k * s.n), 0x3C00),
          xbf(x.size(), 0x3F00), wf16(size_t(s.k * s.n), 0x2000),
          xf16(x.size(), 0x3800);
      std::vector<float> scales(size_t(s.n * (s.k / 32)), 0.01f);

      LinearStepDesc fd;
      fd.name = s.what;
      fd.inputFeatures = s.k;
      fd.weightShape = {s.n, s.k};
      fd.transposeWeight = true;
      fd.hasBias = true;
      fd.hasResidual = s.residual;
      fd.activation = s.act;
      std::unique_ptr<LinearStep> f32;
      Status st = LinearStep::createPacked(*ctx, fd, m, w.data(), f32);
      if (!st) {
        std::fprintf(stderr, "%s\n", st.toString().c_str());
        return 1;
      }
      const float *res = s.residual ? r.data() : nullptr;
      std::vector<Variant> variants;
      variants.push_back({"f32",
                          [&] {
                            st = f32->run(x.data(), m, nullptr, b.data(), res,
                                          y.data());
                            return bool(st);
                          },
                          {}});
      std::vector<std::unique_ptr<QuantLinearStep>> steps;
      std::string implLine = f32->implementation();
      for (QuantLinearMode mode : modes) {
        QuantLinearStepDesc d;
        d.name = s.what;
        d.mode = mode;
        d.inputFeatures = s.k;
        d.outputFeatures = s.n;
        d.transposeWeight = true;
        d.hasBias = true;
        d.hasResidual = s.residual;
        d.activation = s.act;
        d.blockSize = 32;
        d.inputScale = 0.05f;
        d.inputZeroPoint = 128;
        QuantLinearWeights qw;
        qw.weight = mode == QuantLinearMode::BF16   ? (void *)wbf.data()
                    : mode == QuantLinearMode::FP16 ? (void *)wf16.data()
                    : mode == QuantLinearMode::Int4WeightOnly
                        ? (void *)w4.data()
                        : (void *)w8.data();
        qw.scales = scales.data();
        std::unique_ptr<QuantLinearStep> step;
        if (Status cs = QuantLinearStep::create(*ctx, d, m, qw, step); !cs) {
          std::fprintf(stderr, "%s\n", cs.toString().c_str());
          return 1;
        }
        const void *in = mode == QuantLinearMode::BF16   ? (void *)xbf.data()
                         : mode == QuantLinearMode::FP16 ? (void *)xf16.data()
                         : mode == QuantLinearMode::Int8Static
                             ? (void *)xq.data()
                             : (void *)x.data();
        QuantLinearStep *raw = step.get();
        variants.push_back({quantLinearModeName(mode),
                            [&, raw, in] {
                              st = raw->run(in, b.data(), res, y.data());
                              return bool(st);
                            },
                            {}});
        implLine += std::string(" | ") + step->implementation();
        steps.push_back(std::move(step));
      }
      if (!(cpuClock ? interleaveCpu(variants, rounds)
                     : interleave(variants, rounds))) {
        std::fprintf(stderr, "%s\n", st.toString().c_str());
        return 1;
      }
      double base = median(variants[0].seconds);
      std::printf("%-5ld %-5ld %-5ld %-14s %9.3f", long(m), long(s.k),
                  long(s.n), s.what, base * 1e3);
      for (size_t i = 1; i < variants.size(); ++i) {
        double t = median(variants[i].seconds);
        char cell[32];
        std::snprintf(cell, sizeof(cell), "%.3f (%.2fx)", t * 1e3, base / t);
        std::printf(" %17s", cell);
      }
      std::printf("\n");
      std::fflush(stdout);
      impls.push_back(implLine);
    }
  std::printf("implementations (f32 | modes in column order), per row:\n");
  for (const std::string &line : impls)
    std::printf("  %s\n", line.c_str());
  return 0;
}
