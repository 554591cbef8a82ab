#!/usr/bin/env python3
"""Check the committed ONNX fixtures against their reference outputs.

For every fixture in test/models/onnx/manifest.json: the .onnx file is the one
the manifest describes (SHA-256), and ONNX Runtime on NAME.inputs.npz still
reproduces NAME.ref.npz. Needs only numpy and onnxruntime.

    python3 scripts/check_fixtures.py [--dir test/models/onnx] [NAME ...]

Exits 1 and names every mismatch when something does not match.
"""

import argparse
import glob
import hashlib
import json
import os
import sys

import numpy as np
import onnxruntime as ort

DEFAULT_DIR = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "models", "onnx"
)


def session(path: str) -> ort.InferenceSession:
    # The settings the references were produced with.
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def load_npz(path: str) -> dict:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def compare(name: str, got: dict, want: dict, atol: float, rtol: float) -> list:
    problems = []
    if list(got) != list(want):
        return [f"{name}: outputs {list(got)}, reference has {list(want)}"]
    for key, ref in want.items():
        out = got[key]
        if out.dtype != ref.dtype or out.shape != ref.shape:
            problems.append(
                f"{name}: output '{key}' is {out.dtype}{list(out.shape)}, "
                f"reference is {ref.dtype}{list(ref.shape)}"
            )
            continue
        if np.issubdtype(ref.dtype, np.floating):
            ok = np.allclose(out, ref, atol=atol, rtol=rtol)
        else:
            ok = np.array_equal(out, ref)
        if not ok:
            diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
            where = np.unravel_index(int(np.argmax(diff)), diff.shape)
            problems.append(
                f"{name}: output '{key}' differs from the reference: max abs diff "
                f"{diff.max():.3g} at index {list(map(int, where))} "
                f"(got {out[where]}, want {ref[where]}; atol {atol}, rtol {rtol})"
            )
    return problems


def check_fixture(directory: str, name: str, entry: dict, atol, rtol) -> list:
    stem = os.path.join(directory, name)
    missing = [
        os.path.basename(p)
        for p in (stem + ".onnx", stem + ".inputs.npz", stem + ".ref.npz")
        if not os.path.isfile(p)
    ]
    if missing:
        return [f"{name}: missing {', '.join(missing)}"]
    with open(stem + ".onnx", "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    if digest != entry["sha256"]:
        return [
            f"{name}: {name}.onnx does not match manifest.json (sha256 {digest}, "
            f"manifest {entry['sha256']}); regenerate with scripts/make_fixtures.py"
        ]
    inputs = load_npz(stem + ".inputs.npz")
    want = load_npz(stem + ".ref.npz")
    try:
        sess = session(stem + ".onnx")
        names = [o.name for o in sess.get_outputs()]
        got = dict(zip(names, sess.run(names, inputs)))
    except Exception as exc:  # ORT reports load and run errors as exceptions
        return [f"{name}: onnxruntime failed: {exc}"]
    return compare(name, got, want, atol, rtol)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=os.path.normpath(DEFAULT_DIR))
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("names", nargs="*", help="fixtures to check (default: all)")
    args = parser.parse_args()

    manifest_path = os.path.join(args.dir, "manifest.json")
    try:
        with open(manifest_path) as fh:
            fixtures = json.load(fh)["fixtures"]
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: cannot read '{manifest_path}': {exc}", file=sys.stderr)
        return 1

    problems = []
    on_disk = {
        os.path.basename(p)[: -len(".onnx")]
        for p in glob.glob(os.path.join(args.dir, "*.onnx"))
    }
    for name in sorted(on_disk - set(fixtures)):
        problems.append(f"{name}: {name}.onnx is not listed in manifest.json")
    unknown = [n for n in args.names if n not in fixtures]
    for name in unknown:
        problems.append(f"{name}: no such fixture in manifest.json")

    for name, entry in fixtures.items():
        if args.names and name not in args.names:
            continue
        found = check_fixture(args.dir, name, entry, args.atol, args.rtol)
        print(f"{'FAIL' if found else 'ok  '} {name}")
        problems += found

    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
