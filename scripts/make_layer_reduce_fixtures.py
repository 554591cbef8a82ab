#!/usr/bin/env python3
"""Fixtures for layer reduction (docs/compression.md, "Layer selection"
and "lmopt-reduce-layers"), computed in PyTorch.

    python3 scripts/make_layer_reduce_fixtures.py [--out test/models/reduce]

A four-layer BERT (Hugging Face BertModel from a small config, random
weights, as scripts/make_fixtures.py builds its fixtures), whose layers 1
and 2 are made nearly redundant by scaling their attention output and FFN
output projections down (by 0.05; the others' up, by 4): what they add to
the residual stream is small, so their output stays close to their
input. Writes

- bert4.onnx (torch.onnx.export, dynamic batch and sequence) with
  bert4.inputs.npz and bert4.ref.npz (onnxruntime, checked against
  PyTorch);
- bert4.calib.npz, four calibration samples with padded rows;
- bert4.block_importance.ref.npz: `importance`, per layer 1 - the mean
  over the calibration tokens that attention_mask keeps of the cosine
  between the layer's input and output hidden states (Hugging Face's
  output_hidden_states: hidden_states[i] and hidden_states[i + 1]),
  ShortGPT's Block Influence; and `keep`, the layers `layers=2` keeps
  (the two most important, ties to the lower index, ascending);
- bert4.keep_<i>_<j>.ref.npz: the outputs on bert4.inputs.npz of the same
  PyTorch model with only encoder layers i and j (for the chosen keep
  list and for keep 0,2), and bert4.keep_<i>_<j>.dyn_3x7.ref.npz on
  bert4.dyn_3x7.inputs.npz (3 x 7 tokens).
"""

import argparse
import os
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures  # noqa: E402

CONFIG = dict(make_fixtures.BERT_CONFIG, hidden_size=32, num_hidden_layers=4,
              intermediate_size=64)
REDUNDANT = (1, 2)
NAMES = ["input_ids", "attention_mask", "token_type_ids"]
OUTPUTS = ["last_hidden_state", "pooler_output"]


def build():
    from transformers import BertConfig, BertModel

    wrapper = make_fixtures.BertLike(
        make_fixtures.hf_model("bert4", BertConfig, BertModel, CONFIG))
    with torch.no_grad():
        for i, layer in enumerate(wrapper.model.encoder.layer):
            scale = 0.05 if i in REDUNDANT else 4.0
            for linear in (layer.attention.output.dense, layer.output.dense):
                linear.weight.mul_(scale)
                linear.bias.mul_(scale)
    # The exporter restores the wrapper's mode on every submodule: eval, so
    # that dropout stays off.
    return wrapper.eval()


def block_importance(bert, samples: dict) -> np.ndarray:
    """1 - mean cosine(hidden_states[i], hidden_states[i + 1]) per layer
    over the unmasked tokens of every sample, in float64."""
    layers = bert.config.num_hidden_layers
    sums, tokens = np.zeros(layers), 0
    with torch.no_grad():
        for s in range(samples["input_ids"].shape[0]):
            out = bert(**{n: torch.from_numpy(samples[n][s]) for n in NAMES},
                       output_hidden_states=True)
            keep = samples["attention_mask"][s].reshape(-1) != 0
            hs = [h.double().numpy().reshape(-1, h.shape[-1])[keep]
                  for h in out.hidden_states]
            for i in range(layers):
                a, b = hs[i], hs[i + 1]
                cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1)
                                        * np.linalg.norm(b, axis=1))
                sums[i] += cos.sum()
            tokens += int(keep.sum())
    return 1.0 - sums / tokens


def kept(scores: np.ndarray, keep: int) -> list:
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    gap = scores[order[keep - 1]] - scores[order[keep]]
    if gap < 1e-3:
        sys.exit(f"block importance {scores} too close to rank reliably")
    return sorted(order[:keep])


def run(wrapper, inputs: dict) -> dict:
    with torch.no_grad():
        got = wrapper(*(torch.from_numpy(inputs[n]) for n in NAMES))
    return {n: t.numpy() for n, t in zip(OUTPUTS, got)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "test", "models",
        "reduce"))
    args = parser.parse_args()

    wrapper = build()
    bert = wrapper.model
    rng = np.random.default_rng(18)
    inputs = make_fixtures.bert_inputs(rng, 2, 12)
    path = os.path.join(args.out, "bert4.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper, tuple(torch.from_numpy(inputs[n]) for n in NAMES), path,
            dynamo=False, opset_version=make_fixtures.TORCHSCRIPT_OPSET,
            input_names=NAMES, output_names=OUTPUTS,
            dynamic_axes={**make_fixtures.BERT_IO["input_axes"],
                          **make_fixtures.BERT_IO["output_axes"]})
    onnx.checker.check_model(onnx.load(path), full_check=True)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    ref = dict(zip(OUTPUTS, session.run(OUTPUTS, inputs)))
    torch_out = run(wrapper, inputs)
    diff = max(np.abs(ref[n] - torch_out[n]).max() for n in OUTPUTS)
    if diff > make_fixtures.TORCH_TOLERANCE:
        sys.exit(f"onnxruntime and PyTorch differ by {diff}")
    make_fixtures.save_npz(os.path.join(args.out, "bert4.inputs.npz"), inputs)
    make_fixtures.save_npz(os.path.join(args.out, "bert4.ref.npz"), ref)
    print(f"wrote {path}: max |ORT - torch| {diff:.3g}")

    # Four samples of 2 x 12 tokens, later rows padded (as bert.calib.npz).
    rng = np.random.default_rng(7)
    ids = rng.integers(3, CONFIG["vocab_size"], size=(4, 2, 12),
                       dtype=np.int64)
    mask = np.ones_like(ids)
    for s in range(4):
        for b in range(2):
            mask[s, b, 12 - (s + b) % 4:] = 0
    ids[mask == 0] = 0
    types = (rng.random(ids.shape) < 0.3).astype(np.int64) * mask
    samples = {"input_ids": ids, "attention_mask": mask,
               "token_type_ids": types}
    make_fixtures.save_npz(os.path.join(args.out, "bert4.calib.npz"), samples)

    importance = block_importance(bert, samples)
    keep = kept(importance, 2)
    make_fixtures.save_npz(
        os.path.join(args.out, "bert4.block_importance.ref.npz"),
        {"importance": importance, "keep": np.array(keep, dtype=np.int64)})
    print(f"block importance {importance}; layers=2 keeps {keep}")

    # Another shape, for the student's dynamic batch and sequence dims.
    other = make_fixtures.bert_inputs(np.random.default_rng(3), 3, 7)
    make_fixtures.save_npz(os.path.join(args.out, "bert4.dyn_3x7.inputs.npz"),
                           other)
    layers = bert.encoder.layer
    for chosen in (keep, [0, 2]):
        bert.encoder.layer = torch.nn.ModuleList([layers[i] for i in chosen])
        reduced = run(wrapper, inputs)
        reduced_other = run(wrapper, other)
        bert.encoder.layer = layers
        stem = "bert4.keep_" + "_".join(map(str, chosen))
        name = stem + ".ref.npz"
        make_fixtures.save_npz(os.path.join(args.out, name), reduced)
        make_fixtures.save_npz(os.path.join(args.out, stem + ".dyn_3x7.ref.npz"),
                               reduced_other)
        change = max(np.abs(reduced[n] - torch_out[n]).max()
                     for n in OUTPUTS)
        print(f"wrote {name}: max change from the full model {change:.3g}")


if __name__ == "__main__":
    main()
