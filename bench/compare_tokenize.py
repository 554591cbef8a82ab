#!/usr/bin/env python3
"""Tokenization throughput: lmopt-tokenize against the `tokenizers`
library's encode_batch, side by side on the same text and threads.

For each tokenizer fixture it times, interleaved and --repeats times,
`lmopt-tokenize --format npz --num-threads T` (its own measure: reading,
encoding and writing the .npz, the tokenizer load left out, as printed in
its report) and `Tokenizer.encode_batch` with RAYON_NUM_THREADS=T (the
decoded lines already in memory, padding to the same --max-length), and
prints the best MB/s and tokens/s of each and their ratio. Not a test.

  bench/compare_tokenize.py --lmopt-tokenize build/bin/lmopt-tokenize \\
      [--threads 2] [--lines 50000] [--repeats 3]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "Tokenizer"))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lmopt-tokenize",
                   default=os.path.join(ROOT, "build", "bin", "lmopt-tokenize"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--lines", type=int, default=50000)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--tokenizers", nargs="*",
                   default=["minilm", "bpe", "unigram"])
    args = p.parse_args()
    # Rayon reads its thread count when the pool first starts.
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)
    from tokenizers import Tokenizer
    import messy_text

    work = tempfile.mkdtemp(prefix="lmopt-tokenize-bench-")
    raw, text_path, texts = messy_text.write_corpus(args.lines, 11, work)
    nbytes = sum(len(l) for l in raw)
    print(f"{args.lines} messy lines, {nbytes / 1e6:.1f} MB, "
          f"{args.threads} threads, max length {args.max_length}")
    print(f"{'tokenizer':10} {'lmopt MB/s':>11} {'hf MB/s':>9} "
          f"{'lmopt tok/s':>12} {'hf tok/s':>11} {'speed-up':>9}")
    report = re.compile(r"(\d+) tokens, .* ([0-9.]+) s, ")
    for name in args.tokenizers:
        tok_path = os.path.join(ROOT, "test", "models", "tokenizers",
                                name + ".json")
        hf = Tokenizer.from_file(tok_path)
        hf.enable_truncation(args.max_length)
        hf.enable_padding(length=args.max_length)
        best_lmopt = best_hf = float("inf")
        tokens = hf_tokens = 0
        for _ in range(args.repeats):
            run = subprocess.run(
                [args.lmopt_tokenize, "--tokenizer", tok_path, "--input",
                 text_path, "--max-length", str(args.max_length),
                 "--num-threads", str(args.threads), "-o",
                 os.path.join(work, "out.npz")],
                capture_output=True, text=True, check=True)
            m = report.search(run.stderr)
            tokens = int(m.group(1))
            best_lmopt = min(best_lmopt, float(m.group(2)))
            start = time.perf_counter()
            enc = hf.encode_batch(texts)
            best_hf = min(best_hf, time.perf_counter() - start)
            hf_tokens = sum(sum(e.attention_mask) for e in enc)
        if tokens != hf_tokens:
            print(f"  note: {name}: lmopt {tokens} tokens, tokenizers "
                  f"{hf_tokens}")
        print(f"{name:10} {nbytes / 1e6 / best_lmopt:11.2f} "
              f"{nbytes / 1e6 / best_hf:9.2f} {tokens / best_lmopt:12.0f} "
              f"{hf_tokens / best_hf:11.0f} {best_hf / best_lmopt:8.2f}x")


if __name__ == "__main__":
    main()
