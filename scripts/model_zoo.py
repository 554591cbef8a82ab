#!/usr/bin/env python3
"""The model zoo check: for each common encoder and decoder family and each
PyTorch exporter, does lmopt compile the export with bounded dynamic shapes,
fuse it, and match PyTorch?

Every model is built from its Hugging Face (or torch.nn) config with small
dimensions and random weights (nothing is downloaded), exported with the
TorchScript-based exporter (opset 17) and with the dynamo exporter (opset
18), compiled with `lmopt-compile --max-shape` (batch <= 2, sequence <= 16)
and run by `lmopt-run` at two shapes inside the bounds (1x7 and 2x16, the
second row padded); each output is compared with PyTorch's own output on the
same inputs (largest |lmopt - PyTorch| / max |PyTorch|). The fusion line of
the compile report gives the counts; "attention" says how many of the
model's layers fused into one `lmopt.attention`.

usage: scripts/model_zoo.py [--build build] [--only bert,llama,...]
                            [--exporters torchscript,dynamo]
                            [--markdown docs/model-zoo.md]
needs: pip install torch transformers onnx onnxscript (onnxscript, which the
dynamo exporter needs, is installed when missing; not needed by the tests or
CI)
"""
import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = [(1, 7), (2, 16)]
BOUND = (2, 16)
TOLERANCE = 1e-4
SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=128, vocab_size=512,
             max_position_embeddings=64)


def hf(name, config_cls, model_cls, extra=None, drop=(), inputs=("ids", "mask"),
       encoder=False):
    """A Hugging Face family: config with SMALL's dims (minus `drop`) and
    `extra`, the base model (or its encoder)."""
    def build():
        import transformers as tf
        config = dict(SMALL)
        for key in drop:
            config.pop(key, None)
        config.update(extra or {})
        cfg = getattr(tf, config_cls)(**config)
        cfg._attn_implementation = "eager"
        model = getattr(tf, model_cls)(cfg)
        if encoder:
            model = model.get_encoder()
        return model, cfg.num_hidden_layers if hasattr(
            cfg, "num_hidden_layers") else cfg.num_layers
    return name, build, inputs


def torch_encoder(batch_first):
    def build():
        import torch.nn as nn
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0,
                                           batch_first=batch_first)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), 2
    return build


DECODER = dict(num_key_value_heads=2, rms_norm_eps=1e-6)
FAMILIES = [
    hf("bert", "BertConfig", "BertModel", inputs=("ids", "mask", "types")),
    hf("roberta", "RobertaConfig", "RobertaModel",
       {"pad_token_id": 1, "max_position_embeddings": 80}),
    hf("xlm-roberta", "XLMRobertaConfig", "XLMRobertaModel",
       {"pad_token_id": 1, "max_position_embeddings": 80}),
    hf("distilbert", "DistilBertConfig", "DistilBertModel",
       {"dim": 64, "n_layers": 2, "n_heads": 4, "hidden_dim": 128},
       drop=("hidden_size", "num_hidden_layers", "num_attention_heads",
             "intermediate_size")),
    hf("albert", "AlbertConfig", "AlbertModel", {"embedding_size": 32},
       inputs=("ids", "mask", "types")),
    hf("electra", "ElectraConfig", "ElectraModel", {"embedding_size": 32},
       inputs=("ids", "mask", "types")),
    hf("deberta-v2", "DebertaV2Config", "DebertaV2Model",
       {"relative_attention": True, "position_buckets": 32,
        "pos_att_type": ["p2c", "c2p"]}),
    hf("mpnet", "MPNetConfig", "MPNetModel"),
    hf("modernbert", "ModernBertConfig", "ModernBertModel",
       {"global_attn_every_n_layers": 2, "local_attention": 8,
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
        "cls_token_id": 1, "sep_token_id": 2}),
    hf("gpt2", "GPT2Config", "GPT2Model",
       {"n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 64,
        "use_cache": False},
       drop=("hidden_size", "num_hidden_layers", "num_attention_heads",
             "intermediate_size", "max_position_embeddings")),
    hf("llama", "LlamaConfig", "LlamaModel", dict(DECODER, use_cache=False)),
    hf("mistral", "MistralConfig", "MistralModel",
       dict(DECODER, use_cache=False, sliding_window=None)),
    hf("qwen2", "Qwen2Config", "Qwen2Model", dict(DECODER, use_cache=False)),
    hf("gpt-neox", "GPTNeoXConfig", "GPTNeoXModel",
       {"use_cache": False, "rotary_pct": 0.25}),
    hf("phi", "PhiConfig", "PhiModel",
       {"use_cache": False, "partial_rotary_factor": 0.5,
        "num_key_value_heads": 4}),
    hf("t5-encoder", "T5Config", "T5EncoderModel",
       {"d_model": 64, "d_kv": 16, "d_ff": 128, "num_layers": 2,
        "num_heads": 4, "relative_attention_num_buckets": 8},
       drop=("hidden_size", "num_hidden_layers", "num_attention_heads",
             "intermediate_size", "max_position_embeddings")),
    hf("bart-encoder", "BartConfig", "BartModel",
       {"d_model": 64, "encoder_layers": 2, "decoder_layers": 2,
        "encoder_attention_heads": 4, "decoder_attention_heads": 4,
        "encoder_ffn_dim": 128, "decoder_ffn_dim": 128},
       drop=("hidden_size", "num_hidden_layers", "num_attention_heads",
             "intermediate_size"), encoder=True),
    ("torch-encoder", torch_encoder(True), ("src", "padding")),
    ("torch-encoder-seq-first", torch_encoder(False), ("src", "padding")),
]


