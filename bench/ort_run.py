#!/usr/bin/env python3
"""Runs an ONNX model with onnxruntime the way bench/compare_ort.py measures
lmopt: all graph optimizations, a fixed intra-op thread count, warm-up runs,
then timed runs. Prints one JSON line (latencies in ms, peak RSS in KiB) and
optionally writes the outputs to an .npz for the agreement check.

usage: bench/ort_run.py MODEL.onnx INPUTS.npz --threads 2 --warmup 3 --runs 10
                        [--output out.npz]
"""
import argparse
import json
import resource
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("inputs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--output")
    args = parser.parse_args()

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(args.model, options,
                                   providers=["CPUExecutionProvider"])
    with np.load(args.inputs) as data:
        feeds = {i.name: data[i.name] for i in session.get_inputs()}
    for _ in range(args.warmup):
        outputs = session.run(None, feeds)
    latencies = []
    for _ in range(args.runs):
        start = time.perf_counter()
        outputs = session.run(None, feeds)
        latencies.append((time.perf_counter() - start) * 1e3)
    if args.output:
        names = [o.name for o in session.get_outputs()]
        np.savez(args.output, **dict(zip(names, outputs)))
    print(json.dumps({"latencies_ms": latencies,
                      "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
