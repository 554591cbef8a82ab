//===- attention_step_bench.cpp - AttentionStep throughput ----------------===//
//
// GFLOP/s of the runtime's AttentionStep at BERT-base and GPT-2 shapes
// (12 heads, head dim 64, sequence 128), counting the two matrix products
// (4 B H Sq Sk D flops), in the same run the step reading Q, K and V as
// views of one fused QKV buffer [B, S, 3 H D] (as the plan binds a fused
// projection's output), and the two dnnl_sgemm calls per (batch, head)
// alone, spread over the same threads: the difference is the softmax and
// the step's overhead; and the step with bf16 products on AMX tiles
// (AttentionStepDesc::bf16Products; 0 where the CPU has no AMX-BF16). Not
// built by CMake and not in CI; after
// building LmoptRuntime in build/:
//
//   c++ -O2 -std=c++17 -Iinclude bench/attention_step_bench.cpp
//       build/lib/libLmoptRuntime.a build/lib/libLmoptFormat.a -ldnnl -lz -lfmt
//       -fopenmp -o /tmp/attention_bench
//   (one command line)
//   /tmp/attention_bench [threads=2] [repeats=30]
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/AttentionStep.h"

#include "bench_util.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

using namespace lmopt::runtime;
using lmopt::bench::bestOf;

namespace {
struct Shape {
  const char *label;
  int64_t batch, heads, seq, dim;
  bool causal;
};
} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 30;
  std::unique_ptr<CpuContext> ctx = lmopt::bench::createContext(threads);
  if (!ctx)
    return 1;
  const Shape shapes[] = {
      {"BERT padding mask", 1, 12, 128, 64, false},
      {"BERT padding mask", 8, 12, 128, 64, false},
      {"GPT-2 causal", 1, 12, 128, 64, true},
      {"GPT-2 causal", 8, 12, 128, 64, true},
      {"BERT padding mask", 1, 12, 512, 64, false},
  };
  std::printf("threads %d, best of %d\n", threads, repeats);
  for (const Shape &s : shapes) {
    AttentionStepDesc d;
    d.name = "bench";
    d.batch = s.batch;
    d.numHeads = s.heads;
    d.queryLength = s.seq;
    d.keyLength = s.seq;
    d.headDim = s.dim;
    d.scale = 0.125f;
    d.causal = s.causal;
    if (!s.causal) {
      d.mask = AttentionMask::Additive;
      d.maskDims = {s.batch, 1, 1, s.seq};
    }
    std::unique_ptr<AttentionStep> step;
    if (Status st = AttentionStep::create(*ctx, d, step); !st) {
      std::fprintf(stderr, "%s\n", st.toString().c_str());
      return 1;
    }
    size_t n = size_t(s.batch * s.seq * s.heads * s.dim);
    std::vector<float> q(n), k(n), v(n), out(n);
    for (size_t i = 0; i < n; ++i) {
      q[i] = float(i % 17) * 0.05f - 0.4f;
      k[i] = float(i % 13) * 0.06f - 0.36f;
      v[i] = float(i % 11) * 0.1f - 0.5f;
    }
    std::vector<float> mask(size_t(s.batch * s.seq), 0.0f);
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t j = s.seq - 8 * b; j < s.seq; ++j)
        mask[size_t(b * s.seq + std::max<int64_t>(j, 0))] = -10000.0f;
    double t = bestOf(repeats, [&] {
      return bool(step->run(q.data(), k.data(), v.data(),
                            s.causal ? nullptr : mask.data(), out.data()));
    });
    // The same step with bf16 products on AMX tiles (--quantize=bf16),
    // where the CPU has them.
    AttentionStepDesc bf16Desc = d;
    bf16Desc.bf16Products = true;
    std::unique_ptr<AttentionStep> bf16Step;
    if (Status st = AttentionStep::create(*ctx, bf16Desc, bf16Step); !st) {
      std::fprintf(stderr, "%s\n", st.toString().c_str());
      return 1;
    }
    double tb =
        bf16Step->usesAmx()
            ? bestOf(repeats,
                     [&] {
                       return bool(bf16Step->run(
                           q.data(), k.data(), v.data(),
                           s.causal ? nullptr : mask.data(), out.data()));
                     })
            : 0.0;
    // The same inputs as views of one [B, S, 3 H D] buffer.
    int64_t width = s.heads * s.dim, rows = s.batch * s.seq;
    AttentionStepDesc viewDesc = d;
    viewDesc.queryView = {0, 3 * width};
    viewDesc.keyView = {width, 3 * width};
    viewDesc.valueView = {2 * width, 3 * width};
    std::unique_ptr<AttentionStep> viewStep;
    if (Status st = AttentionStep::create(*ctx, viewDesc, viewStep); !st) {
      std::fprintf(stderr, "%s\n", st.toString().c_str());
      return 1;
    }
    std::vector<float> qkv(size_t(rows * 3 * width));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < width; ++j) {
        size_t from = size_t(r * width + j), to = size_t(r * 3 * width + j);
        qkv[to] = q[from];
        qkv[to + size_t(width)] = k[from];
        qkv[to + size_t(2 * width)] = v[from];
      }
    double tv = bestOf(repeats, [&] {
      return bool(viewStep->run(qkv.data(), qkv.data(), qkv.data(),
                                s.causal ? nullptr : mask.data(), out.data()));
    });
    // The same two products per (batch, head), nothing between them.
    int team = threads > 0 ? threads : omp_get_max_threads();
    int64_t pairs = s.batch * s.heads;
    std::vector<float> scratch(size_t(team * s.seq * s.seq));
    double g = bestOf(repeats, [&] {
      bool ok = true;
#pragma omp parallel num_threads(team) reduction(&& : ok)
      {
        omp_set_num_threads(1);
        float *sc = scratch.data() + omp_get_thread_num() * s.seq * s.seq;
#pragma omp for schedule(static)
        for (int64_t p = 0; p < pairs; ++p) {
          int64_t b = p / s.heads, h = p % s.heads;
          size_t off = size_t(b * s.seq * width + h * s.dim);
          ok = ok &&
               dnnl_sgemm('N', 'T', s.seq, s.seq, s.dim, 0.125f, q.data() + off,
                          width, k.data() + off, width, 0.0f, sc,
                          s.seq) == dnnl_success &&
               dnnl_sgemm('N', 'N', s.seq, s.dim, s.seq, 1.0f, sc, s.seq,
                          v.data() + off, width, 0.0f, out.data() + off,
                          width) == dnnl_success;
        }
      }
      return ok;
    });
    double flops =
        4.0 * double(s.batch * s.heads) * double(s.seq * s.seq) * double(s.dim);
    std::printf("%-18s B=%-2lld H=%lld S=%-3lld D=%lld: step %8.1f us "
                "%6.1f GFLOP/s | QKV views %8.1f us %6.1f GFLOP/s | GEMMs "
                "only %8.1f us %6.1f GFLOP/s | bf16 products %8.1f us "
                "%6.1f GFLOP/s\n",
                s.label, (long long)s.batch, (long long)s.heads,
                (long long)s.seq, (long long)s.dim, t * 1e6, flops / t * 1e-9,
                tv * 1e6, flops / tv * 1e-9, g * 1e6, flops / g * 1e-9,
                tb * 1e6, tb > 0 ? flops / tb * 1e-9 : 0.0);
  }
  return 0;
}
