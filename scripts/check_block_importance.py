#!/usr/bin/env python3
"""Check lmopt-compile's layer selection report against PyTorch.

    check_block_importance.py compile.log ref.npz [--atol 1e-5]

Reads the "prune: layer I: importance S, ..." lines of `lmopt-compile
--prune=layers=N` and compares each score with `importance` in ref.npz
(scripts/make_layer_reduce_fixtures.py, from Hugging Face's
output_hidden_states), and the layers not reported dropped with `keep`.
"""

import argparse
import re
import sys

import numpy as np

LINE = re.compile(r"^prune: layer (\d+): importance ([0-9.eE+-]+), (dropped)?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log")
    parser.add_argument("ref")
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args()
    ref = np.load(args.ref)
    scores, kept = {}, []
    with open(args.log) as fh:
        for line in fh:
            match = LINE.match(line)
            if match:
                layer = int(match.group(1))
                scores[layer] = float(match.group(2))
                if not match.group(3):
                    kept.append(layer)
    want = ref["importance"]
    problems = []
    if sorted(scores) != list(range(len(want))):
        problems.append(f"scores for layers {sorted(scores)}, want 0 to "
                        f"{len(want) - 1}")
    for layer, score in sorted(scores.items()):
        if layer < len(want):
            diff = abs(score - want[layer])
            print(f"layer {layer}: lmopt {score:.6f}, PyTorch "
                  f"{want[layer]:.6f}, diff {diff:.2g}")
            if not diff <= args.atol:
                problems.append(f"layer {layer}: {score} vs {want[layer]}")
    if kept != list(ref["keep"]):
        problems.append(f"kept {kept}, PyTorch's ranking keeps "
                        f"{list(ref['keep'])}")
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    print("PASS" if not problems else "FAIL")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
