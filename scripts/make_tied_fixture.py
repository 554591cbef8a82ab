#!/usr/bin/env python3
"""Regenerate test/models/train/bert_tied.*: a freshly initialized BERT
classifier exported as the TorchScript exporter exports a fresh model, with
its equal initializers (zero biases, unit LayerNorm weights) deduplicated
behind Identity nodes, and PyTorch's float64 gradients of one batch for
every parameter, keyed by the name the ONNX file gives it (the initializer,
or the Identity output that stands for a deduplicated one).

Training must keep those parameters apart (lmopt-compile --train unties
them, ImportOptions::untieInitializerAliases): tied, each would get the sum
of the gradients of every parameter it stands for.

Needs torch and transformers (regeneration only):

    python3 scripts/make_tied_fixture.py [--out test/models/train]
"""

import argparse
import io
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from classifier_onnx import export_classifier  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                           "test", "models", "train")
BATCH, SEQ = 4, 8


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(20261205)
    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=16, num_labels=3,
                        attn_implementation="eager")
    model = BertForSequenceClassification(config).eval()
    rng = np.random.default_rng(20261205)
    data = {
        "input_ids": rng.integers(3, 100, (BATCH, SEQ)).astype(np.int64),
        "attention_mask": np.ones((BATCH, SEQ), np.int64),
        "token_type_ids": np.zeros((BATCH, SEQ), np.int64),
        "labels": rng.integers(0, 3, (BATCH,)).astype(np.int64),
    }
    data["attention_mask"][1, 5:] = 0
    buf = io.BytesIO()
    export_classifier(model, data, buf)
    onnx_model = onnx.load_from_string(buf.getvalue())
    identities = [n for n in onnx_model.graph.node if n.op_type == "Identity"]
    if not identities:
        sys.exit("the exporter deduplicated nothing; the fixture would test "
                 "nothing")

    # The ONNX name of every parameter: an initializer or an Identity output
    # named after it, else the initializer holding its transpose
    # (onnx::MatMul_<n>), found by value.
    params = {"inner." + n: p for n, p in model.named_parameters()}
    values = {i.name: numpy_helper.to_array(i)
              for i in onnx_model.graph.initializer}
    names = set(values) | {n.output[0] for n in identities}
    onnx_name = {}
    for name, p in params.items():
        if name in names:
            onnx_name[name] = (name, False)
            continue
        weight = p.detach().numpy()
        found = [k for k, v in values.items() if v.shape == weight.T.shape
                 and np.array_equal(v, weight.T)]
        if len(found) != 1:
            sys.exit(f"no unique initializer for '{name}': {found}")
        onnx_name[name] = (found[0], True)

    model64 = model.double()
    t = {k: torch.from_numpy(v) for k, v in data.items()}
    loss = torch.nn.functional.cross_entropy(
        model64(input_ids=t["input_ids"], attention_mask=t["attention_mask"],
                token_type_ids=t["token_type_ids"]).logits, t["labels"])
    loss.backward()
    grads = {"loss": np.float32(loss.item())}
    for name, p in model64.named_parameters():
        key, transposed = onnx_name["inner." + name]
        g = p.grad.numpy()
        grads[key] = (g.T if transposed else g).astype(np.float32)

    os.makedirs(args.out, exist_ok=True)
    onnx.save(onnx_model, os.path.join(args.out, "bert_tied.onnx"))
    np.savez(os.path.join(args.out, "bert_tied.data.npz"), **data)
    np.savez(os.path.join(args.out, "bert_tied.grads.npz"), **grads)
    print(f"bert_tied: {len(params)} parameters, {len(values)} initializers, "
          f"{len(identities)} Identity nodes; loss {loss.item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
