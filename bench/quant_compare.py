#!/usr/bin/env python3
"""Latency of quantized inference, side by side: lmopt f32, lmopt int8
(dynamic), bf16, int4 weight-only and fp16, onnxruntime f32 and onnxruntime
running its own `onnxruntime.quantization.quantize_dynamic` model (int8
weights), on the
BERT-base-sized model of bench/make_models.py, sequence 128, the same inputs
and thread count. Engines alternate within each round so that all see the
same machine state; the table gives the median of the rounds' p50 latencies
and each engine's latency ratio to onnxruntime f32, to lmopt f32 and to
onnxruntime's int8 model. An lmopt mode this build cannot
compile is listed with lmopt-compile's error.

usage: bench/quant_compare.py [--batches 1,8] [--threads 2] [--rounds 3]
                              [--runs 5]
                              [--modes int8-dynamic,bf16,int4-weight,fp16]
                              [--build build]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ort import MODELS, ROOT, lmopt_p50, run_measured  # noqa: E402


def ort_int8_model(onnx_path):
    """onnxruntime's own dynamic quantization of the model, made once."""
    out = onnx_path.replace(".onnx", ".ort_int8.onnx")
    if not os.path.exists(out):
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(onnx_path, out, weight_type=QuantType.QInt8)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--modes", default="int8-dynamic,bf16,int4-weight,fp16")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()

    onnx_path = os.path.join(MODELS, "bert_base.onnx")
    if not os.path.exists(onnx_path):
        subprocess.check_call([sys.executable, os.path.join(ROOT, "bench", "make_models.py"),
                               "--only", "bert_base"])
    ort_int8 = ort_int8_model(onnx_path)
    lmopt_compile = os.path.join(args.build, "bin", "lmopt-compile")
    lmopt_run = os.path.join(args.build, "bin", "lmopt-run")
    rows = []
    with tempfile.TemporaryDirectory(prefix="lmopt-qbench-") as work:
        for batch in (int(b) for b in args.batches.split(",")):
            inputs = os.path.join(MODELS, f"bert_base.b{batch}.inputs.npz")
            engines, skipped = {}, {}
            for mode in ["f32"] + [m for m in args.modes.split(",") if m]:
                bundle = os.path.join(work, f"b{batch}.{mode}.lmopt")
                cmd = [lmopt_compile, onnx_path, "--input-shapes-from", inputs, "-o", bundle]
                if mode != "f32":
                    cmd.append(f"--quantize={mode}")
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    skipped[f"lmopt {mode}"] = next(
                        (l for l in proc.stderr.splitlines() if l.startswith("error")),
                        proc.stderr.strip()[-200:])
                    continue
                engines[f"lmopt {mode}"] = (
                    "lmopt", [lmopt_run, bundle, "--inputs", inputs, "--threads",
                              str(args.threads), "--bench", str(args.runs)])
            for label, model in (("onnxruntime f32", onnx_path),
                                 ("onnxruntime int8 (quantize_dynamic)", ort_int8)):
                engines[label] = ("ort", [sys.executable, os.path.join(ROOT, "bench", "ort_run.py"),
                                          model, inputs, "--threads", str(args.threads),
                                          "--runs", str(args.runs)])
            times = {label: [] for label in engines}
            for _ in range(args.rounds):
                for label, (kind, cmd) in engines.items():
                    out, _, _ = run_measured(cmd)
                    times[label].append(
                        lmopt_p50(out) if kind == "lmopt" else statistics.median(
                            json.loads(out.strip().splitlines()[-1])["latencies_ms"]))
            med = {label: statistics.median(values) for label, values in times.items()}
            bases = [med["onnxruntime f32"], med.get("lmopt f32"),
                     med["onnxruntime int8 (quantize_dynamic)"]]
            for label, ms in med.items():
                rows.append((batch, label, f"{ms:.1f}") + tuple(
                    f"{ms / b:.3f}" if b else "" for b in bases))
            for label, error in skipped.items():
                rows.append((batch, label, f"not available: {error}", "", "", ""))

    print(f"BERT-base-sized, sequence 128, {args.threads} threads, {args.rounds} rounds x "
          f"{args.runs} runs, median of the rounds' p50; latency ratios (below 1 is "
          "faster). Timings mean something only on an otherwise idle machine.")
    print("| batch | engine | ms | vs onnxruntime f32 | vs lmopt f32 | vs onnxruntime int8 |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
