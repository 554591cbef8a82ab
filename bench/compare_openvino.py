#!/usr/bin/env python3
"""lmopt against OpenVINO (and onnxruntime) on the same exported models, in
fp32, bf16 and int8, on the same inputs and thread count.

For each model and batch, every engine runs in its own process per round,
the engines alternating within each round so that all see the same machine
state; the table gives the median of the rounds' p50 latencies, lmopt's
ratio to OpenVINO in the same precision, and each output's largest
difference from onnxruntime fp32.

Engines (precision: what runs):
  fp32  lmopt (lmopt-compile), OpenVINO (inference precision f32),
        onnxruntime (all graph optimizations)
  bf16  lmopt --quantize=bf16, OpenVINO (inference precision bf16: its
        default on CPUs with AMX or AVX-512 BF16)
  int8  lmopt --quantize=int8-dynamic and --quantize=int8-static
        (calibrated on the batch-8 inputs), both with
        --quantize-attention=bf16, OpenVINO with NNCF's static
        quantization (transformer preset, the same calibration rows; what
        stays float, attention included, runs at its default inference
        precision, bf16), onnxruntime quantize_dynamic (int8 weights, per
        channel)

Models come from bench/make_models.py (built when missing): BERT-base,
DistilBERT-base, GPT-2 small; sequence 128, batch 1 and 8.

usage: bench/compare_openvino.py [--models bert_base,distilbert_base,gpt2_small]
                                 [--batches 1,8] [--threads 2] [--rounds 3]
                                 [--runs 10] [--build build]
needs: pip install torch transformers onnxruntime openvino nncf (installed
when missing; not needed by the tests or CI)
"""
import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ort import MODELS, ROOT, lmopt_p50, run_measured  # noqa: E402

LMOPT_MODES = {"fp32": [], "bf16": ["--quantize=bf16"],
               "int8-dynamic": ["--quantize=int8-dynamic",
                                "--quantize-attention=bf16"],
               "int8-static": ["--quantize=int8-static",
                               "--quantize-attention=bf16"]}
PRECISION = {"fp32": "fp32", "bf16": "bf16", "int8-dynamic": "int8",
             "int8-static": "int8"}


def ensure_packages():
    for module, package in (("openvino", "openvino"), ("nncf", "nncf")):
        try:
            importlib.import_module(module)
        except ImportError:
            subprocess.check_call([sys.executable, "-m", "pip", "install",
                                   "-q", package])


def ort_int8_model(onnx_path):
    out = onnx_path.replace(".onnx", ".ort_int8.onnx")
    if not os.path.exists(out):
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(onnx_path, out, weight_type=QuantType.QInt8,
                         per_channel=True)
    return out


def max_diff(ref_path, got_path):
    with np.load(ref_path) as ref, np.load(got_path) as got:
        name = ref.files[0]
        if name not in got.files:
            name = got.files[0]
        a = ref[ref.files[0]].astype(np.float64)
        b = got[name].astype(np.float64)
        if a.shape != b.shape:
            return float("nan")
        return float(np.abs(a - b).max(initial=0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="bert_base,distilbert_base,gpt2_small")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    ensure_packages()
    lmopt_compile = os.path.join(args.build, "bin", "lmopt-compile")
    lmopt_run = os.path.join(args.build, "bin", "lmopt-run")
    bench = os.path.join(ROOT, "bench")
    rows = []
    with tempfile.TemporaryDirectory(prefix="lmopt-ovbench-") as work:
        for model in args.models.split(","):
            onnx_path = os.path.join(MODELS, f"{model}.onnx")
            if not os.path.exists(onnx_path):
                subprocess.check_call([sys.executable,
                                       os.path.join(bench, "make_models.py"),
                                       "--only", model])
            ort_int8 = ort_int8_model(onnx_path)
            calibration = os.path.join(MODELS, f"{model}.b8.inputs.npz")
            for batch in (int(b) for b in args.batches.split(",")):
                inputs = os.path.join(MODELS, f"{model}.b{batch}.inputs.npz")
                with np.load(inputs) as data:
                    shapes = [f"--input-shape={n}:{'x'.join(map(str, data[n].shape))}"
                              for n in data.files]
                engines = {}
                for mode, flags in LMOPT_MODES.items():
                    bundle = os.path.join(work, f"{model}.b{batch}.{mode}.lmopt")
                    extra = (["--calibration", calibration]
                             if mode == "int8-static" else [])
                    start = time.perf_counter()
                    run_measured([lmopt_compile, onnx_path, *shapes, *flags,
                                  *extra, "-o", bundle])
                    print(f"{model} b{batch}: compiled lmopt {mode} in "
                          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
                    engines[f"lmopt {mode}"] = (
                        "lmopt", [lmopt_run, bundle, "--inputs", inputs,
                                  "--threads", str(args.threads), "--bench",
                                  str(args.runs), "--output"])
                for precision in ("fp32", "bf16", "int8"):
                    engines[f"openvino {precision}"] = (
                        "json", [sys.executable, os.path.join(bench, "ov_run.py"),
                                 onnx_path, inputs, "--precision", precision,
                                 "--calibration", calibration, "--threads",
                                 str(args.threads), "--runs", str(args.runs),
                                 "--output"])
                for name, path in (("onnxruntime fp32", onnx_path),
                                   ("onnxruntime int8-dynamic", ort_int8)):
                    engines[name] = (
                        "json", [sys.executable, os.path.join(bench, "ort_run.py"),
                                 path, inputs, "--threads", str(args.threads),
                                 "--runs", str(args.runs), "--output"])
                times = {name: [] for name in engines}
                outputs = {name: os.path.join(work, f"{i}.npz")
                           for i, name in enumerate(engines)}
                for _ in range(args.rounds):
                    for name, (kind, cmd) in engines.items():
                        out, _, _ = run_measured(cmd + [outputs[name]])
                        times[name].append(
                            lmopt_p50(out) if kind == "lmopt" else statistics.median(
                                json.loads(out.strip().splitlines()[-1])["latencies_ms"]))
                ms = {name: statistics.median(t) for name, t in times.items()}
                for name in engines:
                    engine, precision = name.split(" ", 1)
                    ov = ms.get(f"openvino {PRECISION.get(precision, precision)}")
                    rows.append({
                        "model": model, "batch": batch, "engine": name,
                        "ms": ms[name],
                        "vs_openvino": ms[name] / ov if engine == "lmopt" and ov else None,
                        "max_diff_vs_ort_fp32": max_diff(
                            outputs["onnxruntime fp32"], outputs[name]),
                    })
                    print(json.dumps(rows[-1]), file=sys.stderr)
    print(f"| model | batch | engine | median ms | lmopt / OpenVINO (same precision) "
          f"| max abs diff vs onnxruntime fp32 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        ratio = f"{r['vs_openvino']:.2f}" if r["vs_openvino"] else ""
        print(f"| {r['model']} | {r['batch']} | {r['engine']} | {r['ms']:.1f} | "
              f"{ratio} | {r['max_diff_vs_ort_fp32']:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
