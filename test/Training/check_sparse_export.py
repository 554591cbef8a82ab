"""Checks a trained 2:4-sparse model against its masks.

usage: check_sparse_export.py TRAINED.onnx SOURCE.onnx REFERENCE.npz

REFERENCE.npz's `mask/NAME` members (scripts/make_sparse_train_fixtures.py)
are 1 where weight NAME stays. Prints, for the masked initializers of
TRAINED.onnx, whether their zeros are exactly the masks' (the 2:4 pattern
kept through training) and whether their kept weights moved from the
source model's, and a summary ending in PASS or FAIL.
"""

import sys

import numpy as np
import onnx
from onnx import numpy_helper


def initializers(path: str) -> dict:
    return {t.name: numpy_helper.to_array(t)
            for t in onnx.load(path).graph.initializer}


def main() -> int:
    trained, source = initializers(sys.argv[1]), initializers(sys.argv[2])
    ref = np.load(sys.argv[3])
    masks = {k[len("mask/"):]: ref[k] != 0 for k in ref.files
             if k.startswith("mask/")}
    kept = all(np.array_equal(trained[n] != 0, m) for n, m in masks.items())
    moved = all(np.abs(trained[n] - source[n])[m].max() > 0
                for n, m in masks.items())
    ok = kept and moved
    print(f"{len(masks)} sparse weights: zeros as the masks {kept}, kept "
          f"weights trained {moved}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
