#!/usr/bin/env python3
"""Regenerate the models of conformance.test in test/e2e/ops/Inputs (Pad,
LayerNormalization's Mean and InvStdDev), with ONNX Runtime's outputs as
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


if __name__ == "__main__":
    main()
