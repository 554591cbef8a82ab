"""Writes a token dataset (docs/tokenizer.md, "Token datasets") holding the
examples of an .npz: each row's input_ids where its attention_mask is 1,
and its label (and token_type_ids with --type-ids; with --sort, shortest
first, each with its row as its source). Independent of lmopt's
writer, from the documented layout.

usage: write_token_dataset.py DATA.npz PREFIX [--hash H] [--no-labels]
                              [--type-ids] [--sort]
"""
import argparse
import struct

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("prefix")
    parser.add_argument("--hash", type=lambda s: int(s, 0), default=0)
    parser.add_argument("--no-labels", action="store_true")
    parser.add_argument("--type-ids", action="store_true")
    parser.add_argument("--sort", action="store_true")
    args = parser.parse_args()
    d = dict(np.load(args.data))
    sources = np.arange(len(d["input_ids"]), dtype="<u8")
    if args.sort:
        sources = np.argsort(d["attention_mask"].sum(1), kind="stable")
        d = {k: v[sources] for k, v in d.items()}
        sources = sources.astype("<u8")
    examples = [ids[mask == 1] for ids, mask in
                zip(d["input_ids"], d["attention_mask"])]
    labels = d["labels"].astype("<i8")
    lengths = np.array([len(e) for e in examples], "<u4")
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype("<u8")
    tokens = np.concatenate(examples).astype("<u2")
    flags = ((0 if args.no_labels else 1) | (2 if args.type_ids else 0) |
             (4 if args.sort else 0))
    header = struct.pack("<8sIIQQQIIQQ", b"LMTOKIDX", 2, 1, args.hash,
                         len(examples), len(tokens), flags, 0, 1000, 0)
    with open(args.prefix + ".idx", "wb") as f:
        f.write(header + offsets.tobytes() +
                (b"" if args.no_labels else labels.tobytes()) +
                (sources.tobytes() if args.sort else b"") + lengths.tobytes())
    with open(args.prefix + ".bin", "wb") as f:
        f.write(tokens.tobytes())
        if args.type_ids:
            types = [t[mask == 1] for t, mask in
                     zip(d["token_type_ids"], d["attention_mask"])]
            f.write(np.concatenate(types).astype("u1").tobytes())
    print(f"{len(examples)} examples, {len(tokens)} tokens")


if __name__ == "__main__":
    main()
