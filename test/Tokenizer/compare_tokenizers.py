#!/usr/bin/env python3
"""Compares lmopt-tokenize with the Hugging Face `tokenizers` library.

Writes messy_text.py's lines (or reads --text), runs `lmopt-tokenize
--format npz` on them, encodes the same lines with `tokenizers` (invalid
UTF-8 decoded with errors="replace", as lmopt-tokenize repairs it), and
compares input_ids, attention_mask and token_type_ids byte for byte. Prints
the counts and the first mismatches; exits 1 on any mismatch.

  compare_tokenizers.py --lmopt-tokenize build/bin/lmopt-tokenize \\
      --tokenizer test/models/tokenizers/minilm.json --lines 10000 \\
      --max-length 128 --workdir /tmp/cmp [--pairs] [--variant NAME]
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messy_text  # noqa: E402


def byte_pieces(vocab_len):
    return [[f"<0x{b:02X}>", -20.0 - b / 1000.0] for b in range(256)]


# Variants of a fixture, to cover options the fixtures do not use.
def apply_variant(cfg, name):
    if name == "prefix-space":
        # RoBERTa-style: a prefix space, and <s> A </s></s> B </s>.
        cfg["pre_tokenizer"]["add_prefix_space"] = True
        vocab = cfg["model"]["vocab"]
        cfg["post_processor"] = {
            "type": "RobertaProcessing", "sep": ["</s>", len(vocab)],
            "cls": ["<s>", len(vocab) + 1], "trim_offsets": True,
            "add_prefix_space": True}
        for i, tok in enumerate(["</s>", "<s>"]):
            cfg["added_tokens"].append({
                "id": len(vocab) + i, "content": tok, "single_word": False,
                "lstrip": False, "rstrip": False, "normalized": False,
                "special": True})
    elif name == "bert-processing":
        sep = cfg["model"]["vocab"]["[SEP]"]
        cls = cfg["model"]["vocab"]["[CLS]"]
        cfg["post_processor"] = {"type": "BertProcessing",
                                 "sep": ["[SEP]", sep], "cls": ["[CLS]", cls]}
    elif name == "keep-accents":
        cfg["normalizer"]["strip_accents"] = False
    elif name == "cased":
        cfg["normalizer"]["lowercase"] = False
    elif name == "byte-fallback":
        cfg["model"]["byte_fallback"] = True
        cfg["model"]["vocab"] += byte_pieces(len(cfg["model"]["vocab"]))
    elif name == "prepend-first":
        cfg["pre_tokenizer"]["prepend_scheme"] = "first"
        cfg["decoder"]["prepend_scheme"] = "first"
    elif name in ("albert", "deberta-v2"):
        # The normalizer sequences transformers' AlbertConverter and
        # DebertaV2Converter write around the same Precompiled charsmap.
        steps = cfg["normalizer"]["normalizers"]
        precompiled = next(s for s in steps if s["type"] == "Precompiled")
        spaces = {"type": "Replace", "pattern": {"Regex": " {2,}"},
                  "content": " "}
        if name == "albert":
            steps = [{"type": "Replace", "pattern": {"String": "``"},
                      "content": '"'},
                     {"type": "Replace", "pattern": {"String": "''"},
                      "content": '"'},
                     {"type": "NFKD"}, {"type": "StripAccents"},
                     precompiled, spaces]
        else:
            steps = [{"type": "Strip", "strip_left": True,
                      "strip_right": True}, precompiled, spaces]
        cfg["normalizer"]["normalizers"] = steps
    elif name != "none":
        sys.exit(f"error: unknown variant {name}")
    return cfg


def split_lines(data):
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [l[:-1] if l.endswith(b"\r") else l for l in lines]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lmopt-tokenize", required=True)
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--text", help="input text (default: messy_text.py's)")
    p.add_argument("--lines", type=int, default=10000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--pairs", action="store_true",
                   help="encode line i with line i+1 as a pair, from JSONL")
    p.add_argument("--variant", default="none")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--workdir", required=True)
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

    with open(args.tokenizer, encoding="utf-8") as f:
        cfg = apply_variant(json.load(f), args.variant)
    tok_path = os.path.join(args.workdir, "tokenizer.json")
    with open(tok_path, "w", encoding="utf-8") as f:
        json.dump(cfg, f, ensure_ascii=False)
    hf = Tokenizer.from_file(tok_path)
    hf.no_padding()
    hf.no_truncation()
    if args.max_length:
        hf.enable_truncation(args.max_length)

    if args.text:
        with open(args.text, "rb") as f:
            raw = split_lines(f.read())
    else:
        # What lmopt-tokenize reads back from the file: lines without a
        # trailing carriage return.
        raw = split_lines(b"\n".join(messy_text.generate(args.lines, args.seed))
                          + b"\n")
    texts = [l.decode("utf-8", errors="replace") for l in raw]

    cmd = [args.lmopt_tokenize, "--tokenizer", tok_path, "--format", "npz",
           "--num-threads", str(args.threads), "-o",
           os.path.join(args.workdir, "out.npz")]
    if args.max_length:
        cmd += ["--max-length", str(args.max_length)]
    if args.pairs:
        inp = os.path.join(args.workdir, "in.jsonl")
        pairs = list(zip(texts, texts[1:] + texts[:1]))
        with open(inp, "w", encoding="utf-8") as f:
            for i, (a, b) in enumerate(pairs):
                f.write(json.dumps({"text": a, "pair": b, "label": i % 3}) + "\n")
        cmd += ["--input", inp, "--pair-field", "pair", "--label-field",
                "label"]
        expected = hf.encode_batch(pairs)
    else:
        inp = os.path.join(args.workdir, "in.txt")
        with open(inp, "wb") as f:
            f.write(b"\n".join(raw) + b"\n")
        cmd += ["--input", inp]
        expected = hf.encode_batch(texts)
    run = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        sys.exit(f"error: lmopt-tokenize failed ({run.returncode})")
    got = np.load(os.path.join(args.workdir, "out.npz"))
    ids, mask = got["input_ids"], got["attention_mask"]
    types = got["token_type_ids"] if "token_type_ids" in got else None

    mismatches = 0
    shown = 0
    if ids.shape[0] != len(expected):
        sys.exit(f"error: {ids.shape[0]} rows, expected {len(expected)}")
    width = ids.shape[1]
    tokens = 0
    for i, e in enumerate(expected):
        n = len(e.ids)
        tokens += n
        ok = n <= width
        if ok:
            want_mask = np.zeros(width, np.int64)
            want_mask[:n] = 1
            ok = (np.array_equal(ids[i, :n], np.array(e.ids, np.int64))
                  and np.array_equal(mask[i], want_mask))
            if ok and types is not None:
                ok = np.array_equal(types[i, :n],
                                    np.array(e.type_ids, np.int64)) and \
                    not types[i, n:].any()
        if args.pairs and ok:
            ok = int(got["labels"][i]) == i % 3
        if not ok:
            mismatches += 1
            if shown < 5:
                shown += 1
                print(f"mismatch at line {i + 1}: {raw[i][:200]!r}")
                print(f"  tokenizers: {e.ids}")
                print(f"  lmopt:      {ids[i, :mask[i].sum()].tolist()}")
                print(f"  tokens:     {e.tokens}")
    print(f"{os.path.basename(args.tokenizer)} variant={args.variant} "
          f"pairs={args.pairs}: {len(expected)} examples, {tokens} tokens, "
          f"{mismatches} mismatches")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
