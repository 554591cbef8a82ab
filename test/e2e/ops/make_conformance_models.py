#!/usr/bin/env python3
"""Regenerate the models of conformance.test in test/e2e/ops/Inputs (Pad,
LayerNormalization's Mean and InvStdDev, Trilu, Cos and Sin), with ONNX Runtime's outputs as
references (see make_op_models.py):

    python3 test/e2e/ops/make_conformance_models.py
"""

import numpy as np
from onnx import helper

from make_op_models import const_i64, node, randn, save


def main():
    x = randn(2, 3, 4)
    # Constant mode with a fill value, negative pads (crops) and an axes
    # input; then the three other modes on all axes.
    save("pad_constant",
         [node("Pad", ["x", "pads", "value", "axes"], ["y"], mode="constant")],
         {"x": x}, ["y"],
         initializers=[const_i64("pads", [1, -1, 2, 3]),
                       const_i64("axes", [0, -1]),
                       helper.make_tensor("value", 1, [], [1.5])])
    for mode in ("edge", "reflect", "wrap"):
        save(f"pad_{mode}", [node("Pad", ["x", "pads"], ["y"], mode=mode)],
             {"x": x}, ["y"],
             initializers=[const_i64("pads", [0, 2, 1, 1, 1, 3])])
    # The training outputs of LayerNormalization, over the last two axes.
    save("layer_norm_stats",
         [node("LayerNormalization", ["x", "w", "b"], ["y", "mean", "inv"],
               axis=1, epsilon=1e-3)],
         {"x": x, "w": randn(3, 4), "b": randn(3, 4)}, ["y", "mean", "inv"])

    # Trilu: upper with k above the diagonal, lower with k below it, on
    # wide and tall matrices; then a causal mask over a symbolic sequence
    # length, built as a model exports it (Trilu of a filled square).
    save("trilu_upper", [node("Trilu", ["x", "k"], ["y"])],
         {"x": randn(2, 3, 5)}, ["y"], initializers=[const_i64("k", [1])])
    save("trilu_lower", [node("Trilu", ["x", "k"], ["y"], upper=0)],
         {"x": randn(2, 5, 3)}, ["y"], initializers=[const_i64("k", [-1])])
    save("trilu_dynamic", [node("Trilu", ["x"], ["y"], upper=0)],
         {"x": randn(6, 6)}, ["y"], dims={"x": ["s", "s"]})

    # Cos and Sin over the angles rotary embeddings reach (positions times
    # frequencies, tens of radians).
    save("trig", [node("Cos", ["x"], ["cos"]), node("Sin", ["x"], ["sin"])],
         {"x": randn(4, 8) * 20.0}, ["cos", "sin"])


if __name__ == "__main__":
    main()
