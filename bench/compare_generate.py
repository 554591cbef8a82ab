#!/usr/bin/env python3
"""Greedy generation with a key/value cache: lmopt against onnxruntime on the
same past-key-values export, prompt and thread count.

Compiles the export with `lmopt-compile --kv-cache` (a prefill and a decode
entry sharing the weights, the cache kept in the session's states and
appended in place), then alternates rounds of `lmopt-run --generate` and
onnxruntime running the export step by step (all graph optimizations; each
step's presents fed back as the next step's past, as a user's loop does), so
that both see the same machine state. Each round runs one untimed
generation first (a warm session: steps built and weights packed for these
shapes), then times one. Prints, per engine, the median over rounds of the
per-round median decode-step latency and the prefill time,
the ratio lmopt / onnxruntime, and whether the tokens agree.

Model: bench/make_models.py --only gpt2_small_lm_past (GPT-2 small with its
LM head, random weights), or --only llama_135m_lm_past (a Llama-style
~135M decoder with grouped-query attention).

With --int4, both engines run int4 weights: lmopt compiles with
`--quantize=int4-weight --block-size=32` (symmetric), onnxruntime runs the
export quantized by its own MatMulNBitsQuantizer (4 bits, block 32,
symmetric, accuracy level 4: int8 activations in its kernels). Tokens may
then differ between the engines (each rounds its own way); the line says
so. onnxruntime's quantizer needs the onnx-ir package (installed when
missing; not needed by the tests or CI).

With --quantize MODE, lmopt compiles with `--quantize=MODE` (bf16,
int8-dynamic, ...) against onnxruntime's f32 model: fewer weight bytes per
step, and tokens that may then differ from f32's (the line says so).

usage: bench/compare_generate.py [--model bench/models/gpt2_small_lm_past.onnx]
                                 [--batch 1] [--prompt-length 32]
                                 [--new-tokens 32] [--kv-cache 256]
                                 [--threads 2] [--rounds 5] [--build build]
                                 [--quantize MODE] [--int4]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from make_generation_reference import Model  # noqa: E402


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({proc.returncode}):\n"
                 f"{proc.stdout}\n{proc.stderr}")
    return proc.stdout, proc.stderr


def ort_int4(path, out):
    """The export with its MatMuls as MatMulNBits (int4, block 32)."""
    import importlib
    try:
        importlib.import_module("onnx_ir")  # the quantizer's dependency
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q",
                               "onnx-ir"])
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        MatMulNBitsQuantizer)

    quantizer = MatMulNBitsQuantizer(onnx.load(path), bits=4, block_size=32,
                                     is_symmetric=True, accuracy_level=4)
    quantizer.process()
    quantizer.model.save_model_to_file(out, use_external_data_format=False)
    return out


def lmopt_round(args, bundle, prompt_path):
    out, _ = run([os.path.join(args.build, "bin", "lmopt-run"), bundle,
                  "--generate", str(args.new_tokens), "--prompt", prompt_path,
                  "--threads", str(args.threads), "--warmup", "1"])
    tokens = [list(map(int, line.split(":")[1].split()))
              for line in out.splitlines() if line.startswith("tokens[")]
    prefill = float(re.search(r"prefill: .* in ([0-9.]+) ms", out).group(1))
    decode = float(re.search(r"decode: .* p50 ([0-9.]+) ms", out).group(1))
    return np.array(tokens), prefill, decode


def ort_round(model, prompt, new_tokens):
    """One generation after one untimed warm-up, as lmopt_round does."""
    ort_generate(model, prompt, new_tokens)
    return ort_generate(model, prompt, new_tokens)


def ort_generate(model, prompt, new_tokens):
    batch = prompt.shape[0]
    past = model.empty_past(batch)
    ids, past_len, tokens, steps = prompt, 0, [], []
    prefill = 0.0
    for i in range(new_tokens):
        start = time.perf_counter()
        logits, past = model.step(ids, past_len, past)
        ids = np.argmax(logits[:, -1, :], axis=-1).astype(np.int64)[:, None]
        elapsed = (time.perf_counter() - start) * 1e3
        if i == 0:
            prefill = elapsed
        else:
            steps.append(elapsed)
        past_len = past_len + (prompt.shape[1] if i == 0 else 1)
        tokens.append(ids)
    return np.concatenate(tokens, axis=1), prefill, statistics.median(steps)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=os.path.join(
        ROOT, "bench", "models", "gpt2_small_lm_past.onnx"))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--prompt-length", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--kv-cache", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--quantize", default="")
    parser.add_argument("--int4", action="store_true",
                        help="int4 weights in both engines (see above)")
    args = parser.parse_args()
    if args.int4:
        args.quantize = "int4-weight"
    if not os.path.exists(args.model):
        sys.exit(f"error: no '{args.model}'; run bench/make_models.py --only "
                 "gpt2_small_lm_past first")

    with tempfile.TemporaryDirectory() as tmp:
        model = Model(ort_int4(args.model, os.path.join(tmp, "int4.onnx"))
                      if args.int4 else args.model, args.threads)
        vocab = model.session.get_outputs()[0].shape[-1]
        rng = np.random.default_rng(0)
        prompt = rng.integers(1, vocab, size=(args.batch, args.prompt_length),
                              dtype=np.int64)
        bundle = os.path.join(tmp, "generate.lmopt")
        prompt_path = os.path.join(tmp, "prompt.npy")
        np.save(prompt_path, prompt)
        start = time.perf_counter()
        run([os.path.join(args.build, "bin", "lmopt-compile"), args.model,
             f"--kv-cache={args.kv_cache}",
             f"--max-shape=input_ids:{args.batch}x{args.prompt_length}",
             "-o", bundle] +
            ([f"--quantize={args.quantize}"] if args.quantize else []) +
            (["--block-size=32"] if args.int4 else []))
        print(f"compiled in {time.perf_counter() - start:.1f} s: "
              f"{os.path.getsize(bundle) / 2**20:.0f} MiB")
        lm_decode, lm_prefill, ort_decode, ort_prefill = [], [], [], []
        agree = True
        for _ in range(args.rounds):
            tokens, prefill, decode = lmopt_round(args, bundle, prompt_path)
            lm_prefill.append(prefill)
            lm_decode.append(decode)
            ref, prefill, decode = ort_round(model, prompt, args.new_tokens)
            ort_prefill.append(prefill)
            ort_decode.append(decode)
            agree &= tokens.shape == ref.shape and bool((tokens == ref).all())

    def med(values):
        return statistics.median(values)

    print(f"batch {args.batch}, prompt {args.prompt_length}, "
          f"{args.new_tokens} new tokens, cache {args.kv_cache}, "
          f"threads {args.threads}, {args.rounds} interleaved rounds, "
          f"lmopt {args.quantize or 'f32'}, onnxruntime "
          f"{'int4 (MatMulNBits)' if args.int4 else 'f32'}")
    print(f"{'engine':<12} {'prefill ms':>11} {'decode ms/step':>15} "
          f"{'decode tok/s':>13}")
    print(f"{'lmopt':<12} {med(lm_prefill):>11.2f} {med(lm_decode):>15.2f} "
          f"{1e3 * args.batch / med(lm_decode):>13.1f}")
    print(f"{'onnxruntime':<12} {med(ort_prefill):>11.2f} "
          f"{med(ort_decode):>15.2f} "
          f"{1e3 * args.batch / med(ort_decode):>13.1f}")
    print(f"ratio lmopt/onnxruntime: prefill "
          f"{med(lm_prefill) / med(ort_prefill):.2f}x, decode "
          f"{med(lm_decode) / med(ort_decode):.2f}x")
    print(f"tokens: {'identical' if agree else 'DIFFER'} in every round"
          + (" (int4: each engine rounds its own way)"
             if args.int4 and not agree else ""))
    return 0 if agree or args.int4 else 1


if __name__ == "__main__":
    sys.exit(main())
