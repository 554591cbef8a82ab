#!/usr/bin/env python3
"""Check a model written by `lmopt-translate --export-onnx`.

The model must pass `onnx.checker` (full check, with shape inference), and
ONNX Runtime's outputs on the given inputs must match the reference outputs
by name. References come from outside the exporter: ONNX Runtime on the
original model (a fixture's NAME.ref.npz) or the reference evaluator
(`lmopt-interpret --output`) on the exported .mlir.

    check_export.py out.onnx --inputs in.npz --ref ref.npz [--ref ref2.npz]
                   [--rtol R --atol A] [--op-counts] [--ort-optimize]

Prints one line per output and reference ("NAME: shape 2x12x64, max abs
diff D: PASS"),
and with --op-counts the node count of each operator (domain:op) first.
Exits 1 if the model is invalid or an output does not match.
"""

import argparse
import collections
import sys

import numpy as np
import onnx
import onnxruntime as ort


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--inputs", required=True, help="inputs by name (.npz)")
    parser.add_argument("--ref", required=True, action="append",
                        help="expected outputs (.npz); repeat to compare "
                             "with several references in turn")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--ort-optimize", action="store_true",
                        help="run with ONNX Runtime's graph optimizations "
                             "(ORT_ENABLE_ALL) as users do, int4 fusions kept "
                             "exact (accuracy level 0)")
    parser.add_argument("--op-counts", action="store_true",
                        help="print how many nodes each operator has")
    args = parser.parse_args()

    # Path, not proto: external data is then resolved next to the model.
    onnx.checker.check_model(args.model, full_check=True)
    model = onnx.load(args.model, load_external_data=False)
    if args.op_counts:
        counts = collections.Counter(
            f"{node.domain or 'ai.onnx'}:{node.op_type}"
            for node in model.graph.node)
        for name, count in sorted(counts.items()):
            print(f"op {name}: {count}")

    options = ort.SessionOptions()
    if args.ort_optimize:
        options.graph_optimization_level = \
            ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # DequantizeLinear(int4) + MatMul fuses into MatMulNBits, which by
        # default quantizes its input to int8 (level 4): an approximation
        # of ONNX Runtime's own choosing, not the model's semantics.
        options.add_session_config_entry(
            "session.qdq_matmulnbits_accuracy_level", "0")
    else:
        # Run the graph as written, as the fixtures' references were
        # produced.
        options.graph_optimization_level = \
            ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(args.model, options,
                                   providers=["CPUExecutionProvider"])
    feeds = dict(np.load(args.inputs))
    wanted = {i.name for i in session.get_inputs()}
    feeds = {name: value for name, value in feeds.items() if name in wanted}
    outputs = session.run(None, feeds)
    ok = True
    for path in args.ref:
        ok = compare(session, outputs, np.load(path), args) and ok
    return 0 if ok else 1


def compare(session, outputs, reference, args) -> bool:
    ok = True
    for info, value in zip(session.get_outputs(), outputs):
        if info.name not in reference:
            print(f"{info.name}: no reference output: FAIL")
            ok = False
            continue
        expected = reference[info.name]
        shape = "x".join(str(d) for d in value.shape) or "scalar"
        if value.shape != expected.shape:
            print(f"{info.name}: shape {shape}, expected "
                  f"{'x'.join(str(d) for d in expected.shape)}: FAIL")
            ok = False
            continue
        diff = np.abs(value.astype(np.float64) - expected.astype(np.float64))
        worst = float(np.nanmax(diff)) if diff.size else 0.0
        close = np.allclose(value, expected, rtol=args.rtol, atol=args.atol,
                            equal_nan=True)
        print(f"{info.name}: shape {shape}, max abs diff {worst:.3g}: "
              f"{'PASS' if close else 'FAIL'}")
        ok = ok and close
    return ok


if __name__ == "__main__":
    sys.exit(main())