def make_inputs(kinds, batch, seq, rng, batch_first=True):
    mask = np.ones((batch, seq), dtype=np.int64)
    if batch > 1:
        mask[1, seq - 3:] = 0
    arrays = {}
    for kind in kinds:
        if kind == "ids":
            arrays["input_ids"] = rng.integers(3, 500, (batch, seq)).astype(np.int64)
        elif kind == "mask":
            arrays["attention_mask"] = mask
        elif kind == "types":
            arrays["token_type_ids"] = np.zeros((batch, seq), dtype=np.int64)
        elif kind == "src":
            shape = (batch, seq, 64) if batch_first else (seq, batch, 64)
            arrays["src"] = rng.standard_normal(shape).astype(np.float32)
        elif kind == "padding":
            arrays["src_key_padding_mask"] = mask == 0
    return arrays


class Wrapper:
    """nn.Module calling the model by keyword and returning one tensor."""

    def __new__(cls, model, names):
        import torch

        class Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = model

            def forward(self, *args):
                if names[0] == "src":
                    return self.inner(args[0], src_key_padding_mask=args[1])
                out = self.inner(**dict(zip(names, args)))
                return out[0] if isinstance(out, tuple) else out.last_hidden_state
        return Wrap().eval()


def export(module, sample, names, exporter, path, batch_first):
    import torch
    args = tuple(torch.from_numpy(sample[n]) for n in names)
    seq_axis = 1 if batch_first or names[0] != "src" else 0
    batch_axis = 0 if batch_first or names[0] != "src" else 1
    axes = {n: {batch_axis if n == "src" else 0: "batch",
                seq_axis if n == "src" else 1: "seq"} for n in names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "torchscript":
            torch.onnx.export(module, args, path, dynamo=False, opset_version=17,
                              input_names=list(names), output_names=["out"],
                              dynamic_axes={**axes, "out": {0: "batch", 1: "seq"}})
        else:
            dims = {"batch": torch.export.Dim("batch", min=1, max=64),
                    "seq": torch.export.Dim("seq", min=2, max=64)}
            shapes = tuple({a: dims[s] for a, s in axes[n].items()} for n in names)
            torch.onnx.export(module, args, path, dynamo=True, opset_version=18,
                              input_names=list(names), output_names=["out"],
                              dynamic_shapes=(shapes,), external_data=False)


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:160]
    return text.strip().splitlines()[-1][:160] if text.strip() else "failed"


