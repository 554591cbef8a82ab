"""Compares members of a saved-states .npz with reference arrays.

usage: compare_states.py STATES.npz REFERENCE.npz [--prefix P] [--tolerance T]

Each reference member NAME (other than those listed with --skip) is compared
with the states' member PREFIX + NAME. The error of a tensor is its largest
absolute difference divided by its largest reference magnitude, floored at
1e-6 of the largest magnitude over all tensors: a tensor whose exact value
is zero (an attention key bias's gradient) is then judged by how small its
difference is against the model's gradients, not against rounding noise.
Prints one line per tensor and a summary line ending in PASS or FAIL.
"""

import argparse
import sys

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("states")
    parser.add_argument("reference")
    parser.add_argument("--prefix", default="")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--skip", action="append", default=[])
    args = parser.parse_args()
    states = np.load(args.states)
    reference = np.load(args.reference)
    names = [n for n in reference.files if n not in args.skip]
    scale = max(float(np.abs(reference[n]).max()) for n in names)
    worst = 0.0
    failed = []
    for name in names:
        key = args.prefix + name
        if key not in states.files:
            print(f"{key}: missing from {args.states}")
            failed.append(key)
            continue
        got, want = states[key], reference[name]
        if got.shape != want.shape:
            print(f"{key}: shape {got.shape}, reference {want.shape}")
            failed.append(key)
            continue
        floor = max(float(np.abs(want).max()), 1e-6 * scale)
        error = float(np.abs(got.astype(np.float64) - want).max()) / floor
        worst = max(worst, error)
        if error > args.tolerance:
            failed.append(key)
        print(f"{key}: error {error:.2e}")
    verdict = "PASS" if not failed else "FAIL (" + ", ".join(failed) + ")"
    print(f"{len(names)} tensors, max error {worst:.2e}: {verdict}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
