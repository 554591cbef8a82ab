#!/usr/bin/env python3
"""Runs the ONNX backend node tests through lmopt and reports pass counts
per operator.

The test cases come from the installed `onnx` package
(`onnx.backend.test.case.node`, the definitions the ONNX backend test data is
generated from). For each case the model is written to a temporary folder
and imported with `lmopt-translate --import-onnx` (which verifies every op).
With `--interpret`, the imported model is also run on the case's inputs by
`lmopt-interpret` and its outputs compared with the case's expected outputs.

usage: scripts/onnx_node_tests.py [--build build] [--interpret]
           [--filter REGEX] [--markdown docs/onnx-node-tests.md] [--jobs N]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def collect():
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return collect_testcases()


def importer_ops():
    """Operator types in the importer's converter table (lib/Importer/ONNX)."""
    folder = os.path.join(ROOT, "lib", "Importer", "ONNX")
    ops = set()
    for name in os.listdir(folder):
        if name.endswith(".cpp"):
            with open(os.path.join(folder, name)) as f:
                ops.update(re.findall(r'\{"[\w.]*",\s*"(\w+)",\s*\d+', f.read()))
    return ops


def primary_op(case):
    """The operator a case tests: its single node's op type, or for expanded
    (function body) cases the op named in the test."""
    ops = [n.op_type for n in case.model.graph.node]
    if len(set(ops)) == 1 and not case.name.endswith("_expanded"):
        return ops[0]
    name = case.name[len("test_"):].replace("_expanded", "")
    known = {n.op_type.lower(): n.op_type for n in case.model.graph.node}
    for key in sorted(known, key=len, reverse=True):
        if name.startswith(key):
            return known[key]
    return ops[-1] if ops else "?"


def run_case(case, build, interpret, rtol, atol):
    import onnx

    translate = os.path.join(build, "bin", "lmopt-translate")
    with tempfile.TemporaryDirectory() as tmp:
        model_path = os.path.join(tmp, "model.onnx")
        onnx.save(case.model, model_path)
        imported = subprocess.run(
            [translate, "--import-onnx", model_path, "-o", os.devnull],
            capture_output=True, text=True, timeout=60)
        if imported.returncode != 0:
            message = imported.stderr.strip().splitlines()
            first = message[0] if message else f"exit {imported.returncode}"
            kind = "unsupported" if "unsupported ONNX operator" in first else "import"
            return kind, first
        if not interpret or not case.data_sets:
            return "imported", ""
        inputs, outputs = case.data_sets[0]
        graph = case.model.graph
        feeds = {i.name: np.ascontiguousarray(v) for i, v in zip(graph.input, inputs)}
        refs = {o.name: np.ascontiguousarray(v) for o, v in zip(graph.output, outputs)}
        arrays = list(feeds.values()) + list(refs.values())
        if any(a.dtype.kind == "V" for a in arrays):
            # bfloat16 and the float8 types have no NumPy dtype, so no .npz.
            return "imported", ""
        # Half precision gets a tolerance of its own: the reference computes
        # in fp16 step by step, lmopt rounds once per op.
        if any(a.dtype == np.float16 for a in arrays):
            rtol, atol = max(rtol, 2e-3), max(atol, 2e-3)
        np.savez(os.path.join(tmp, "in.npz"), **feeds)
        np.savez(os.path.join(tmp, "ref.npz"), **refs)
        ran = subprocess.run(
            [os.path.join(build, "bin", "lmopt-interpret"), model_path,
             "--inputs", os.path.join(tmp, "in.npz"),
             "--compare", os.path.join(tmp, "ref.npz"),
             f"--rtol={rtol}", f"--atol={atol}"],
            capture_output=True, text=True, timeout=120)
        if ran.returncode != 0:
            lines = (ran.stderr + ran.stdout).strip().splitlines()
            bad = [l for l in lines if "FAIL" in l or "error" in l]
            detail = (bad or lines or [f"exit {ran.returncode}"])[0]
            return "numerics", detail
        return "passed", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--interpret", action="store_true",
                        help="also compare outputs through lmopt-interpret")
    parser.add_argument("--filter", default="", help="regex on test names")
    parser.add_argument("--markdown", help="write the per-op table here")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    cases = [c for c in collect() if re.search(args.filter, c.name)]
    by_op = collections.defaultdict(collections.Counter)
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_case, c, args.build, args.interpret,
                               args.rtol, args.atol): c for c in cases}
        for future in concurrent.futures.as_completed(futures):
            case = futures[future]
            kind, detail = future.result()
            by_op[primary_op(case)][kind] += 1
            if kind not in ("imported", "passed", "unsupported"):
                failures.append((primary_op(case), case.name, kind, detail))

    ok = "passed" if args.interpret else "imported"
    table = importer_ops()
    supported = {op: c for op, c in by_op.items() if op in table}
    rows = [f"| {op} | {sum(c.values())} | {c[ok]} | {c['import']} |"
            + (f" {c['numerics']} |" if args.interpret else "")
            for op, c in sorted(supported.items())]
    header = ("| op | tests | " + ("import + numerics pass" if args.interpret
                                   else "import + verify pass")
              + " | import fails |" + (" numerics fail |" if args.interpret else ""))
    rule = "|---|---|---|---|" + ("---|" if args.interpret else "")
    total = sum(sum(c.values()) for c in supported.values())
    passed = sum(c[ok] for c in supported.values())
    unsupported = sorted(op for op in by_op if op not in supported)
    summary = (f"{passed} of {total} node tests of {len(supported)} supported "
               f"operators pass ({'import, verification and numerics' if args.interpret else 'import and verification'}); "
               f"{len(unsupported)} operators are not supported.")
    print(summary)
    failures = [f for f in failures if f[0] in supported]
    if args.verbose:
        for _, name, kind, detail in sorted(failures):
            print(f"  {kind}: {name}: {detail}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# ONNX backend node tests\n\n"
                    "Generated by `scripts/onnx_node_tests.py"
                    + (" --interpret" if args.interpret else "")
                    + "` from the node test cases of the installed `onnx` "
                    "package. Only operators the importer supports are listed; "
                    "a test of a supported operator can still fail when it uses "
                    "an attribute value, type or opset outside what is "
                    "supported.\n\n" + summary + "\n\n" + header + "\n" + rule
                    + "\n" + "\n".join(rows) + "\n\n## Failures\n\n"
                    + "\n".join(f"- `{n}` ({k}): {d}"
                                for _, n, k, d in sorted(failures))
                    + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
