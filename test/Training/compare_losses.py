"""Compares lmopt-train's --log-losses with a PyTorch reference curve.

usage: compare_losses.py LOSSES.txt REFERENCE.json RUN [--tolerance T]

REFERENCE.json holds runs (test/models/train/README.md) whose curve has one
loss per optimizer step; every step's loss must be within T (relative) of
the reference's. Prints the worst step and PASS or FAIL.
"""

import argparse
import json
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("losses")
    parser.add_argument("reference")
    parser.add_argument("run")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    args = parser.parse_args()
    want = json.load(open(args.reference))["runs"][args.run]["curve"]["loss"]
    got = [float(line) for line in open(args.losses) if line.strip()]
    if len(got) != len(want):
        print(f"{len(got)} losses, reference {len(want)}: FAIL")
        return 1
    errors = [abs(g - w) / abs(w) for g, w in zip(got, want)]
    worst = max(range(len(errors)), key=errors.__getitem__)
    verdict = "PASS" if errors[worst] <= args.tolerance else "FAIL"
    print(f"run {args.run}: {len(got)} steps, max relative error "
          f"{errors[worst]:.2e} at step {worst + 1}: {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
