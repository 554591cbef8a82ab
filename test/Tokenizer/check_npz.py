#!/usr/bin/env python3
"""Checks an .npz from lmopt-tokenize against the `tokenizers` library:
prints the arrays, the labels, and whether ids, masks and type ids match.

  check_npz.py out.npz --tokenizer tok.json (--text in.txt | --csv in.csv)
      [--width N] [--pad ID] [--skip-empty]
"""

import argparse
import csv
import sys

import numpy as np
from tokenizers import Tokenizer


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("npz")
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--text")
    p.add_argument("--csv")
    p.add_argument("--text-field", default="text")
    p.add_argument("--width", type=int, default=0)
    p.add_argument("--pad", type=int, default=0)
    p.add_argument("--skip-empty", action="store_true")
    args = p.parse_args()
    got = np.load(args.npz)
    print("arrays: " + ", ".join(f"{k} {got[k].dtype} {got[k].shape}"
                                 for k in sorted(got.files)))
    labels = None
    if args.csv:
        with open(args.csv, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        texts = [r[args.text_field] for r in rows]
        if "labels" in got.files:
            labels = [int(r["label"]) for r in rows]
            print("labels", got["labels"].tolist())
    else:
        lines = open(args.text, "rb").read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        texts = [(l[:-1] if l.endswith(b"\r") else l)
                 .decode("utf-8", errors="replace") for l in lines]
    if args.skip_empty:
        texts = [t for t in texts if t]
    hf = Tokenizer.from_file(args.tokenizer)
    hf.no_padding()
    hf.no_truncation()
    if args.width:
        hf.enable_truncation(args.width)
    expected = hf.encode_batch(texts)
    width = args.width or max(len(e.ids) for e in expected)
    ok = got["input_ids"].shape == (len(texts), width)
    for i, e in enumerate(expected):
        if not ok:
            break
        n = len(e.ids)
        row = e.ids + [args.pad] * (width - n)
        mask = [1] * n + [0] * (width - n)
        ok = (got["input_ids"][i].tolist() == row
              and got["attention_mask"][i].tolist() == mask)
        if ok and "token_type_ids" in got.files:
            ok = got["token_type_ids"][i].tolist() == \
                e.type_ids + [0] * (width - n)
    if labels is not None:
        ok = ok and got["labels"].tolist() == labels
    print("matches the tokenizers library" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
