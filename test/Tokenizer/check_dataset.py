#!/usr/bin/env python3
"""Reads a token dataset (.bin/.idx) with NumPy, independently of lmopt's
reader, and compares every example with the `tokenizers` library's encoding
of the same lines (labels, and pairs with their type ids, given as JSON
Lines; a dataset sorted by length is compared through its sources). Prints
the counts.

  check_dataset.py --tokenizer tok.json --prefix out --text in.txt [--max-length N]
"""

import argparse
import json
import struct
import sys

import numpy as np
from tokenizers import Tokenizer

HEADER = struct.Struct("<8sIIQQQIIQQ")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--text", help="plain text, one example per line")
    p.add_argument("--jsonl", help="JSON Lines with 'text' and 'label'")
    p.add_argument("--max-length", type=int, default=0)
    p.add_argument("--skip-empty", action="store_true")
    args = p.parse_args()

    idx = open(args.prefix + ".idx", "rb").read()
    (magic, version, dtype, _hash, count, tokens, flags, _r0, _vocab,
     _r1) = HEADER.unpack_from(idx)
    assert magic == b"LMTOKIDX" and version == 2, (magic, version)
    offsets = np.frombuffer(idx, np.uint64, count, HEADER.size)
    pos = HEADER.size + 8 * count
    labels = sources = types = None
    if flags & 1:
        labels = np.frombuffer(idx, np.int64, count, pos)
        pos += 8 * count
    if flags & 4:
        sources = np.frombuffer(idx, np.uint64, count, pos)
        pos += 8 * count
    lengths = np.frombuffer(idx, np.uint32, count, pos)
    assert pos + 4 * count == len(idx)
    binary = open(args.prefix + ".bin", "rb").read()
    ids = np.frombuffer(binary, np.uint16 if dtype == 1 else np.uint32, tokens)
    if flags & 2:
        types = np.frombuffer(binary, np.uint8, tokens, ids.nbytes)
    assert len(binary) == ids.nbytes + (tokens if flags & 2 else 0)

    hf = Tokenizer.from_file(args.tokenizer)
    hf.no_padding()
    hf.no_truncation()
    if args.max_length:
        hf.enable_truncation(args.max_length)
    if args.jsonl:
        records = [json.loads(l) for l in open(args.jsonl, encoding="utf-8")]
        texts = [(r["text"], r["pair"]) if "pair" in r else r["text"]
                 for r in records]
        want_labels = [r["label"] for r in records]
    else:
        data = open(args.text, "rb").read().split(b"\n")
        if data and data[-1] == b"":
            data.pop()
        texts = [l.rstrip(b"\r").decode("utf-8", errors="replace")
                 if l.endswith(b"\r") else l.decode("utf-8", errors="replace")
                 for l in data]
        want_labels = None
    if args.skip_empty:
        keep = [i for i, t in enumerate(texts) if t]
        texts = [texts[i] for i in keep]
        if want_labels:
            want_labels = [want_labels[i] for i in keep]
    expected = hf.encode_batch(texts)
    mismatches = 0
    if count != len(expected):
        sys.exit(f"error: {count} examples, expected {len(expected)}")
    if sources is not None:
        assert sorted(sources.tolist()) == list(range(count))
        assert all(lengths[:-1] <= lengths[1:]), "not sorted by length"
    for i in range(count):
        src = int(sources[i]) if sources is not None else i
        e = expected[src]
        span = slice(int(offsets[i]), int(offsets[i]) + int(lengths[i]))
        if ids[span].tolist() != e.ids:
            mismatches += 1
        want_types = e.type_ids if any(e.type_ids) or types is not None \
            else None
        if want_types is not None and (
                types is None or types[span].tolist() != want_types):
            mismatches += 1
        if want_labels is not None and int(labels[i]) != want_labels[src]:
            mismatches += 1
    print(f"dataset: {count} examples, {tokens} tokens, "
          f"{'uint16' if dtype == 1 else 'uint32'}, labels "
          f"{'yes' if labels is not None else 'no'}, type ids "
          f"{'yes' if types is not None else 'no'}, sorted "
          f"{'yes' if sources is not None else 'no'}, {mismatches} mismatches")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
