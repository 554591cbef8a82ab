#!/usr/bin/env python3
"""Regenerate the dropout training reference in test/models/train.

`mlp_dropout`: Dropout(0.1) on the input, Linear(16, 32), GELU (erf),
Dropout(0.25), Linear(32, 4), exported by PyTorch in training mode (so the
two Dropout nodes keep training_mode = true), with seeded random weights.

A compiled training step draws each dropout's keep-mask from Philox4x32-10
keyed by the step's `dropout_seed` (docs/training.md, "Dropout"); PyTorch's own
generator draws other masks, so the reference here runs the PyTorch model with
the masks lmopt's definition gives, computed in numpy
(test/Target/CPU/Inputs/dropout_mask_ref.py, checked against Random123's
known answers), and everything else (autograd, MSE loss, AdamW, clipping) is
PyTorch's. Written:

- mlp_dropout.onnx;
- mlp_dropout.grads.npz: the loss of the first 8 examples of
  mlp_mse.data.npz and its gradient with respect to every initializer, in
  float64, with dropout_seed GRAD_SEED;
- mlp_dropout.adamw.json: the loss of the same 8 examples without dropout
  (what the eval entry and a --disable-dropout step compute), and AdamW loss curves under lmopt-train's per-step
  seeds (--seed TRAIN_SEED; tools/lmopt-train, dropoutSeed) for run D (batch
  8) and run E (batch 8 as 2 accumulated micro-batches of 4, each drawing its
  own masks).

Needs torch (regeneration only; the tests read the committed files):

    python3 scripts/make_dropout_fixtures.py [--out test/models/train]
"""

import argparse
import json
import os
import sys
import warnings
import zlib

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Target", "CPU", "Inputs"))
import dropout_mask_ref as philox  # noqa: E402

DEFAULT_OUT = os.path.join(HERE, "..", "test", "models", "train")
CONFIG = dict(in_features=16, hidden_features=32, out_features=4)
RATIOS = (0.1, 0.25)
GRAD_SEED = 0x0123456789ABCDEF
GRAD_BATCH = 8
TRAIN_SEED = 5
MASK64 = (1 << 64) - 1


class MlpDropout(nn.Module):
    def __init__(self, in_features, hidden_features, out_features):
        super().__init__()
        self.drop_in = nn.Dropout(RATIOS[0])
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.drop_hidden = nn.Dropout(RATIOS[1])
        self.fc2 = nn.Linear(hidden_features, out_features)

    def forward(self, x):
        return self.fc2(self.drop_hidden(self.act(self.fc1(self.drop_in(x)))))


class PhiloxDropout(nn.Module):
    """Dropout with lmopt's mask: stream `stream` of the seed in `state`."""

    def __init__(self, ratio, stream, state):
        super().__init__()
        self.ratio, self.stream, self.state = ratio, stream, state

    def forward(self, x):
        keep = philox.keep_mask(self.state["seed"], tuple(x.shape), self.ratio,
                                self.stream)
        scale = 1.0 / (1.0 - self.ratio)
        return x * torch.from_numpy(keep).to(x.dtype) * scale


def dropout_seed(seed: int, step: int, micro: int) -> int:
    """lmopt-train's dropout_seed for micro-batch `micro` of optimizer step
    `step` (splitmix64's finalizer over a Weyl sequence)."""
    z = (seed + 0x9E3779B97F4A7C15 * (step * 4096 + micro + 1)) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def build():
    seed = zlib.crc32(b"mlp_dropout")
    torch.manual_seed(seed)
    model = MlpDropout(**CONFIG)
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim == 1:
                p.add_(0.1 * torch.randn_like(p))
    return model


def export(model, path):
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (torch.zeros(2, CONFIG["in_features"]),), path,
            dynamo=False, opset_version=17, input_names=["x"],
            output_names=["pred"], dynamic_axes={"x": {0: "batch"},
                                                 "pred": {0: "batch"}},
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False)
    model.eval()
    onnx_model = onnx.load(path)
    onnx.checker.check_model(onnx_model, full_check=True)
    dropouts = [n for n in onnx_model.graph.node if n.op_type == "Dropout"]
    assert len(dropouts) == 2, [n.op_type for n in onnx_model.graph.node]
    return onnx_model


