#!/usr/bin/env python3
"""lmopt against onnxruntime on the same models, inputs and thread count.

For each model and batch: compiles the ONNX model with `lmopt-compile`
(shapes pinned to the inputs), then alternates rounds of `lmopt-run --bench`
and `bench/ort_run.py` (onnxruntime, all graph optimizations) so that both
see the same machine state, and prints per engine the median latency over
the rounds' medians, the ratio lmopt / onnxruntime, the achieved matrix-product
GFLOP/s (and the fraction of the cores' FMA peak), peak RSS of each process,
and how far lmopt's outputs are from onnxruntime's.

Models come from bench/make_models.py (BERT-base, DistilBERT-base, GPT-2
small, sequence 128, batch 1 and 8).

With --max-shape BxS, each model is compiled with every input bounded by
`--max-shape name:BxS` (bounded dynamic shapes) instead of pinned to the
batch's shape, so the bundle is the same for every batch.

usage: bench/compare_ort.py [--models bert_base,distilbert_base,gpt2_small]
                            [--batches 1,8] [--threads 2] [--rounds 3]
                            [--runs 5] [--build build] [--peak-gflops 230]
                            [--max-shape 8x128]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "bench", "models")

# Matrix-product shape of each model: layers, hidden, FFN width (DeBERTa's
# relative-position products are left out of its count).
SHAPES = {"bert_base": (12, 768, 3072), "distilbert_base": (6, 768, 3072),
          "gpt2_small": (12, 768, 3072), "deberta_v3_base": (12, 768, 3072)}


def matmul_flops(name, batch, seq):
    layers, d, ffn = SHAPES[name]
    per_layer = 2 * seq * d * (4 * d + 2 * ffn) + 2 * 2 * seq * seq * d
    return batch * layers * per_layer


def run_measured(cmd):
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({proc.returncode}):\n{out}\n{err}")
    return out, err, usage.ru_maxrss


P50 = re.compile(r"latency p50 ([0-9.]+) ms")


def lmopt_p50(text):
    """lmopt-run --bench prints `latency p50 X ms, p90 ...` per invocation."""
    match = P50.search(text)
    if not match:
        sys.exit("error: no 'latency p50' line in lmopt-run's output:\n" + text)
    return float(match.group(1))


def compare(ref_path, got_path, rtol=1e-4, atol=1e-5):
    """numpy.allclose's rule: |got - ref| <= atol + rtol |ref|; reports the
    largest error as a fraction of what the rule allows."""
    worst_abs, worst_fraction = 0.0, 0.0
    with np.load(ref_path) as ref, np.load(got_path) as got:
        for name in ref.files:
            a = ref[name].astype(np.float64)
            b = got[name].astype(np.float64)
            if a.shape != b.shape:
                return f"{name}: shape {b.shape} vs {a.shape}"
            diff = np.abs(a - b)
            worst_abs = max(worst_abs, float(diff.max(initial=0)))
            worst_fraction = max(worst_fraction,
                                 float((diff / (atol + rtol * np.abs(a))).max(initial=0)))
    verdict = "within" if worst_fraction <= 1 else "OUTSIDE"
    return (f"max abs {worst_abs:.1e}; {verdict} rtol {rtol:g} + atol {atol:g} "
            f"({worst_fraction:.2f} of it)")


def bench_one(args, name, batch, work):
    onnx_path = os.path.join(MODELS, f"{name}.onnx")
    inputs = os.path.join(MODELS, f"{name}.b{batch}.inputs.npz")
    if not os.path.exists(onnx_path) or not os.path.exists(inputs):
        sys.exit(f"error: {onnx_path} or {inputs} missing; run bench/make_models.py")
    with np.load(inputs) as data:
        if args.max_shape:
            shapes = [f"--max-shape={n}:{args.max_shape}" for n in data.files]
        else:
            shapes = [f"--input-shape={n}:{'x'.join(map(str, data[n].shape))}"
                      for n in data.files]
    bundle = os.path.join(
        work, f"{name}.dyn.lmopt" if args.max_shape else f"{name}.b{batch}.lmopt")
    start = time.perf_counter()
    _, compile_log, compile_rss = run_measured(
        [os.path.join(args.build, "bin", "lmopt-compile"), onnx_path, *shapes,
         "-o", bundle])
    compile_s = time.perf_counter() - start

    lmopt_out = os.path.join(work, "lmopt.npz")
    ort_out = os.path.join(work, "ort.npz")
    lm, ox, lm_rss, ort_rss = [], [], 0, 0
    for _ in range(args.rounds):
        out, _, rss = run_measured(
            [os.path.join(args.build, "bin", "lmopt-run"), bundle, "--inputs", inputs,
             "--threads", str(args.threads), "--bench", str(args.runs),
             "--output", lmopt_out])
        lm.append(lmopt_p50(out))
        lm_rss = max(lm_rss, rss)
        out, _, rss = run_measured(
            [sys.executable, os.path.join(ROOT, "bench", "ort_run.py"), onnx_path,
             inputs, "--threads", str(args.threads), "--runs", str(args.runs),
             "--output", ort_out])
        ox.append(statistics.median(
            json.loads(out.strip().splitlines()[-1])["latencies_ms"]))
        ort_rss = max(ort_rss, rss)
    lm_ms, ort_ms = statistics.median(lm), statistics.median(ox)
    gflops = matmul_flops(name, batch, 128) / 1e9
    return {
        "model": name, "batch": batch, "lmopt_ms": lm_ms, "ort_ms": ort_ms,
        "ratio": lm_ms / ort_ms,
        "lmopt_gflops": gflops / (lm_ms / 1e3), "ort_gflops": gflops / (ort_ms / 1e3),
        "lmopt_rss_mib": lm_rss / 1024, "ort_rss_mib": ort_rss / 1024,
        "compile_s": compile_s, "compile_rss_mib": compile_rss / 1024,
        "agreement": compare(ort_out, lmopt_out),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="bert_base,distilbert_base,gpt2_small")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--max-shape", default="",
                        help="bound every input by BxS (one bundle per model) "
                             "instead of pinning it to each batch's shape")
    parser.add_argument("--peak-gflops", type=float, default=333.0,
                        help="FMA peak of the cores, for the fraction column "
                             "(default: 2 cores x 2.6 GHz x 64 FLOP/cycle, two "
                             "AVX-512 FMA units, the nominal clock of this "
                             "machine's Xeon; turbo clocks go above it)")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory(prefix="lmopt-bench-") as work:
        for name in args.models.split(","):
            for batch in (int(b) for b in args.batches.split(",")):
                row = bench_one(args, name, batch, work)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)

    if args.max_shape:
        print(f"inputs bounded by --max-shape {args.max_shape} (the same bundle for every batch)")
    print(f"threads {args.threads}, sequence 128, {args.rounds} rounds x "
          f"{args.runs} runs each, median of the rounds' medians; GFLOP/s of matrix products, "
          f"peak {args.peak_gflops:.0f}")
    print("| model | batch | lmopt ms | onnxruntime ms | ratio | lmopt GFLOP/s (of peak) "
          "| ORT GFLOP/s | lmopt RSS MiB | ORT RSS MiB | compile s (MiB) | lmopt vs ORT outputs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['batch']} | {r['lmopt_ms']:.1f} | {r['ort_ms']:.1f} "
              f"| {r['ratio']:.3f} | {r['lmopt_gflops']:.0f} "
              f"({r['lmopt_gflops'] / args.peak_gflops:.0%}) | {r['ort_gflops']:.0f} "
              f"| {r['lmopt_rss_mib']:.0f} | {r['ort_rss_mib']:.0f} "
              f"| {r['compile_s']:.1f} ({r['compile_rss_mib']:.0f}) | {r['agreement']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
