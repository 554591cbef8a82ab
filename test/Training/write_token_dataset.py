"""Writes a token dataset (docs/tokenizer.md, "Token datasets") holding the
examples of an .npz: each row's input_ids where its attention_mask is 1,
and its label. Independent of lmopt's writer, from the documented layout.

usage: write_token_dataset.py DATA.npz PREFIX [--hash H] [--no-labels]
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
    args = parser.parse_args()
    d = np.load(args.data)
    examples = [ids[mask == 1] for ids, mask in
                zip(d["input_ids"], d["attention_mask"])]
    labels = d["labels"].astype("<i8")
    lengths = np.array([len(e) for e in examples], "<u4")
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype("<u8")
    tokens = np.concatenate(examples).astype("<u2")
    header = struct.pack("<8sIIQQQIIQQ", b"LMTOKIDX", 1, 1, args.hash,
                         len(examples), len(tokens), 0 if args.no_labels else 1,
                         0, 1000, 0)
    with open(args.prefix + ".idx", "wb") as f:
        f.write(header + offsets.tobytes() +
                (b"" if args.no_labels else labels.tobytes()) + lengths.tobytes())
    with open(args.prefix + ".bin", "wb") as f:
        f.write(tokens.tobytes())
    print(f"{len(examples)} examples, {len(tokens)} tokens")


if __name__ == "__main__":
    main()