def with_philox(model, state):
    model.drop_in = PhiloxDropout(RATIOS[0], 0, state)
    model.drop_hidden = PhiloxDropout(RATIOS[1], 1, state)
    return model


def check_initializers(onnx_model, model):
    names = {i.name: tuple(i.dims) for i in onnx_model.graph.initializer}
    params = dict(model.named_parameters())
    assert names == {n: tuple(p.shape) for n, p in params.items()}, names
    return params


def gradients(model, data, state):
    model64 = model.double()
    state["seed"] = GRAD_SEED
    x = torch.from_numpy(data["x"][:GRAD_BATCH]).double()
    target = torch.from_numpy(data["target"][:GRAD_BATCH]).double()
    model64.zero_grad()
    loss = F.mse_loss(model64(x), target)
    loss.backward()
    out = {n: p.grad.numpy().astype(np.float32)
           for n, p in model64.named_parameters()}
    out["loss"] = np.float32(loss.item())
    out["non_parameter_initializers"] = np.zeros(0, np.float32)
    model.float()
    return out


def train(model, data, state, steps, micro_batches, recipe):
    params = list(model.parameters())
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias")]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": recipe["weight_decay"]},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=recipe["lr"], foreach=False)
    count = len(data["x"])
    micro = recipe["batch_size"] // micro_batches
    losses, norms = [], []
    for step in range(steps):
        start = (step * recipe["batch_size"]) % count
        optimizer.zero_grad(set_to_none=True)
        step_losses = []
        for m in range(micro_batches):
            state["seed"] = dropout_seed(TRAIN_SEED, step, m)
            lo = start + m * micro
            x = torch.from_numpy(data["x"][lo:lo + micro])
            target = torch.from_numpy(data["target"][lo:lo + micro])
            loss = F.mse_loss(model(x), target)
            (loss / micro_batches).backward()
            step_losses.append(loss.detach())
        norms.append(float(np.float32(nn.utils.clip_grad_norm_(
            params, recipe["clip_norm"]).item())))
        optimizer.step()
        losses.append(float(np.float32(torch.stack(step_losses).mean().item())))
    return {"curve": {"loss": losses, "grad_norm": norms},
            "hyperparameters": dict(recipe, steps=steps,
                                    micro_batches=micro_batches,
                                    seed=TRAIN_SEED)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    philox.check_known_answers()
    data = dict(np.load(os.path.join(args.out, "mlp_mse.data.npz")))
    model = build()
    path = os.path.join(args.out, "mlp_dropout.onnx")
    onnx_model = export(model, path)
    check_initializers(onnx_model, model)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        model.eval()
        eval_loss = float(np.float32(F.mse_loss(
            model(torch.from_numpy(data["x"][:GRAD_BATCH])),
            torch.from_numpy(data["target"][:GRAD_BATCH])).item()))
    state = {"seed": 0}
    with_philox(model, state)
    np.savez(os.path.join(args.out, "mlp_dropout.grads.npz"),
             **gradients(model, data, state))
    recipe = dict(batch_size=8, lr=1e-3, weight_decay=0.01, clip_norm=1.0,
                  no_decay=["*bias"], schedule="constant")
    runs = {}
    for name, steps, micro in (("D", 24, 1), ("E", 12, 2)):
        model.load_state_dict(initial)
        runs[name] = train(model, data, state, steps, micro, recipe)
    reference = {
        "model": "mlp_dropout.onnx",
        "data": "mlp_mse.data.npz",
        "grad_seed": GRAD_SEED,
        # The loss of the first 8 examples without dropout (eval mode).
        "eval_loss": eval_loss,
        "train_seed": TRAIN_SEED,
        "runs": runs,
    }
    with open(os.path.join(args.out, "mlp_dropout.adamw.json"), "w") as f:
        json.dump(reference, f, indent=1)
    print(f"wrote mlp_dropout.* to {args.out}: loss at GRAD_SEED "
          f"{float(np.load(os.path.join(args.out, 'mlp_dropout.grads.npz'))['loss']):.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
