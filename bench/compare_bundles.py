#!/usr/bin/env python3
"""Two or more lmopt bundles of one model side by side (an A/B of a compiler
change): alternates `lmopt-run --bench --profile` on each bundle within every
round, so that all see the same machine state, and prints per bundle the
median of the rounds' p50 latencies, its ratio to the first bundle, the
median milliseconds per run of each step kind (and of the kernel steps),
and how far its outputs are from the first bundle's.

usage: bench/compare_bundles.py INPUTS.npz A.lmopt B.lmopt [...]
                                [--threads 2] [--rounds 3] [--runs 10]
                                [--build build]
"""
import argparse
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ort import ROOT, compare, lmopt_p50, run_measured  # noqa: E402

# `lmopt-run --profile`'s per-kind table: "  attention   12   330.816   25.7%".
KIND = re.compile(r"^  (\w+)\s+(\d+)\s+([0-9.]+)\s+[0-9.]+%$", re.MULTILINE)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs")
    parser.add_argument("bundles", nargs="+")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    if len(args.bundles) < 2:
        sys.exit("error: give at least two bundles to compare")
    run = os.path.join(args.build, "bin", "lmopt-run")
    p50 = {b: [] for b in args.bundles}
    kinds = {b: {} for b in args.bundles}
    steps = {b: {} for b in args.bundles}
    with tempfile.TemporaryDirectory() as work:
        outputs = {b: os.path.join(work, f"{i}.npz")
                   for i, b in enumerate(args.bundles)}
        for _ in range(args.rounds):
            for bundle in args.bundles:
                out, _, _ = run_measured(
                    [run, bundle, "--inputs", args.inputs, "--threads",
                     str(args.threads), "--bench", str(args.runs), "--profile",
                     "--output", outputs[bundle]])
                p50[bundle].append(lmopt_p50(out))
                for kind, count, ms in KIND.findall(out):
                    kinds[bundle].setdefault(kind, []).append(float(ms))
                    steps[bundle][kind] = int(count)
        first = args.bundles[0]
        base = statistics.median(p50[first])
        print(f"threads {args.threads}, {args.rounds} rounds of {args.runs} "
              f"runs; median of the rounds' p50")
        for bundle in args.bundles:
            ms = statistics.median(p50[bundle])
            profile = ", ".join(
                f"{kind} {steps[bundle][kind]} x {statistics.median(v):.2f} ms"
                for kind, v in sorted(kinds[bundle].items()))
            agreement = ("reference" if bundle == first else
                         compare(outputs[first], outputs[bundle]))
            print(f"{os.path.basename(bundle)}: {ms:.2f} ms, "
                  f"ratio {ms / base:.3f} ({agreement})\n  {profile}")


main()