def check(name, build, kinds, exporter, args, work):
    import torch
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    try:
        model, layers = build()
    except Exception as e:  # transformers' own failure
        return {"model": name, "exporter": exporter, "layers": 0,
                "result": f"build fails: {type(e).__name__}: {str(e)[:100]}"}
    names_map = {"ids": "input_ids", "mask": "attention_mask",
                 "types": "token_type_ids", "src": "src",
                 "padding": "src_key_padding_mask"}
    names = [names_map[k] for k in kinds]
    batch_first = name != "torch-encoder-seq-first"
    module = Wrapper(model, names)
    row = {"model": name, "exporter": exporter, "layers": layers}
    onnx_path = os.path.join(work, f"{name}.{exporter}.onnx")
    try:
        export(module, make_inputs(kinds, 2, 16, rng, batch_first), names,
               exporter, onnx_path, batch_first)
    except Exception as e:  # the exporter's failure, not lmopt's
        row["result"] = f"export fails: {type(e).__name__}: {str(e)[:100]}"
        return row
    bundle = os.path.join(work, f"{name}.{exporter}.lmopt")
    bounds = []
    for n in names:
        if n == "src":
            dims = (BOUND[0], BOUND[1], 64) if batch_first else (BOUND[1], BOUND[0], 64)
        else:
            dims = BOUND
        bounds.append(f"--max-shape={n}:{'x'.join(map(str, dims))}")
    start = time.perf_counter()
    code, text = run([os.path.join(args.build, "bin", "lmopt-compile"),
                      onnx_path, *bounds, "-o", bundle])
    row["compile_s"] = time.perf_counter() - start
    fusions = re.search(r"^fusions: (.*)$", text, re.M)
    row["fusions"] = fusions.group(1) if fusions else ""
    attention = re.search(r"\battention (\d+)", row["fusions"])
    row["attention"] = int(attention.group(1)) if attention else 0
    if code != 0:
        row["result"] = "compile fails: " + first_error(text)
        return row
    worst = 0.0
    for batch, seq in SHAPES:
        sample = make_inputs(kinds, batch, seq, rng, batch_first)
        inputs = os.path.join(work, "in.npz")
        outputs = os.path.join(work, "out.npz")
        np.savez(inputs, **sample)
        code, text = run([os.path.join(args.build, "bin", "lmopt-run"), bundle,
                          "--inputs", inputs, "--output", outputs])
        if code != 0:
            row["result"] = f"run {batch}x{seq} fails: " + first_error(text)
            return row
        with torch.no_grad():
            want = module(*(torch.from_numpy(sample[n]) for n in names)).numpy()
        with np.load(outputs) as got:
            out = got[got.files[0]]
        if out.shape != want.shape:
            row["result"] = f"{batch}x{seq}: shape {out.shape} vs {want.shape}"
            return row
        keep = np.isfinite(want)
        error = float(np.abs(out - want)[keep].max() /
                      max(np.abs(want[keep]).max(), 1e-30))
        worst = max(worst, error)
    row["error"] = worst
    row["result"] = "match" if worst <= TOLERANCE else "differs"
    return row


def markdown(rows):
    lines = ["| model | exporter | result | max rel. error | attention fused / layers | fusions | compile s |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        error = f"{r['error']:.1e}" if "error" in r else ""
        compile_s = f"{r['compile_s']:.1f}" if "compile_s" in r else ""
        lines.append(f"| {r['model']} | {r['exporter']} | {r['result']} | {error} | "
                     f"{r.get('attention', 0)} / {r['layers']} | {r.get('fusions', '')} | {compile_s} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--only", default="")
    parser.add_argument("--exporters", default="torchscript,dynamo")
    parser.add_argument("--markdown")
    parser.add_argument("--keep", metavar="DIR",
                        help="write the exports and bundles to DIR and keep "
                             "them (to rerun a row's compile by hand)")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    if "dynamo" in args.exporters.split(","):
        try:
            import onnxscript  # noqa: F401 (the dynamo exporter's)
        except ImportError:
            subprocess.check_call([sys.executable, "-m", "pip", "install",
                                   "-q", "onnxscript"])
    rows = []
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    with (contextlib.nullcontext(args.keep) if args.keep else
          tempfile.TemporaryDirectory(prefix="lmopt-zoo-")) as work:
        for name, build, kinds in FAMILIES:
            if only and name not in only:
                continue
            for exporter in args.exporters.split(","):
                row = check(name, build, kinds, exporter, args, work)
                rows.append(row)
                print(f"{name:26} {exporter:12} {row['result']}", file=sys.stderr,
                      flush=True)
    table = markdown(rows)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    matched = sum(r["result"] == "match" for r in rows)
    print(f"{matched} of {len(rows)} rows match PyTorch within {TOLERANCE:g}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
