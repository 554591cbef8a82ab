#!/usr/bin/env python3
"""Regenerate the fixture of test/tools/lmopt-compile/quantize-gptq.test.

Writes test/tools/lmopt-compile/Inputs/gptq/:

- mlp.onnx: x f32 [2, 16, 64] -> fc1 (64x128, bias, Relu) -> fc2 (128x256,
  bias, Relu) -> fc3 (256x32) -> y (fc3's K spans two lazy batches). Input channel 3 of x is 0 in every
  calibration sample, and fc2's biases kill 8 of its outputs after Relu, so
  fc1's and fc3's Hessians have zero rows and columns (dead inputs).
- cal.npz: 16 calibration samples of x, with correlated channels of unequal
  scale (the case GPTQ helps in); cal_zero.npz: all zero (H = 0).
- expected.npz: per linear (fc1, fc2, fc3) and grid (sym: i4, asym: u4;
  block 32), the int4 codes, scales and zero points as [N, K] and
  [N, K / 32] that GPTQ gives, computed here in float64 with NumPy from the
  written rule (docs/quantization.md, "GPTQ") in the formulation of Frantar
  et al. 2022 (inverse Hessian, its upper Cholesky factor, lazy batches of
  128 columns), not lmopt's; and the same for round to nearest.

The grid is the clip-searched block grid of docs/quantization.md, written
out again below.

    python3 scripts/make_gptq_tests.py
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "tools", "lmopt-compile", "Inputs", "gptq")
F = np.float32
BLOCK = 32
CLIP = [F(20 - i) / F(20) for i in range(11)]


def f16(x):
    return np.asarray(x, F).astype(np.float16).astype(F)


def search_block(v, symmetric):
    """(scale, zero point) of one block: the clip ratio(s) whose f16 scale
    quantizes `v` (f32) with the least squared error, the first on ties."""
    v = v.astype(F)
    lo, hi = min(F(0), v.min()), max(F(0), v.max())
    best, best_err = (F(1), 0), np.inf
    if symmetric:
        m = max(-lo, hi)
        cands = [] if m == 0 else [(f16(a * m / F(7)), F(0)) for a in CLIP]
    else:
        cands = [] if hi == lo else [
            (f16((b * hi - a * lo) / F(15)), a * lo) for a in CLIP for b in CLIP]
    for scale, clo in cands:
        if scale == 0:
            continue
        zp = 0 if symmetric else int(np.clip(np.rint(-clo / scale), 0, 15))
        q = quantize(v, scale, zp, symmetric)
        d = v - (q - F(zp)) * scale
        err = float(np.sum(d.astype(np.float64) ** 2))
        if err < best_err:
            best, best_err = (scale, zp), err
    return best


def quantize(v, scale, zp, symmetric):
    v = np.asarray(v, F)
    lo, hi = (-7, 7) if symmetric else (0, 15)
    return np.clip(np.rint(v / scale) + F(zp), lo, hi).astype(F)


def rtn(w, symmetric):
    """[N, K] -> codes [N, K], scales and zero points [N, K / BLOCK]."""
    n, k = w.shape
    codes = np.zeros((n, k), np.int64)
    scales = np.zeros((n, k // BLOCK), F)
    zps = np.zeros((n, k // BLOCK), np.int64)
    for r in range(n):
        for b in range(k // BLOCK):
            v = w[r, b * BLOCK:(b + 1) * BLOCK]
            scales[r, b], zps[r, b] = search_block(v, symmetric)
            codes[r, b * BLOCK:(b + 1) * BLOCK] = quantize(
                v, scales[r, b], zps[r, b], symmetric)
    return codes, scales, zps


def gptq(w, h, symmetric, blocksize=128, percdamp=0.01):
    """GPTQ as Frantar et al. publish it, over [N, K] `w` and [K, K] `h`,
    onto the block grid; each block's parameters from the current
    (error-updated) weights when its first column is reached."""
    w = w.astype(np.float64).copy()
    n, k = w.shape
    h = h.astype(np.float64).copy()
    damp = percdamp * np.mean(np.diag(h))
    h[np.diag_indices(k)] += damp if damp > 0 else 1.0
    hinv = np.linalg.cholesky(np.linalg.inv(h)).T  # upper, U^T U = H^-1
    codes = np.zeros((n, k), np.int64)
    scales = np.zeros((n, k // BLOCK), F)
    zps = np.zeros((n, k // BLOCK), np.int64)
    for i1 in range(0, k, blocksize):
        i2 = min(i1 + blocksize, k)
        w1 = w[:, i1:i2].copy()
        err1 = np.zeros_like(w1)
        hinv1 = hinv[i1:i2, i1:i2]
        for i in range(i2 - i1):
            col = i1 + i
            if col % BLOCK == 0:
                for r in range(n):
                    scales[r, col // BLOCK], zps[r, col // BLOCK] = search_block(
                        w1[r, i:i + BLOCK], symmetric)
            s = scales[:, col // BLOCK]
            z = zps[:, col // BLOCK]
            q = np.array([quantize(w1[r, i], s[r], z[r], symmetric)
                          for r in range(n)])
            codes[:, col] = q
            deq = (q - z).astype(np.float64) * s.astype(np.float64)
            err = (w1[:, i] - deq) / hinv1[i, i]
            w1[:, i:] -= np.outer(err, hinv1[i, i:])
            err1[:, i] = err
        w[:, i2:] -= err1 @ hinv[i1:i2, i2:]
    return codes, scales, zps


def make_model(rng):
    w1 = (rng.standard_normal((64, 128)) * 0.2).astype(F)
    b1 = (rng.standard_normal(128) * 0.1).astype(F)
    w2 = (rng.standard_normal((128, 256)) * 0.1).astype(F)
    b2 = (rng.standard_normal(256) * 0.1).astype(F)
    b2[:8] = -100.0  # these outputs are 0 after Relu: fc3's dead inputs
    w3 = (rng.standard_normal((256, 32)) * 0.1).astype(F)
    # A few large weights, as trained layers have.
    for w in (w1, w2, w3):
        w.flat[rng.choice(w.size, w.size // 200, replace=False)] *= 6.0
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["a1"], name="fc1"),
        helper.make_node("Add", ["a1", "b1"], ["c1"], name="fc1_bias"),
        helper.make_node("Relu", ["c1"], ["h1"], name="act1"),
        helper.make_node("MatMul", ["h1", "w2"], ["a2"], name="fc2"),
        helper.make_node("Add", ["a2", "b2"], ["c2"], name="fc2_bias"),
        helper.make_node("Relu", ["c2"], ["h2"], name="act2"),
        helper.make_node("MatMul", ["h2", "w3"], ["y"], name="fc3"),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 32])],
        [numpy_helper.from_array(a, n) for a, n in
         [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (w3, "w3")]])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, (w1, b1, w2, b2, w3)


def linear_inputs(x, weights):
    """The input of each linear over all calibration tokens, [T, K] (f32)."""
    w1, b1, w2, b2, _ = weights
    x = x.reshape(-1, 64).astype(F)
    h1 = np.maximum(x @ w1 + b1, 0).astype(F)
    h2 = np.maximum(h1 @ w2 + b2, 0).astype(F)
    return {"fc1": x, "fc2": h1, "fc3": h2}


def main():
    rng = np.random.default_rng(20261202)
    model, weights = make_model(rng)
    os.makedirs(OUT, exist_ok=True)
    onnx.save(model, os.path.join(OUT, "mlp.onnx"))

    # Correlated channels of unequal scale; channel 3 dead.
    mix = rng.standard_normal((64, 64)) * np.exp(-np.arange(64) / 16.0)[:, None]
    z = rng.standard_normal((16, 2, 16, 64))
    x = (z @ mix * np.exp(rng.standard_normal(64) * 0.7)).astype(F)
    x[..., 3] = 0.0
    np.savez(os.path.join(OUT, "cal.npz"), x=x)
    np.savez_compressed(os.path.join(OUT, "cal_zero.npz"), x=np.zeros_like(x))

    inputs = linear_inputs(x, weights)
    expected = {}
    for name, w in zip(("fc1", "fc2", "fc3"), (weights[0], weights[2], weights[4])):
        wt = w.T.copy()  # [N, K]
        xin = inputs[name].astype(np.float64)
        h = xin.T @ xin
        for grid, symmetric in (("sym", True), ("asym", False)):
            for method, result in (("gptq", gptq(wt, h, symmetric)),
                                   ("rtn", rtn(wt, symmetric))):
                for part, value in zip(("codes", "scales", "zero_points"), result):
                    expected[f"{name}.{grid}.{method}.{part}"] = value
    np.savez_compressed(os.path.join(OUT, "expected.npz"), **expected)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
