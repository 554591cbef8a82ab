#!/usr/bin/env python3
"""Tokenizing once against tokenizing every epoch: the time a training loop
spends getting padded id arrays over --epochs epochs, side by side in one
run, on the same text and threads.

- every epoch: `tokenizers` Tokenizer.encode_batch (RAYON_NUM_THREADS=T,
  truncation and padding to --max-length), then the [N, L] int64 input_ids
  and attention_mask arrays, once per epoch;
- once: `lmopt-tokenize --format dataset --num-threads T` (wall time of the
  process: load, read, encode, write), then per epoch the dataset read from
  disk with NumPy (np.fromfile of the .bin and .idx, docs/tokenizer.md's
  layout) into the same padded arrays.

Both sides' arrays are checked equal. Prints seconds per side and their
ratio. Not a test.

  bench/compare_pretokenize.py --lmopt-tokenize build/bin/lmopt-tokenize \\
      [--threads 2] [--lines 30000] [--epochs 3] [--tokenizers minilm bpe]
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "Tokenizer"))
HEADER = struct.Struct("<8sIIQQQIIQQ")


def read_dataset(prefix, length, pad):
    """The padded [N, length] input_ids and attention_mask of a dataset."""
    idx = np.fromfile(prefix + ".idx", np.uint8)
    (_magic, version, dtype, _hash, count, tokens, flags, _r0, _vocab,
     _r1) = HEADER.unpack_from(idx.tobytes()[:HEADER.size])
    assert version == 2 and not flags & 4
    body = idx[HEADER.size:]
    offsets = body[:8 * count].view(np.uint64).astype(np.int64)
    skip = 8 * count * (2 if flags & 1 else 1)
    lengths = body[skip:skip + 4 * count].view(np.uint32).astype(np.int64)
    ids = np.fromfile(prefix + ".bin", np.uint16 if dtype == 1 else np.uint32,
                      tokens)
    positions = np.arange(length)
    mask = positions[None, :] < lengths[:, None]
    gather = np.minimum(offsets[:, None] + positions[None, :],
                        max(tokens - 1, 0))
    input_ids = np.where(mask, ids[gather].astype(np.int64), pad)
    return input_ids, mask.astype(np.int64)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lmopt-tokenize",
                   default=os.path.join(ROOT, "build", "bin", "lmopt-tokenize"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--lines", type=int, default=30000)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--tokenizers", nargs="*", default=["minilm", "bpe"])
    args = p.parse_args()
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)
    from tokenizers import Tokenizer
    import messy_text

    work = tempfile.mkdtemp(prefix="lmopt-pretokenize-bench-")
    raw, text_path, texts = messy_text.write_corpus(args.lines, 11, work)
    L = args.max_length
    print(f"{args.lines} messy lines, {sum(map(len, raw)) / 1e6:.1f} MB, "
          f"{args.threads} threads, max length {L}, {args.epochs} epochs")
    print(f"{'tokenizer':10} {'every epoch s':>14} {'once s':>8} "
          f"{'(tokenize':>10} {'+ reads)':>9} {'read/epoch s':>13} "
          f"{'speed-up':>9}")
    for name in args.tokenizers:
        tok_path = os.path.join(ROOT, "test", "models", "tokenizers",
                                name + ".json")
        hf = Tokenizer.from_file(tok_path)
        hf.enable_truncation(L)
        pad = hf.padding["pad_id"] if hf.padding else 0
        hf.enable_padding(length=L, pad_id=pad)

        start = time.perf_counter()
        for _ in range(args.epochs):
            enc = hf.encode_batch(texts)
            hf_ids = np.array([e.ids for e in enc], np.int64)
            hf_mask = np.array([e.attention_mask for e in enc], np.int64)
        every = time.perf_counter() - start

        prefix = os.path.join(work, name)
        start = time.perf_counter()
        subprocess.run([args.lmopt_tokenize, "--tokenizer", tok_path,
                        "--input", text_path, "--max-length", str(L),
                        "--format", "dataset", "-o", prefix, "--quiet",
                        "--num-threads", str(args.threads)], check=True)
        tokenize = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(args.epochs):
            ids, mask = read_dataset(prefix, L, pad)
        reads = time.perf_counter() - start
        assert np.array_equal(ids, hf_ids) and np.array_equal(mask, hf_mask), \
            f"{name}: the dataset's arrays differ from encode_batch's"
        once = tokenize + reads
        print(f"{name:10} {every:14.2f} {once:8.2f} {tokenize:10.2f} "
              f"{reads:9.2f} {reads / args.epochs:13.3f} "
              f"{every / once:8.2f}x")


if __name__ == "__main__":
    main()
