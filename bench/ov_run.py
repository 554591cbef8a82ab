#!/usr/bin/env python3
"""Runs an ONNX model with OpenVINO the way bench/compare_ort.py measures
lmopt: compiled for the CPU with a fixed thread count and the latency hint,
warm-up runs, then timed runs. Prints one JSON line (latencies in ms, peak
RSS in KiB) and optionally writes the outputs to an .npz.

Precisions: fp32 (inference precision f32), bf16 (OpenVINO's default on
CPUs with AMX/AVX-512 BF16: inference precision bf16), int8 (NNCF's
post-training static quantization with the transformer preset, calibrated
on the inputs' rows, then run with inference precision bf16 for what stays
in floating point, as OpenVINO does by default).

usage: bench/ov_run.py MODEL.onnx INPUTS.npz --precision fp32|bf16|int8
                       --threads 2 --warmup 3 --runs 10 [--output out.npz]
needs: pip install openvino nncf (bench/compare_openvino.py installs them)
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np


def int8_model(core, onnx_path, feeds):
    """NNCF static quantization (transformer preset), made once per model
    and cached beside it as an OpenVINO IR."""
    import nncf
    import openvino as ov

    xml = onnx_path.replace(".onnx", ".ov_int8.xml")
    if os.path.exists(xml):
        return core.read_model(xml)
    model = core.read_model(onnx_path)
    rows = next(iter(feeds.values())).shape[0]
    samples = [{k: v[i:i + 1] for k, v in feeds.items()} for i in range(rows)]
    quantized = nncf.quantize(model, nncf.Dataset(samples),
                              model_type=nncf.ModelType.TRANSFORMER,
                              subset_size=len(samples))
    ov.save_model(quantized, xml)
    return quantized


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("inputs")
    parser.add_argument("--precision", choices=["fp32", "bf16", "int8"],
                        default="fp32")
    parser.add_argument("--calibration",
                        help="int8: rows to calibrate on (default: the inputs)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--output")
    args = parser.parse_args()

    import openvino as ov
    import openvino.properties as props
    import openvino.properties.hint as hints

    core = ov.Core()
    with np.load(args.inputs) as data:
        feeds = {k: data[k] for k in data.files}
    if args.precision == "int8":
        with np.load(args.calibration or args.inputs) as data:
            calibration = {k: data[k] for k in data.files}
        model = int8_model(core, args.model, calibration)
    else:
        model = core.read_model(args.model)
    config = {
        hints.performance_mode: hints.PerformanceMode.LATENCY,
        props.inference_num_threads: args.threads,
        hints.inference_precision: ov.Type.f32 if args.precision == "fp32"
        else ov.Type.bf16,
    }
    compiled = core.compile_model(model, "CPU", config)
    request = compiled.create_infer_request()
    names = [port.any_name for port in compiled.inputs]
    inputs = {name: feeds[name] for name in names}
    for _ in range(args.warmup):
        request.infer(inputs)
    latencies = []
    for _ in range(args.runs):
        start = time.perf_counter()
        request.infer(inputs)
        latencies.append((time.perf_counter() - start) * 1e3)
    if args.output:
        outputs = {port.any_name: request.get_tensor(port).data.copy()
                   for port in compiled.outputs}
        np.savez(args.output, **outputs)
    print(json.dumps({"latencies_ms": latencies,
                      "peak_rss_kib":
                      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
