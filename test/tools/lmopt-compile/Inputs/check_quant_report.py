#!/usr/bin/env python3
"""Checks lmopt-compile's quantization report for the MLP of
calibration_inputs.py against numpy.

usage: check_quant_report.py MODEL CAL REPORT MODE

numpy computes the f32 model and the quantized one from the ONNX weights as
docs/dialect.md and docs/quantization.md define the modes (int8-dynamic:
weights i8 per output channel, scale max|w_c|/127, input rows quantized to
i8 with scale max|row|/127, round half to even; bf16: weights and input
rounded to bf16, round to nearest even), then the report's measures: per
layer the linear's output, per model output; max abs error, relative error
and cosine over all samples; with --sensitivity, the output cosine with each
layer quantized alone. Prints each and "OK" when all agree.
"""
import json
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def round_bf16(x):
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def quant_rows(x):
    scale = np.abs(x).max(axis=-1, keepdims=True) / 127
    scale[scale == 0] = 1
    return np.clip(np.round(x / scale), -127, 127) * scale


def linear(mode, x, w):
    if mode == "f32":
        return x.astype(np.float64) @ w.astype(np.float64)
    if mode == "bf16":
        return round_bf16(x).astype(np.float64) @ round_bf16(w).astype(np.float64)
    # int8-dynamic: per-token input, per-output-channel weight (columns).
    scale = np.abs(w).max(axis=0, keepdims=True) / 127
    scale[scale == 0] = 1
    wq = np.round(w / scale) * scale
    return quant_rows(x.astype(np.float64)) @ wq.astype(np.float64)


def forward(mode, x, weights, only=None):
    """`only`: the one layer quantized (the others f32), or all when None."""
    pick = lambda layer: mode if only in (None, layer) else "f32"
    h = np.maximum(linear(pick("act"), x, weights["w1"]) + weights["b1"], 0)
    h = h.astype(np.float32)
    y = linear(pick("fc2"), h, weights["w2"]).astype(np.float32)
    return {"act": h, "fc2": y}, {"y": y}


def measures(pairs):
    e = np.concatenate([p[0].ravel() for p in pairs]).astype(np.float64)
    a = np.concatenate([p[1].ravel() for p in pairs]).astype(np.float64)
    return {"max_abs_error": np.abs(a - e).max(),
            "relative_error": np.linalg.norm(a - e) / np.linalg.norm(e),
            "cosine": e @ a / np.sqrt((e @ e) * (a @ a))}


def main(model_path, cal_path, report_path, mode):
    weights = {t.name: numpy_helper.to_array(t)
               for t in onnx.load(model_path).graph.initializer}
    samples = np.load(cal_path)["x"]
    runs = [(forward("f32", x, weights), forward(mode, x, weights)) for x in samples]
    report = json.load(open(report_path))
    ok = True
    for section, index in (("layers", 0), ("outputs", 1)):
        for row in report[section]:
            name = row["name"]
            want = measures([(f[index][name], q[index][name]) for f, q in runs])
            for key, value in want.items():
                # Rounding of f32 intermediates differs; a value that lands on
                # a rounding tie may flip one quantization step.
                tol = 1e-6 if key == "cosine" else 1e-3 * value + 1e-6
                good = abs(row[key] - value) <= tol
                ok &= good
                print(f"{section} {name} {key}: lmopt {row[key]:.6g} numpy {value:.6g}"
                      f"{'' if good else '  <-- differs'}")
    # --sensitivity: each layer quantized alone, the output's cosine.
    for row in report.get("sensitivity", []):
        pairs = [(forward("f32", x, weights)[1]["y"],
                  forward(mode, x, weights, only=row["name"])[1]["y"]) for x in samples]
        want = measures(pairs)["cosine"]
        good = abs(row["cosine"] - want) <= 1e-6
        ok &= good
        print(f"sensitivity {row['name']} cosine: lmopt {row['cosine']:.7f} numpy "
              f"{want:.7f}{'' if good else '  <-- differs'}")
    print("OK" if ok else "MISMATCH")


if __name__ == "__main__":
    main(*sys.argv[1:5])
