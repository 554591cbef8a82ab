#!/usr/bin/env python3
"""lmopt's quantized modes against lmopt f32 and onnxruntime's quantize_dynamic.

For one model and batch (bench/make_models.py's models): builds lmopt
bundles with `lmopt-opt --lmopt-optimize-pipeline --lmopt-quantize=mode=M`
then `lmopt-compile`, for f32 and every mode asked for; quantizes the ONNX
model with onnxruntime's `quantize_dynamic` (QInt8 weights); then alternates
rounds of `lmopt-run --bench` over every bundle and `bench/ort_run.py` over
the f32 and the quantized ONNX models, so that all see the same machine
state. Prints each engine's median latency over the rounds' medians, the
speedup over lmopt f32, the ratio to onnxruntime's quantized model, and each
output's largest difference from onnxruntime f32.

usage: bench/compare_quant.py [--model bert_base] [--batch 1]
                              [--modes int8-dynamic,bf16,int4-weight]
                              [--threads 2] [--rounds 3] [--runs 5]
                              [--build build] [--models-dir bench/models]
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


def max_abs(ref_path, got_path):
    with np.load(ref_path) as ref, np.load(got_path) as got:
        return max(float(np.abs(ref[n].astype(np.float64) -
                                got[n].astype(np.float64)).max(initial=0))
                   for n in ref.files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="bert_base")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--modes", default="int8-dynamic,bf16,int4-weight")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models-dir", default=MODELS)
    args = parser.parse_args()

    onnx_path = os.path.join(args.models_dir, f"{args.model}.onnx")
    inputs = os.path.join(args.models_dir,
                          f"{args.model}.b{args.batch}.inputs.npz")
    if not os.path.exists(onnx_path) or not os.path.exists(inputs):
        sys.exit(f"error: {onnx_path} or {inputs} missing; run bench/make_models.py")
    with np.load(inputs) as data:
        shapes = [f"--input-shape={n}:{'x'.join(map(str, data[n].shape))}"
                  for n in data.files]
    bin_dir = os.path.join(args.build, "bin")
    with tempfile.TemporaryDirectory(prefix="lmopt-quant-") as work:
        bundles = {}
        for mode in ["f32"] + args.modes.split(","):
            mlir = os.path.join(work, f"{mode}.mlirbc")
            quantize = [] if mode == "f32" else [f"--lmopt-quantize=mode={mode}"]
            run_measured([os.path.join(bin_dir, "lmopt-opt"), onnx_path, *shapes,
                          "--lmopt-optimize-pipeline", *quantize,
                          "--emit-bytecode", "-o", mlir])
            bundles[mode] = os.path.join(work, f"{mode}.lmopt")
            run_measured([os.path.join(bin_dir, "lmopt-compile"), mlir, "-o",
                          bundles[mode]])
        ort_q = os.path.join(work, "ort_qint8.onnx")
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(onnx_path, ort_q, weight_type=QuantType.QInt8)
        ort_models = {"ort f32": onnx_path, "ort quantize_dynamic": ort_q}

        times = {name: [] for name in [*bundles, *ort_models]}
        outputs = {name: os.path.join(work, f"{name.replace(' ', '_')}.npz")
                   for name in times}
        for _ in range(args.rounds):
            for mode, bundle in bundles.items():
                out, _, _ = run_measured(
                    [os.path.join(bin_dir, "lmopt-run"), bundle, "--inputs", inputs,
                     "--threads", str(args.threads), "--bench", str(args.runs),
                     "--output", outputs[mode]])
                times[mode].append(lmopt_p50(out))
            for name, model in ort_models.items():
                out, _, _ = run_measured(
                    [sys.executable, os.path.join(ROOT, "bench", "ort_run.py"),
                     model, inputs, "--threads", str(args.threads), "--runs",
                     str(args.runs), "--output", outputs[name]])
                times[name].append(statistics.median(
                    json.loads(out.strip().splitlines()[-1])["latencies_ms"]))
        med = {name: statistics.median(t) for name, t in times.items()}
        print(f"{args.model} batch {args.batch}, threads {args.threads}, "
              f"{args.rounds} rounds x {args.runs} runs (median of p50s)")
        print(f"{'engine':24} {'ms':>9} {'vs lmopt f32':>13} "
              f"{'vs ort quant':>13} {'max abs vs ort f32':>19}")
        for name, ms in med.items():
            print(f"{'lmopt ' + name if name in bundles else name:24} {ms:9.2f} "
                  f"{med['f32'] / ms:12.2f}x {ms / med['ort quantize_dynamic']:12.2f}x "
                  f"{max_abs(outputs['ort f32'], outputs[name]):19.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
