"""Compares members of a saved-states .npz with reference arrays.

usage: compare_states.py STATES.npz REFERENCE.npz [--prefix P] [--tolerance T]
                         [--names-from MODEL.onnx] [--skip NAME]
                         [--skip-prefix P]

Each reference member NAME (other than those listed with --skip or starting
with a --skip-prefix) is compared
with the states' member PREFIX + NAME. The error of a tensor is its largest
absolute difference divided by its largest reference magnitude, floored at
1e-6 of the largest magnitude over all tensors: a tensor whose exact value
is zero (an attention key bias's gradient) is then judged by how small its
difference is against the model's gradients, not against rounding noise.
Prints one line per tensor and a summary line ending in PASS or FAIL.

With --names-from, a reference member named after a TorchScript exporter's
transposed Linear weight (`onnx::MatMul_<n>`, the fixtures' keys) is looked
up under the name lmopt gives that parameter: the path of the MatMul node
reading it, dotted, then `.weight` (`/bert/encoder/layer.0/attention/self/
query/MatMul` -> `bert.encoder.layer.0.attention.self.query.weight`).
"""

import argparse
import sys

import numpy as np


def recovered_names(model_path: str) -> dict:
    import onnx

    model = onnx.load(model_path)
    readers = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node.name)
    names = {}
    for init in model.graph.initializer:
        nodes = readers.get(init.name, [])
        modules = {n.rsplit("/", 1)[0].lstrip("/").replace("/", ".")
                   for n in nodes}
        if init.name.startswith("onnx::MatMul_") and len(modules) == 1:
            names[init.name] = modules.pop() + ".weight"
    return names


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("states")
    parser.add_argument("reference")
    parser.add_argument("--prefix", default="")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--skip", action="append", default=[])
    parser.add_argument("--skip-prefix", action="append", default=[])
    parser.add_argument("--names-from")
    args = parser.parse_args()
    renamed = recovered_names(args.names_from) if args.names_from else {}
    states = np.load(args.states)
    reference = np.load(args.reference)
    names = [n for n in reference.files if n not in args.skip and
             not any(n.startswith(p) for p in args.skip_prefix)]
    scale = max(float(np.abs(reference[n]).max()) for n in names)
    worst = 0.0
    failed = []
    for name in names:
        key = args.prefix + renamed.get(name, name)
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
