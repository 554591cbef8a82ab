#!/usr/bin/env python3
"""Structured pruning, side by side in one run: the unpruned lmopt bundle,
the pruned one (--prune), optionally the pruned one quantized, and
onnxruntime on the unpruned model; bundle and weight sizes and latency
(p50 of lmopt-run --bench / bench/ort_run.py, rounds interleaved), with
ratios.

With --sparsity N:M (2:4) two more variants: the unpruned model and the
pruned one with every linear N:M-sparse (stored compressed; on the CPU the
session runs the expanded dense weights, so only the size changes).

usage: bench/compare_prune.py [--model bert_base] [--batch 1]
           [--prune ffn=0.5,heads=0.5] [--quantize int8-dynamic]
           [--sparsity 2:4] [--threads 2] [--rounds 3] [--runs 20]
needs: bench/make_models.py --only bert_base (bench/models, not in git)
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ort import MODELS, ROOT, lmopt_p50, run_measured  # noqa: E402

WEIGHTS = "weights: "


def compile_bundle(args, onnx_path, inputs, out, extra):
    with np.load(inputs) as data:
        shapes = [f"--input-shape={n}:{'x'.join(map(str, data[n].shape))}"
                  for n in data.files]
    _, log, _ = run_measured(
        [os.path.join(args.build, "bin", "lmopt-compile"), onnx_path, *shapes,
         *extra, "-o", out])
    weights = next(int(line.split()[1]) for line in log.splitlines()
                   if line.startswith(WEIGHTS))
    return {"bundle_bytes": os.path.getsize(out), "weights_bytes": weights}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="bert_base")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--prune", default="ffn=0.5,heads=0.5")
    parser.add_argument("--quantize", default="int8-dynamic",
                        help="also the pruned bundle in this mode ('' for none)")
    parser.add_argument("--sparsity", default="",
                        help="also N:M-sparse variants ('2:4'; '' for none)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()

    onnx_path = os.path.join(MODELS, f"{args.model}.onnx")
    inputs = os.path.join(MODELS, f"{args.model}.b{args.batch}.inputs.npz")
    if not os.path.exists(onnx_path) or not os.path.exists(inputs):
        sys.exit(f"error: {onnx_path} or {inputs} missing; run "
                 f"bench/make_models.py --only {args.model}")
    work = tempfile.mkdtemp(prefix="lmopt-prune-")
    variants = {"lmopt fp32": [], "lmopt pruned fp32": [f"--prune={args.prune}"]}
    if args.quantize:
        variants[f"lmopt pruned {args.quantize}"] = [
            f"--prune={args.prune}", f"--quantize={args.quantize}"]
    if args.sparsity:
        variants[f"lmopt {args.sparsity} fp32"] = [
            f"--prune=sparsity={args.sparsity}"]
        variants[f"lmopt pruned {args.sparsity} fp32"] = [
            f"--prune={args.prune},sparsity={args.sparsity}"]
    sizes, times = {}, {name: [] for name in [*variants, "onnxruntime fp32"]}
    for i, (name, extra) in enumerate(variants.items()):
        path = os.path.join(work, f"v{i}.lmopt")
        sizes[name] = compile_bundle(args, onnx_path, inputs, path, extra)
        sizes[name]["path"] = path
    for _ in range(args.rounds):
        for name in variants:
            out, _, _ = run_measured(
                [os.path.join(args.build, "bin", "lmopt-run"),
                 sizes[name]["path"], "--inputs", inputs, "--threads",
                 str(args.threads), "--bench", str(args.runs)])
            times[name].append(lmopt_p50(out))
        out, _, _ = run_measured(
            [sys.executable, os.path.join(ROOT, "bench", "ort_run.py"),
             onnx_path, inputs, "--threads", str(args.threads), "--runs",
             str(args.runs)])
        times["onnxruntime fp32"].append(statistics.median(
            json.loads(out.strip().splitlines()[-1])["latencies_ms"]))

    base = statistics.median(times["lmopt fp32"])
    ort = statistics.median(times["onnxruntime fp32"])
    full = sizes["lmopt fp32"]
    print(f"{args.model}, batch {args.batch} x 128, {args.threads} threads, "
          f"--prune={args.prune}, p50 over {args.rounds} interleaved rounds "
          f"of {args.runs} runs")
    print("| variant | bundle MB | x unpruned | p50 ms | x unpruned | x onnxruntime |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, samples in times.items():
        ms = statistics.median(samples)
        size = sizes.get(name, {}).get("bundle_bytes")
        size_text = (f"{size / 1e6:.1f} | {size / full['bundle_bytes']:.2f}"
                     if size else "- | -")
        print(f"| {name} | {size_text} | {ms:.1f} | {ms / base:.2f} | "
              f"{ms / ort:.2f} |")
    print("rounds (ms): " + "; ".join(
        f"{name} {', '.join(f'{t:.1f}' for t in samples)}"
        for name, samples in times.items()))


if __name__ == "__main__":
    main()
