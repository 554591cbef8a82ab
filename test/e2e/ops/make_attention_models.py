#!/usr/bin/env python3
"""Regenerate the models of attention-opset23.test in test/e2e/ops/Inputs:
ONNX Attention (opset 23 and 24), RMSNormalization and RotaryEmbedding
(opset 23) in the forms the importer maps onto lmopt.attention, rms_norm and
rotary, with ONNX Runtime's outputs as references; each is also checked
against the ONNX reference implementation (onnx.reference), so that both
independent implementations agree on the expected values:

    python3 test/e2e/ops/make_attention_models.py
"""

import os

import numpy as np
from onnx import helper
from onnx.reference import ReferenceEvaluator

from make_op_models import OUT, RNG, const_i64, node, randn, save


def save_checked(name, nodes, inputs, outputs, opset, dims=None):
    save(name, nodes, inputs, outputs, opset=opset, dims=dims)
    model = os.path.join(OUT, name + ".onnx")
    expected = np.load(os.path.join(OUT, name + ".ref.npz"))
    got = ReferenceEvaluator(model).run(None, inputs)
    for out, value in zip(outputs, got):
        np.testing.assert_allclose(expected[out], value, rtol=1e-5, atol=1e-6)


def main():
    # 4-D grouped-query attention (4 query heads over 2 key/value heads)
    # with a cache of 5 positions, causal, and an additive mask over all 8
    # keys; the present key and value are outputs.
    save_checked(
        "attention_gqa_past",
        [node("Attention", ["q", "k", "v", "mask", "past_k", "past_v"],
              ["y", "present_k", "present_v"], is_causal=1)],
        {"q": randn(2, 4, 3, 8), "k": randn(2, 2, 3, 8),
         "v": randn(2, 2, 3, 8), "mask": randn(3, 8),
         "past_k": randn(2, 2, 5, 8), "past_v": randn(2, 2, 5, 8)},
        ["y", "present_k", "present_v"], opset=23)
    # 3-D packed heads, a bool mask with a fully hidden row (zeros) and a
    # scale.
    keep = RNG.random((2, 1, 4, 6)) > 0.4
    keep[..., 0] = True
    keep[1, 0, 2, :] = False
    save_checked(
        "attention_3d_bool",
        [node("Attention", ["q", "k", "v", "keep"], ["y"], q_num_heads=4,
              kv_num_heads=2, scale=0.3)],
        {"q": randn(2, 4, 32), "k": randn(2, 6, 16), "v": randn(2, 6, 16),
         "keep": keep}, ["y"], opset=23)
    # Causal with 3 queries over 5 keys and no cache: ONNX aligns the
    # queries to the first keys.
    save_checked(
        "attention_causal_offset",
        [node("Attention", ["q", "k", "v"], ["y"], is_causal=1)],
        {"q": randn(1, 2, 3, 8), "k": randn(1, 2, 5, 8),
         "v": randn(1, 2, 5, 8)}, ["y"], opset=23)
    # Causal self-attention over a symbolic length, as exporters write
    # scaled_dot_product_attention(is_causal=True).
    save_checked(
        "attention_causal_dynamic",
        [node("Attention", ["q", "k", "v"], ["y"], is_causal=1)],
        {"q": randn(1, 2, 5, 8), "k": randn(1, 2, 5, 8),
         "v": randn(1, 2, 5, 8)}, ["y"], opset=23,
        dims={n: [1, 2, "s", 8] for n in "qkv"})
    # Opset 24: a static cache of 6 slots with 4 and 2 valid keys, causal.
    save_checked(
        "attention_nonpad",
        [node("Attention", ["q", "k", "v", "", "", "", "valid"], ["y"],
              is_causal=1)],
        {"q": randn(2, 2, 2, 8), "k": randn(2, 2, 6, 8),
         "v": randn(2, 2, 6, 8), "valid": np.array([4, 2], np.int64)},
        ["y"], opset=24)
    save_checked(
        "rms_norm",
        [node("RMSNormalization", ["x", "w"], ["y"], axis=-2, epsilon=1e-3)],
        {"x": randn(2, 3, 8) * 2.0, "w": randn(3, 8)}, ["y"], opset=23)
    # Rotary: position ids into [positions, R/2] caches, 4 of 8 dims
    # rotated; and packed [B, S, H*D] input with per-batch caches.
    angles = np.arange(16)[:, None] * np.array([1.0, 0.1])[None, :]
    save_checked(
        "rotary_positions",
        [node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"],
              rotary_embedding_dim=4)],
        {"x": randn(2, 4, 3, 8), "cos": np.cos(angles).astype(np.float32),
         "sin": np.sin(angles).astype(np.float32),
         "pos": RNG.integers(0, 16, (2, 3)).astype(np.int64)},
        ["y"], opset=23)
    theta = RNG.random((2, 3, 4)) * 6.0
    save_checked(
        "rotary_packed",
        [node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], num_heads=4)],
        {"x": randn(2, 3, 32), "cos": np.cos(theta).astype(np.float32),
         "sin": np.sin(theta).astype(np.float32)}, ["y"], opset=23)


if __name__ == "__main__":
    main()
