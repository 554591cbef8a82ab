#!/usr/bin/env python3
"""Accuracy and size of lmopt's quantized bundles against the f32 model.

MiniLM (bench/make_minilm.py: all-MiniLM-L6-v2's real weights, the sentences
of bench/data/sentences.txt): sentence embeddings (mean pooling with the
attention mask, L2 normalized, as sentence-transformers computes them) from
the f32 ONNX model under onnxruntime, against lmopt's bundle compiled with
`lmopt-compile --quantize=MODE`, calibrated on a separate subset of the
sentences and run with lmopt-run; the mean (and worst) cosine per mode.

BERT-base-sized random model (bench/make_models.py): relative output error
||lmopt - ort|| / ||ort|| of last_hidden_state per mode.

Sizes, from `--quantize-report`: the quantized linears' weight bytes (scales
included) over their f32 bytes, and the whole bundle's size ratio.

A mode may carry lmopt-compile flags after '+' (int4-weight+asymmetric,
int4-weight+block-size=128, int8-static+calibration-method=percentile:99.99);
'+embeddings' stands for --quantize-embeddings (int8-dynamic+embeddings:
the embedding tables int8 per row too).
Every mode is compiled with --calibration, so int4-weight rounds with GPTQ
(its default then); int4-weight+int4-method=rtn rounds to nearest.
A mode the build cannot compile yet is listed with lmopt-compile's error.

usage: bench/quant_accuracy.py [--modes int8-dynamic,int8-static,int4-weight,bf16,fp16]
                               [--batch 8] [--eval 208] [--skip-bert]
                               [--build build]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "bench", "models")
NAMES = ["input_ids", "attention_mask", "token_type_ids"]
# Targets of the quantization issue: mean embedding cosine vs f32.
TARGETS = {"f32": 0.9999, "int8-dynamic": 0.995, "int8-static": 0.99,
           "int4-weight": 0.98, "bf16": 0.999, "fp16": 0.999}
SIZE_TARGETS = {"int8-dynamic": 0.26, "int8-static": 0.26, "int4-weight": 0.15}


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def embed(hidden, mask):
    mask = mask[..., None].astype(np.float64)
    pooled = (hidden.astype(np.float64) * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def ort_outputs(model, feeds):
    import onnxruntime as ort
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def compile_bundle(args, model, shape_npz, mode, cal, work, tag):
    bundle = os.path.join(work, f"{tag}.{mode}.lmopt")
    report = os.path.join(work, f"{tag}.{mode}.json")
    cmd = [os.path.join(args.build, "bin", "lmopt-compile"), model,
           "--input-shapes-from", shape_npz, "-o", bundle]
    if mode != "f32":
        base, *flags = mode.split("+")
        cmd += [f"--quantize={base}", "--calibration", cal,
                f"--quantize-report={report}"] + [
                    "--quantize-embeddings" if f == "embeddings" else f"--{f}"
                    for f in flags]
    code, _, err = run(cmd)
    if code != 0:
        first = next((l for l in err.splitlines() if l.startswith("error")), err.strip()[-200:])
        return None, None, first
    sizes = json.load(open(report)) if mode != "f32" else None
    return bundle, sizes, None


def lmopt_outputs(args, bundle, batches, work):
    outputs = []
    for i, feeds in enumerate(batches):
        inputs = os.path.join(work, f"in{i}.npz")
        out = os.path.join(work, f"out{i}.npz")
        np.savez(inputs, **feeds)
        code, stdout, err = run([os.path.join(args.build, "bin", "lmopt-run"), bundle,
                                 "--inputs", inputs, "--output", out])
        if code != 0:
            sys.exit(f"error: lmopt-run {bundle} failed:\n{stdout}{err}")
        with np.load(out) as data:
            outputs.append(data[data.files[0]])
    return np.concatenate(outputs)


def size_columns(sizes):
    if not sizes:
        return "", ""
    weights = sizes["linear_weight_bytes"] / max(sizes["linear_weight_bytes_f32"], 1)
    bundle = (sizes["bundle_bytes"] / sizes["bundle_bytes_f32"]
              if sizes.get("bundle_bytes_f32") else float("nan"))
    return f"{weights:.3f}", f"{bundle:.3f}"


def minilm(args, modes, work):
    model = os.path.join(MODELS, "minilm.onnx")
    tokens = os.path.join(MODELS, "minilm_tokens.npz")
    if not os.path.exists(model) or not os.path.exists(tokens):
        subprocess.check_call([sys.executable, os.path.join(ROOT, "bench", "make_minilm.py")])
    with np.load(tokens) as data:
        arrays = {n: data[n] for n in NAMES}
    count = arrays["input_ids"].shape[0]
    b = args.batch
    n_eval = min(args.eval, count - b) // b * b
    # Calibration: the sentences after the evaluation set, whole batches.
    n_cal = (count - n_eval) // b * b
    batches = [{n: arrays[n][i:i + b] for n in NAMES} for i in range(0, n_eval, b)]
    shape_npz = os.path.join(work, "minilm_shape.npz")
    np.savez(shape_npz, **batches[0])
    cal = os.path.join(work, "minilm_cal.npz")
    np.savez(cal, **{n: arrays[n][n_eval:n_eval + n_cal] for n in NAMES})

    mask = arrays["attention_mask"][:n_eval]
    reference = embed(ort_outputs(model, {n: arrays[n][:n_eval] for n in NAMES}), mask)
    print(f"MiniLM-L6 (all-MiniLM-L6-v2 weights): {n_eval} sentences evaluated in "
          f"batches of {b}, seq {arrays['input_ids'].shape[1]}; calibration on "
          f"{n_cal} other sentences ({n_cal // b} samples)")
    print("| mode | mean cosine | worst cosine | target | linear weights vs f32 "
          "| bundle vs f32 |")
    print("|---|---|---|---|---|---|")
    for mode in ["f32"] + modes:
        bundle, sizes, error = compile_bundle(args, model, shape_npz, mode, cal, work, "minilm")
        if error:
            print(f"| {mode} | not available: {error} | | | | |")
            continue
        got = embed(lmopt_outputs(args, bundle, batches, work), mask)
        cosines = (got * reference).sum(1)
        target = TARGETS[mode.split("+")[0]]
        verdict = "met" if cosines.mean() >= target else "MISSED"
        weights, whole = size_columns(sizes)
        print(f"| {mode} | {cosines.mean():.5f} | {cosines.min():.5f} "
              f"| >= {target} {verdict} | {weights} | {whole} |", flush=True)


def bert_base(args, modes, work):
    model = os.path.join(MODELS, "bert_base.onnx")
    inputs = os.path.join(MODELS, "bert_base.b1.inputs.npz")
    if not os.path.exists(model) or not os.path.exists(inputs):
        subprocess.check_call([sys.executable, os.path.join(ROOT, "bench", "make_models.py"),
                               "--only", "bert_base"])
    with np.load(inputs) as data:
        feeds = {n: data[n] for n in data.files}
    rng = np.random.default_rng(1)
    vocab = int(feeds["input_ids"].max()) + 1
    cal = os.path.join(work, "bert_cal.npz")
    samples = 8
    np.savez(cal, **{n: (rng.integers(0, vocab, (samples,) + v.shape).astype(v.dtype)
                         if n == "input_ids" else np.stack([v] * samples))
                     for n, v in feeds.items()})
    reference = ort_outputs(model, feeds).astype(np.float64)
    print(f"\nBERT-base-sized random model, batch 1, seq {feeds['input_ids'].shape[1]}; "
          f"calibration on {samples} random-token samples")
    print("| mode | relative error vs onnxruntime | linear weights vs f32 "
          "| size target | bundle vs f32 |")
    print("|---|---|---|---|---|")
    for mode in ["f32"] + modes:
        bundle, sizes, error = compile_bundle(args, model, inputs, mode, cal, work, "bert")
        if error:
            print(f"| {mode} | not available: {error} | | | |")
            continue
        got = lmopt_outputs(args, bundle, [feeds], work).astype(np.float64)
        rel = np.linalg.norm(got - reference) / np.linalg.norm(reference)
        weights, whole = size_columns(sizes)
        size_target = SIZE_TARGETS.get(mode.split("+")[0])
        check = ""
        if size_target and weights:
            check = f"<= {size_target} {'met' if float(weights) <= size_target else 'MISSED'}"
        print(f"| {mode} | {rel:.2e} | {weights} | {check} | {whole} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="int8-dynamic,int8-static,int4-weight,bf16,fp16")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--eval", type=int, default=208)
    parser.add_argument("--skip-bert", action="store_true")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    with tempfile.TemporaryDirectory(prefix="lmopt-quant-") as work:
        minilm(args, modes, work)
        if not args.skip_bert:
            bert_base(args, modes, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
