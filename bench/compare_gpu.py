#!/usr/bin/env python3
"""lmopt's CUDA target against PyTorch on the same GPU, model shape and inputs.

For each batch: PyTorch eager, and PyTorch with the whole forward captured
once as a CUDA graph and replayed (its fastest form without a compiler), on
the Hugging Face model built from the same config as the bundle's ONNX
export (bench/make_models.py; random weights on both sides, which time like
trained ones), against `lmopt-run --bench` on the bundle compiled here with
`lmopt-compile --target=cuda` (scripts/gpu-check.sh compiles and carries
it). Rounds alternate between the engines so both see the same GPU state;
the table gives per engine the median of the rounds' medians and the ratio
lmopt / PyTorch-with-graph. Runs on the GPU machine: needs torch with CUDA
and transformers, not lmopt's build.

`--dtype float16` / `bfloat16` runs PyTorch in that dtype, for a bundle
compiled with `--precision=fp16` / `bf16`. `--bundle` may hold `{batch}`
(one static-shape bundle per batch).

usage: bench/compare_gpu.py --lmopt-run BIN --bundle B.lmopt
                            --inputs 'bench/models/NAME.b{batch}.inputs.npz'
                            [--model bert_gpu_small] [--batches 1,8,32]
                            [--rounds 3] [--runs 50] [--dtype float32]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

P50 = re.compile(r"latency p50 ([0-9.]+) ms")


def lmopt_p50(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({proc.returncode}):\n"
                 f"{proc.stdout}\n{proc.stderr}")
    match = P50.search(proc.stdout)
    if not match:
        sys.exit("error: no 'latency p50' line in lmopt-run's output:\n" + proc.stdout)
    return float(match.group(1))


def torch_timings(model, host_feeds, runs, torch):
    """Median ms per forward: eager, then one captured CUDA graph replayed.
    Like `lmopt-run --bench`, each run takes its inputs from host memory and
    leaves its output in host memory."""
    feeds = {n: t.to("cuda") for n, t in host_feeds.items()}
    # Hugging Face builds the additive attention mask from host tensors,
    # which a CUDA graph cannot capture; the forward runs the embeddings and
    # the encoder itself with that mask built on the GPU each run (the same
    # work as the model's own forward).
    dtype = next(model.parameters()).dtype

    def forward():
        mask = feeds["attention_mask"][:, None, None, :].to(dtype)
        mask = (1.0 - mask) * torch.finfo(dtype).min
        hidden = model.embeddings(input_ids=feeds["input_ids"],
                                  token_type_ids=feeds.get("token_type_ids"))
        out = model.encoder(hidden, attention_mask=mask)
        return out[0] if isinstance(out, tuple) else out.last_hidden_state

    def upload():
        for n, t in feeds.items():
            t.copy_(host_feeds[n])

    with torch.no_grad():
        for _ in range(5):
            forward()
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            upload()
            forward().cpu()
            times.append((time.perf_counter() - start) * 1e3)
        eager = statistics.median(times)

        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                forward()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            output = forward()
        for _ in range(5):
            graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            upload()
            graph.replay()
            output.cpu()
            times.append((time.perf_counter() - start) * 1e3)
        graphed = statistics.median(times)
    return eager, graphed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lmopt-run", required=True)
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--inputs", required=True,
                        help="inputs per batch, with {batch} in the path")
    parser.add_argument("--model", default="bert_gpu_small")
    parser.add_argument("--batches", default="1,8,32")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "float16", "bfloat16"],
                        help="PyTorch's dtype (match the bundle's --precision)")
    parser.add_argument("--lmopt-args", default="",
                        help="extra lmopt-run flags (e.g. --no-record-runs)")
    parser.add_argument("--tf32", action="store_true",
                        help="f32 matrix products on TF32 tensor cores, on both "
                             "sides (lmopt-run --tf32)")
    args = parser.parse_args()

    import torch

    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    if args.tf32:
        args.lmopt_args += " --tf32"
    from make_models import build

    model, names, _ = build(args.model)
    model = model.eval().to("cuda", dtype=getattr(torch, args.dtype))
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"model {args.model} ({args.dtype}{', TF32' if args.tf32 else ''}), "
          f"lmopt-run flags: {args.lmopt_args.strip() or 'none'}")
    print(f"{'batch':>5}  {'torch eager':>11}  {'torch graph':>11}  "
          f"{'lmopt':>9}  {'lmopt/graph':>11}  {'lmopt/eager':>11}")
    for batch in [int(b) for b in args.batches.split(",")]:
        path = args.inputs.format(batch=batch)
        arrays = np.load(path)
        feeds = {n: torch.from_numpy(arrays[n]).pin_memory() for n in names}
        eager, graphed, ours = [], [], []
        for _ in range(args.rounds):
            e, g = torch_timings(model, feeds, args.runs, torch)
            eager.append(e)
            graphed.append(g)
            bundle = args.bundle.format(batch=batch)
            ours.append(lmopt_p50([args.lmopt_run, bundle, "--inputs", path,
                                   "--bench", str(args.runs), "--warmup", "5"]
                                  + args.lmopt_args.split()))
        e, g, o = (statistics.median(v) for v in (eager, graphed, ours))
        print(f"{batch:>5}  {e:>9.3f}ms  {g:>9.3f}ms  {o:>7.3f}ms  "
              f"{o / g:>11.2f}  {o / e:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
