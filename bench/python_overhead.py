"""Per-run overhead of lmopt's Python API over its C API, side by side with
onnxruntime's Python InferenceSession.run overhead, on one small model.

The overhead of a Python call is its latency minus the latency of the same
work without Python: for lmopt, Session.run minus the C++ Session's run with
the same inputs and output copies (Session.bench times it in a C++ loop, as
lmopt-run --bench and the C API's lmoptSessionRun do); for onnxruntime, InferenceSession.run minus
run_with_iobinding's pre-bound run (the closest it has to a run without
Python-side conversions). Runs are interleaved, one thread each, medians.

    PYTHONPATH=build/python python bench/python_overhead.py [--runs N]
"""
import argparse
import os
import statistics
import time

# One OpenMP thread, set before the runtime loads: Session(threads=1) sets
# the library steps' threads, but an OpenMP region left at the default team
# then waits at its barrier for a core that a neighbour process holds, and
# runs flip between ~55 us and ~6 ms on a loaded 2-core machine.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import onnxruntime as ort

import lmopt

ROOT = os.path.join(os.path.dirname(__file__), "..")
MODEL = os.path.join(ROOT, "test", "models", "onnx", "bert.onnx")
INPUTS = os.path.join(ROOT, "test", "models", "onnx", "bert.inputs.npz")


def median_us(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    inputs = dict(np.load(INPUTS))
    bundle = lmopt.compile(MODEL, input_shapes={k: v.shape
                                                for k, v in inputs.items()})
    session = lmopt.Session(bundle, threads=1)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    ort_session = ort.InferenceSession(MODEL, options,
                                       providers=["CPUExecutionProvider"])
    binding = ort_session.io_binding()
    for name, value in inputs.items():
        binding.bind_cpu_input(name, value)
    for output in ort_session.get_outputs():
        binding.bind_output(output.name)

    rows = {"lmopt": [], "lmopt C++": [], "ort": [], "ort iobinding": []}
    for _ in range(args.rounds):  # interleaved rounds
        rows["lmopt"].append(median_us(lambda: session.run(inputs),
                                       args.runs))
        rows["lmopt C++"].append(
            session.bench(inputs, runs=args.runs, warmup=10)["median_ms"] *
            1e3)
        rows["ort"].append(median_us(lambda: ort_session.run(None, inputs),
                                     args.runs))
        rows["ort iobinding"].append(median_us(
            lambda: ort_session.run_with_iobinding(binding), args.runs))
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"model {os.path.basename(MODEL)}, inputs "
          f"{ {k: v.shape for k, v in inputs.items()} }, 1 thread, "
          f"{args.rounds} rounds x {args.runs} runs, medians in us")
    for name, value in med.items():
        print(f"  {name:14s} {value:9.1f} us per run")
    print(f"python overhead: lmopt {med['lmopt'] - med['lmopt C++']:.1f} us "
          f"(Session.run over the C++ run), onnxruntime "
          f"{med['ort'] - med['ort iobinding']:.1f} us (run over "
          f"run_with_iobinding)")


if __name__ == "__main__":
    main()
