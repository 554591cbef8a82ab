#!/usr/bin/env python3
"""Generated kernels' share of a run, two or more bundles side by side.

Runs `lmopt-run BUNDLE --inputs INPUTS --threads T --bench N --profile` for
each bundle in turn, for several rounds (the order rotating each round, so
that every bundle sees the same machine state), and prints per bundle the
median over the rounds of: the p50 latency, the time per run in kernel
steps, and the time per run of each step kind, with the ratio to the first
bundle. Typical use: the same model compiled by two builds of lmopt-compile
(before and after a code generator change), run by one lmopt-run.

--steps REGEX also prints the mean time per run of the profiled steps whose
name matches (e.g. 'LayerNorm'); lmopt-run's profile lists only its slowest
steps, so this needs an lmopt-run that lists them all.

usage: bench/kernel_profile.py --inputs X.npz [--threads 2] [--rounds 5]
                               [--runs 10] [--build build] [--steps REGEX]
                               LABEL=BUNDLE.lmopt LABEL=BUNDLE.lmopt ...
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LATENCY = re.compile(r"latency p50 ([0-9.]+) ms")
KIND = re.compile(r"^\s+([a-z_]+)\s+(\d+)\s+([0-9.]+)\s+[0-9.]+%$")
STEP = re.compile(r"^\s+(\S+) ([a-z_]+)\s+([0-9.]+) ms per run$")


def run_once(lmopt_run, bundle, args):
    cmd = [lmopt_run, bundle, "--inputs", args.inputs, "--threads",
           str(args.threads), "--bench", str(args.runs), "--profile"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    latency = float(LATENCY.search(proc.stdout).group(1))
    kinds = {}
    steps = []
    for line in proc.stdout.splitlines():
        match = KIND.match(line)
        if match:
            kinds[match.group(1)] = (int(match.group(2)),
                                     float(match.group(3)))
        match = STEP.match(line)
        if match and args.steps and re.search(args.steps, match.group(1)):
            steps.append(float(match.group(3)))
    if steps:
        kinds["steps"] = (len(steps), statistics.mean(steps))
    return latency, kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundles", nargs="+", help="LABEL=BUNDLE.lmopt")
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--steps", default="",
                        help="regex: also the mean time of matching steps")
    args = parser.parse_args()
    lmopt_run = os.path.join(args.build, "bin", "lmopt-run")
    bundles = []
    for spec in args.bundles:
        label, sep, path = spec.partition("=")
        if not sep:
            sys.exit(f"error: '{spec}' is not LABEL=BUNDLE.lmopt")
        bundles.append((label, path))

    results = {label: [] for label, _ in bundles}
    for r in range(args.rounds):
        order = bundles[r % len(bundles):] + bundles[:r % len(bundles)]
        for label, path in order:
            results[label].append(run_once(lmopt_run, path, args))

    def median_of(label, pick):
        return statistics.median(pick(x) for x in results[label])

    kinds = sorted({k for runs in results.values() for _, ks in runs
                    for k in ks})
    first = bundles[0][0]
    print(f"{args.rounds} rounds x {args.runs} runs, {args.threads} threads; "
          "medians over rounds, ratio to " + first)
    header = ["bundle", "p50 ms", "ratio"]
    for kind in kinds:
        name = f"mean '{args.steps}' step" if kind == "steps" else kind
        header += [f"{name} ms", "ratio"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, _ in bundles:
        row = [label]
        latency = median_of(label, lambda x: x[0])
        base = median_of(first, lambda x: x[0])
        row += [f"{latency:.2f}", f"{latency / base:.3f}"]
        for kind in kinds:
            value = median_of(label, lambda x: x[1].get(kind, (0, 0.0))[1])
            base = median_of(first, lambda x: x[1].get(kind, (0, 0.0))[1])
            row += [f"{value:.2f}",
                    f"{value / base:.3f}" if base else "-"]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
