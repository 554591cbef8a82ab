#!/usr/bin/env python3
"""Regenerate the training reference data in test/models/train.

A tiny BERT sequence classifier (and a two-layer MLP regressor) with seeded
random weights, exported to ONNX as scripts/make_fixtures.py exports its
fixtures, plus what a compiled training step is checked against, all computed
with PyTorch: seeded data, the loss of one batch and its gradient with respect
to every weight initializer of the .onnx file (in float64), and AdamW training
curves (in float32). The script also writes README.md.

Needs torch, transformers and onnxscript (regeneration only; the tests read the
committed files):

    pip install torch transformers onnxscript
    python3 scripts/make_train_fixtures.py [--out test/models/train]
"""

import argparse
import copy
import dataclasses
import fnmatch
import json
import os
import shutil
import sys
import tempfile
import zlib
from typing import Callable

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (the fixtures' builders and export)

DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "models", "train"
)
# The examples whose loss and gradient are stored: the first batch.
GRAD_BATCH = 8
# Scalar keys of NAME.grads.npz next to the initializer names.
LOSS_KEY = "loss"
NON_PARAMETER_KEY = "non_parameter_initializers"


# --------------------------------------------------------------------------
# Models.
# --------------------------------------------------------------------------


def bert_cls_class():
    from transformers import BertForSequenceClassification

    class BertClsLogits(BertForSequenceClassification):
        """BertForSequenceClassification returning only its logits, so that the
        export and mf.run_torch see one tensor, while the parameters keep the
        Hugging Face names (a wrapper module would prefix them)."""

        def forward(self, input_ids, attention_mask, token_type_ids):
            return super().forward(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).logits

    return BertClsLogits


BERT_CLS_CONFIG = dict(mf.BERT_CONFIG, num_labels=3)


def build_bert_cls():
    from transformers import BertConfig

    return mf.hf_model("bert_cls", BertConfig, bert_cls_class(), BERT_CLS_CONFIG)


def without_padding_idx(module: nn.Module) -> nn.Module:
    """nn.Embedding(padding_idx=p) drops the gradient of row p, which an ONNX
    Gather does not; without it PyTorch differentiates the exported graph. The
    data keep the pad id out of real tokens, so the row's gradient is zero
    either way (pad positions never reach the loss)."""
    for sub in module.modules():
        if isinstance(sub, nn.Embedding):
            sub.padding_idx = None
    return module


MLP_CONFIG = dict(in_features=16, hidden_features=32, out_features=4)


class Mlp(nn.Module):
    """x -> fc2(gelu(fc1(x)))."""

    def __init__(self, in_features, hidden_features, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, out_features)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def build_mlp_mse():
    mf.seed_everything("mlp_mse")
    model = Mlp(**MLP_CONFIG)
    mf.perturb_constant_parameters(model)
    return model.eval()


# --------------------------------------------------------------------------
# Data.
# --------------------------------------------------------------------------

BERT_CLS_SEQ = 16
BERT_CLS_LABELS = BERT_CLS_CONFIG["num_labels"]
TOKEN_LOW, TOKEN_HIGH = 3, BERT_CLS_CONFIG["vocab_size"]


def bert_cls_data(rng, count: int) -> dict:
    """Half the rows (at random) end in 1 to seq/2 pad tokens (id 0, which no
    real token uses); token types are 0 on the first half of the real tokens
    and 1 on the rest; the label is the band of token ids (thirds of
    [3, 1000)) most real tokens fall in, lowest band on ties."""
    seq = BERT_CLS_SEQ
    padded = rng.random(count) < 0.5
    lengths = np.where(padded, rng.integers(seq // 2, seq, size=count), seq)
    positions = np.arange(seq)[None, :]
    mask = (positions < lengths[:, None]).astype(np.int64)
    ids = mf.token_ids(rng, count, seq, mask, pad_id=0, low=TOKEN_LOW, high=TOKEN_HIGH)
    types = ((positions >= (lengths // 2)[:, None]) & (mask == 1)).astype(np.int64)
    band = (ids - TOKEN_LOW) * BERT_CLS_LABELS // (TOKEN_HIGH - TOKEN_LOW)
    counts = np.stack(
        [((band == c) & (mask == 1)).sum(axis=1) for c in range(BERT_CLS_LABELS)],
        axis=1,
    )
    return {
        "input_ids": ids,
        "attention_mask": mask,
        "token_type_ids": types,
        "labels": counts.argmax(axis=1).astype(np.int64),
    }


def mlp_mse_data(rng, count: int) -> dict:
    """x ~ N(0, 1); target = tanh(x A) + 0.1 noise, with one seeded A for
    the training and validation sets."""
    teacher = np.random.default_rng(zlib.crc32(b"mlp_mse.teacher"))
    a = teacher.standard_normal(
        (MLP_CONFIG["in_features"], MLP_CONFIG["out_features"])
    ) / np.sqrt(MLP_CONFIG["in_features"])
    x = rng.standard_normal((count, MLP_CONFIG["in_features"]))
    noise = rng.standard_normal((count, MLP_CONFIG["out_features"]))
    return {
        "x": x.astype(np.float32),
        "target": (np.tanh(x @ a) + 0.1 * noise).astype(np.float32),
    }


# --------------------------------------------------------------------------
# Training recipes: torch.optim.AdamW over the ONNX initializers' parameters.
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    steps: int
    batch_size: int = 8
    micro_batches: int = 1
    lr: float = 1e-3
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0
    # fnmatch patterns (case-sensitive) on ONNX initializer names: these get
    # weight decay 0.
    no_decay: tuple = ()
    # clip_grad_norm_ threshold; None: no clipping.
    max_grad_norm: float = None
    # "constant", or "linear": get_linear_schedule_with_warmup(warmup_steps,
    # schedule_steps).
    schedule: str = "constant"
    warmup_steps: int = 0
    schedule_steps: int = 0

    def hyperparameters(self) -> dict:
        out = dataclasses.asdict(self)
        del out["name"], out["description"]
        out["betas"] = list(self.betas)
        out["no_decay"] = list(self.no_decay)
        return out

    def lr_factor(self, step: int) -> float:
        """The factor of the lr of optimizer step `step` (0-based), as
        transformers' LambdaLR applies it before each step."""
        if self.schedule == "constant":
            return 1.0
        if step < self.warmup_steps:
            return float(step) / float(max(1, self.warmup_steps))
        return max(
            0.0,
            float(self.schedule_steps - step)
            / float(max(1, self.schedule_steps - self.warmup_steps)),
        )


RUN_A = Recipe(
    name="A",
    description=(
        "AdamW with weight decay 0.01 except on biases and LayerNorm, global "
        "gradient-norm clipping at 1.0, linear warm-up over 10 steps then linear "
        "decay to 0 at step 100"
    ),
    steps=100,
    weight_decay=0.01,
    no_decay=("*bias", "*LayerNorm*"),
    max_grad_norm=1.0,
    schedule="linear",
    warmup_steps=10,
    schedule_steps=100,
)
RUN_B = dataclasses.replace(
    RUN_A,
    name="B",
    description=(
        "run A's recipe (same schedule, still reaching 0 at step 100) for its "
        "first 50 steps, each batch of 8 as 2 accumulated micro-batches of 4 "
        "(each micro-batch loss divided by 2 before backward); mathematically "
        "the same updates as run A"
    ),
    steps=50,
    micro_batches=2,
)
RUN_C = Recipe(
    name="C",
    description="AdamW at a constant lr 1e-3, no weight decay, no clipping",
    steps=20,
)


def grad_norm(params: list) -> torch.Tensor:
    """clip_grad_norm_'s total norm: the 2-norm of the per-tensor 2-norms."""
    return torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(p.grad) for p in params])
    )


def batch_of(data: dict, start: int, size: int) -> dict:
    return {k: v[start : start + size] for k, v in data.items()}


def train(task, module: nn.Module, params: dict, recipe: Recipe, data: dict,
          val: dict) -> tuple:
    """Runs `recipe` on `module` (float32, eval mode: no dropout) over `data` in
    file order, wrapping around. `params` maps ONNX initializer names to the
    module's parameters. Returns (curve dict, final parameters)."""
    from transformers import get_linear_schedule_with_warmup

    names = list(params)
    no_decay = [
        n for n in names if any(fnmatch.fnmatchcase(n, p) for p in recipe.no_decay)
    ]
    decay = [n for n in names if n not in no_decay]
    groups = [
        {"params": [params[n] for n in decay], "weight_decay": recipe.weight_decay},
        {"params": [params[n] for n in no_decay], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(
        [g for g in groups if g["params"]],
        lr=recipe.lr,
        betas=recipe.betas,
        eps=recipe.eps,
        foreach=False,
    )
    scheduler = None
    if recipe.schedule == "linear":
        scheduler = get_linear_schedule_with_warmup(
            optimizer, recipe.warmup_steps, recipe.schedule_steps
        )
    ordered = [params[n] for n in names]
    count = len(next(iter(data.values())))
    assert count % recipe.batch_size == 0 and recipe.batch_size % recipe.micro_batches == 0
    micro = recipe.batch_size // recipe.micro_batches
    curve = {"step": [], "loss": [], "lr": [], "grad_norm": []}
    for step in range(recipe.steps):
        start = (step * recipe.batch_size) % count
        optimizer.zero_grad(set_to_none=True)
        losses = []
        for m in range(recipe.micro_batches):
            loss = task.loss_of(module, batch_of(data, start + m * micro, micro))
            (loss / recipe.micro_batches).backward()
            losses.append(loss.detach())
        norm = grad_norm(ordered)
        if recipe.max_grad_norm is not None:
            clipped = nn.utils.clip_grad_norm_(ordered, recipe.max_grad_norm)
            assert torch.equal(clipped, norm), (clipped, norm)
        lrs = {g["lr"] for g in optimizer.param_groups}
        assert lrs == {recipe.lr * recipe.lr_factor(step)}, (lrs, step)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        curve["step"].append(step + 1)
        curve["loss"].append(f32(torch.stack(losses).mean()))
        curve["lr"].append(lrs.pop())
        curve["grad_norm"].append(f32(norm))
    with torch.no_grad():
        val_loss = f32(task.loss_of(module, val))
    final = {n: task.onnx_layout(n, p.detach()) for n, p in params.items()}
    return {
        "description": recipe.description,
        "hyperparameters": recipe.hyperparameters(),
        "no_decay_initializers": no_decay if recipe.weight_decay else [],
        "curve": curve,
        "val_loss_after": val_loss,
    }, final


def f32(t: torch.Tensor) -> float:
    """A float32 scalar as a JSON number that reads back to the same float32."""
    return float(np.float32(t.item()))


# --------------------------------------------------------------------------
# Initializers <-> parameters.
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Binding:
    """An ONNX initializer holding a parameter (transposed: as [in, out])."""

    param: str
    transposed: bool


def bind_initializers(model: onnx.ModelProto, module: nn.Module) -> tuple:
    """Matches every float initializer with the parameter (or float buffer)
    equal to it or to its transpose. Returns ({initializer: Binding} for
    parameters, [initializers holding buffers]); raises if an initializer
    matches nothing or several tensors, or a parameter has no initializer."""
    params = {n: p.detach().numpy() for n, p in module.named_parameters()}
    buffers = {
        n: b.numpy()
        for n, b in module.named_buffers()
        if b.dtype.is_floating_point
    }
    bindings, non_parameters, problems = {}, [], []
    for init in model.graph.initializer:
        value = numpy_helper.to_array(init)
        if value.dtype.kind != "f":
            continue
        matches = [
            (kind, name, transposed)
            for kind, tensors in (("parameter", params), ("buffer", buffers))
            for name, tensor in tensors.items()
            for transposed, candidate in ((False, tensor), (True, tensor.T))
            if (not transposed or tensor.ndim == 2)
            and candidate.shape == value.shape
            and candidate.dtype == value.dtype
            and np.array_equal(candidate, value)
        ]
        if len(matches) != 1:
            problems.append(
                f"initializer '{init.name}' {value.dtype}{list(value.shape)} "
                f"matches {len(matches)} tensors: {matches}"
            )
            continue
        kind, name, transposed = matches[0]
        if kind == "buffer":
            non_parameters.append(init.name)
        else:
            bindings[init.name] = Binding(name, transposed)
    bound = [b.param for b in bindings.values()]
    problems += [
        f"parameter '{n}' is held by {bound.count(n)} initializers"
        for n in params
        if bound.count(n) != 1
    ]
    if problems:
        raise RuntimeError("; ".join(problems))
    return bindings, non_parameters


def check_distinct_initializers(model: onnx.ModelProto) -> None:
    """Equal initializers would let a name-for-value mix-up pass unseen (and
    let an exporter deduplicate them); perturb_constant_parameters should have
    made every one distinct."""
    seen = {}
    for init in model.graph.initializer:
        value = numpy_helper.to_array(init)
        key = (value.dtype.str, value.shape, value.tobytes())
        if key in seen:
            raise RuntimeError(f"initializers '{seen[key]}' and '{init.name}' are equal")
        seen[key] = init.name


# --------------------------------------------------------------------------
# Tasks.
# --------------------------------------------------------------------------


@dataclasses.dataclass
class Task:
    fixture: mf.Fixture
    # The data key the loss compares the output with; the loss's name (as
    # NAME.adamw.json gives it) and what it computes.
    target: str
    loss_name: str
    loss_description: str
    loss: Callable
    make_data: Callable
    train_count: int
    val_count: int
    recipes: list
    # Applied to the copies that are differentiated and trained.
    prepare: Callable = lambda module: module
    # {initializer: Binding}, from the exported model (make_task sets it).
    bindings: dict = None

    @property
    def name(self):
        return self.fixture.name

    def loss_of(self, module: nn.Module, batch: dict) -> torch.Tensor:
        dtype = next(module.parameters()).dtype
        tensors = {k: torch.from_numpy(v) for k, v in batch.items()}
        tensors = {
            k: t.to(dtype) if t.dtype.is_floating_point else t
            for k, t in tensors.items()
        }
        out = module(*(tensors[k] for k in self.fixture.input_names))
        return self.loss(out, tensors[self.target])

    def onnx_layout(self, name: str, tensor: torch.Tensor) -> np.ndarray:
        if self.bindings[name].transposed:
            tensor = tensor.T
        return np.ascontiguousarray(tensor.to(torch.float32).numpy())

    def parameters_by_initializer(self, module: nn.Module) -> dict:
        named = dict(module.named_parameters())
        return {n: named[b.param] for n, b in self.bindings.items()}


BERT_CLS = Task(
    fixture=mf.Fixture(
        name="bert_cls",
        description=(
            "BertForSequenceClassification (the `bert` encoder and pooler, a "
            "3-way linear classifier)"
        ),
        build=build_bert_cls,
        config=BERT_CLS_CONFIG,
        config_class="BertConfig",
        make_inputs=mf.bert_inputs,
        seq=BERT_CLS_SEQ,
        input_axes=mf.BERT_IO["input_axes"],
        output_axes={"logits": {0: "batch"}},
    ),
    target="labels",
    loss_name="cross_entropy",
    loss_description="cross-entropy of the logits against `labels`, mean over the batch",
    loss=F.cross_entropy,
    make_data=bert_cls_data,
    train_count=64,
    val_count=16,
    recipes=[RUN_A, RUN_B, RUN_C],
    prepare=without_padding_idx,
)
MLP_MSE = Task(
    fixture=mf.Fixture(
        name="mlp_mse",
        description="Linear(16, 32), GELU (erf), Linear(32, 4)",
        build=build_mlp_mse,
        config=MLP_CONFIG,
        config_class="Mlp",
        make_inputs=lambda rng, batch, seq: {
            "x": mlp_mse_data(rng, batch)["x"]
        },
        seq=0,
        input_axes={"x": {0: "batch"}},
        output_axes={"pred": {0: "batch"}},
    ),
    target="target",
    loss_name="mse",
    loss_description=(
        "mean squared error of `pred` against `target`, mean over every element "
        "(batch x 4)"
    ),
    loss=F.mse_loss,
    make_data=mlp_mse_data,
    train_count=64,
    val_count=16,
    recipes=[RUN_C],
)
TASKS = [BERT_CLS, MLP_MSE]


# --------------------------------------------------------------------------
# Generation.
# --------------------------------------------------------------------------


def gradients(task: Task, module: nn.Module, batch: dict, dtype) -> tuple:
    """(loss, {initializer: gradient in the initializer's layout})."""
    model = task.prepare(copy.deepcopy(module).to(dtype))
    loss = task.loss_of(model, batch)
    loss.backward()
    params = task.parameters_by_initializer(model)
    return loss.detach(), {
        n: np.ascontiguousarray(
            (p.grad.T if task.bindings[n].transposed else p.grad).numpy()
        )
        for n, p in params.items()
    }


# A gradient this much smaller than the largest one is zero in exact
# arithmetic, and its float64 value rounding noise.
ZERO_GRADIENT = 1e-12


def zero_gradients(grads: dict) -> list:
    top = max(float(np.max(np.abs(g))) for g in grads.values())
    return [k for k, g in grads.items() if np.max(np.abs(g)) <= ZERO_GRADIENT * top]


def max_relative_error(got: dict, want: dict, skip: list) -> float:
    return max(
        float(np.max(np.abs(got[k] - want[k])) / np.max(np.abs(want[k])))
        for k in want
        if k not in skip
    )


def check_padding_rows(task: Task, module: nn.Module, grads: dict) -> None:
    """The row of each embedding's pad id must get no gradient although the
    gradient runs differentiate it (see without_padding_idx)."""
    names = {b.param: n for n, b in task.bindings.items()}
    for name, sub in module.named_modules():
        if isinstance(sub, nn.Embedding) and sub.padding_idx is not None:
            row = grads[names[name + ".weight"]][sub.padding_idx]
            if np.any(row != 0):
                raise RuntimeError(
                    f"pad row {sub.padding_idx} of '{name}' has gradient "
                    f"{np.max(np.abs(row)):.3g}: a pad token reaches the loss"
                )


def make_task(task: Task, out_dir: str) -> dict:
    fx = task.fixture
    module = fx.build()
    data = task.make_data(np.random.default_rng(zlib.crc32(f"{fx.name}.data".encode())),
                          task.train_count)
    val = task.make_data(np.random.default_rng(zlib.crc32(f"{fx.name}.val".encode())),
                         task.val_count)
    grad_batch = batch_of(data, 0, GRAD_BATCH)
    inputs = {k: grad_batch[k] for k in fx.input_names}
    model = mf.export(fx, module, inputs)
    check_distinct_initializers(model)
    task.bindings, non_parameters = bind_initializers(model, module)

    # The model lands in out_dir only once ORT agrees with PyTorch on it.
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = os.path.join(tmp, fx.name + ".onnx")
        onnx.save_model(model, tmp_path, save_as_external_data=False)
        _, ort_diff = mf.reference(fx, module, tmp_path, inputs)
        path = os.path.join(out_dir, fx.name + ".onnx")
        shutil.move(tmp_path, path)

    loss64, grads64 = gradients(task, module, grad_batch, torch.float64)
    _, grads32 = gradients(task, module, grad_batch, torch.float32)
    check_padding_rows(task, module, grads64)
    zeros = zero_gradients(grads64)
    f32_grad_error = max_relative_error(grads32, grads64, zeros)
    grads64 = {k: v.astype(np.float32) for k, v in grads64.items()}
    print(f"{fx.name}: loss {loss64.item():.6f}, float32 gradients within "
          f"{f32_grad_error:.2g} (relative to each tensor's largest) of float64; "
          f"zero gradients: {zeros}")

    runs, finals = {}, {}
    for recipe in task.recipes:
        trained = task.prepare(copy.deepcopy(module))
        runs[recipe.name], finals[recipe.name] = train(
            task, trained, task.parameters_by_initializer(trained), recipe, data, val
        )
        c = runs[recipe.name]["curve"]
        print(f"{fx.name} run {recipe.name}: loss {c['loss'][0]:.5f} -> "
              f"{c['loss'][-1]:.5f} in {recipe.steps} steps")
    with torch.no_grad():
        val_loss = f32(task.loss_of(module, val))
    initial = task.parameters_by_initializer(module)
    zero_drift = max(
        (float(np.max(np.abs(finals["C"][n] - task.onnx_layout(n, initial[n].detach()))))
         for n in zeros),
        default=0.0,
    )

    def save(suffix, arrays):
        mf.save_npz(os.path.join(out_dir, fx.name + suffix), arrays)

    save(".data.npz", data)
    save(".val.npz", val)
    save(
        ".grads.npz",
        {
            LOSS_KEY: np.float32(loss64.item()),
            NON_PARAMETER_KEY: np.array(non_parameters, dtype=np.str_).reshape(-1),
            **grads64,
        },
    )
    save(".adamw_c.final.npz", finals["C"])
    curves = {
        "model": fx.name + ".onnx",
        "model_sha256": mf.sha256(path),
        "data": fx.name + ".data.npz",
        "val": fx.name + ".val.npz",
        "inputs": fx.input_names,
        "target": task.target,
        "loss": task.loss_name,
        "loss_description": task.loss_description,
        "mode": "eval (dropout off)",
        "val_loss_before": val_loss,
        "runs": runs,
    }
    with open(os.path.join(out_dir, fx.name + ".adamw.json"), "w") as fh:
        json.dump(curves, fh, indent=1)
        fh.write("\n")
    if "A" in runs and "B" in runs:
        a, b = runs["A"]["curve"], runs["B"]["curve"]
        n = len(b["loss"])
        print(f"{fx.name}: run B vs run A's first {n} steps: loss within "
              f"{max(abs(x - y) for x, y in zip(a['loss'], b['loss'])):.2g}")

    ops = mf.op_counts(model)
    return {
        "description": fx.description,
        "config_class": fx.config_class,
        "config": fx.config,
        "inputs": mf.value_info(model.graph.input),
        "outputs": mf.value_info(model.graph.output),
        "nodes": sum(ops.values()),
        "op_types": ops,
        "max_abs_diff_vs_torch": ort_diff,
        "bindings": task.bindings,
        "non_parameters": non_parameters,
        "loss": float(np.float32(loss64.item())),
        "f32_grad_error": f32_grad_error,
        "zero_gradients": zeros,
        "zero_gradient_drift": zero_drift,
        "val_loss_before": val_loss,
        "runs": runs,
        "constants": folded_constants(model),
    }


def folded_constants(model: onnx.ModelProto) -> list:
    """Constant nodes with more than one element: what the exporter folded
    (buffers, shapes) instead of keeping as initializers."""
    out = []
    for node in model.graph.node:
        if node.op_type != "Constant":
            continue
        value = numpy_helper.to_array(node.attribute[0].t)
        if value.size > 1:
            out.append(f"`{node.output[0]}` {value.dtype}{list(value.shape)}")
    return out


# --------------------------------------------------------------------------
# README.
# --------------------------------------------------------------------------


def file_sizes(out_dir: str) -> list:
    return [
        (name, os.path.getsize(os.path.join(out_dir, name)))
        for name in sorted(os.listdir(out_dir))
        if name != "README.md"
    ]


def write_readme(out_dir: str, facts: dict, versions: dict) -> None:
    bert = facts["bert_cls"]
    runs = bert["runs"]
    transposed = sorted(n for n, b in bert["bindings"].items() if b.transposed)
    kept = sorted(n for n, b in bert["bindings"].items() if not b.transposed)
    a = runs["A"]["curve"]["loss"]
    sizes = file_sizes(out_dir)
    lines = [
        "# Training reference data",
        "",
        "What a compiled training step is checked against: tiny models with seeded",
        "random weights exported to ONNX (as `test/models/onnx` fixtures are, by",
        "`scripts/make_fixtures.py`'s builders and exporter), seeded data, and",
        "PyTorch's loss, gradients and AdamW training curves on them. Generated by",
        "`scripts/make_train_fixtures.py`; do not edit by hand.",
        "",
        "Generated with " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        "## Files",
        "",
        "| file | size | what |",
        "| --- | --- | --- |",
    ]
    what = {
        ".onnx": "the model, every weight inside",
        ".data.npz": "training set (in file order)",
        ".val.npz": "validation set",
        ".grads.npz": f"`{LOSS_KEY}` of the first {GRAD_BATCH} training examples and its "
        "gradient per initializer (float64 autograd, stored float32)",
        ".adamw.json": "AdamW curves: per run, hyper-parameters and per-step loss, lr, "
        "grad norm",
        ".adamw_c.final.npz": "parameters after run C, per initializer (float32)",
    }
    for name, size in sizes:
        suffix = name[name.index("."):]
        lines.append(f"| `{name}` | {size / 1024:.0f} KiB | {what[suffix]} |")
    lines += [
        "",
        f"Total {sum(s for _, s in sizes) / 1024:.0f} KiB.",
        "",
        "## Models",
    ]
    for name, f in facts.items():
        cfg = ", ".join(f"{k}={v!r}" for k, v in f["config"].items())
        sig = lambda values: ", ".join(
            f"`{v['name']}` {v['dtype']}[{', '.join(map(str, v['shape']))}]"
            for v in values
        )
        ops = ", ".join(f"{op} {n}" for op, n in f["op_types"].items())
        lines += [
            "",
            f"### `{name}`",
            "",
            f"{f['description']}; seeded, parameters perturbed so that no two "
            "initializers are equal, `model.eval()`, TorchScript exporter "
            f"(`dynamo=False`), opset {mf.TORCHSCRIPT_OPSET}, constant folding on.",
            "",
            f"- config: `{f['config_class']}({cfg})`"
            + (", `attn_implementation='eager'`" if "Config" in f["config_class"] else ""),
            f"- inputs: {sig(f['inputs'])}",
            f"- outputs: {sig(f['outputs'])}",
            f"- ops ({f['nodes']}): {ops}",
            f"- ONNX Runtime vs PyTorch on the gradient batch: max abs diff "
            f"{f['max_abs_diff_vs_torch']:.2g}",
            f"- float initializers: {len(f['bindings'])}, all parameters "
            f"({sum(b.transposed for b in f['bindings'].values())} stored transposed); "
            f"not parameters: {', '.join(f['non_parameters']) or 'none'}",
        ]
        if f["constants"]:
            lines.append(
                "- folded into Constant nodes (not initializers): "
                + ", ".join(f["constants"])
            )
    lines += [
        "",
        "## Initializer names and parameters",
        "",
        "Every file keys weights by the ONNX initializer name, the names lmopt sees.",
        "Generation matches each float initializer with the PyTorch parameter that",
        "is exactly equal to it or to its transpose, and fails if an initializer",
        "matches no tensor or several, or a parameter has no initializer (float",
        "buffers are candidates too; one matched would be listed under",
        f"`{NON_PARAMETER_KEY}` in `NAME.grads.npz`: none is).",
        "",
        f"In `bert_cls.onnx`, {len(kept)} initializers keep their parameter's name",
        "(embeddings, LayerNorm scales and biases, linear biases, and the Gemm",
        "weights of pooler and classifier, stored [out, in] with `transB=1`). The",
        f"other {len(transposed)} are the encoder's linear weights, which the exporter",
        "folds into a transposed copy for `MatMul` and names `onnx::MatMul_<n>`",
        f"(`{transposed[0]}`, ...; the numbers come from the trace and may change",
        "with the exporter's version, so tests read the names from these files):",
        "they are stored [in, out], and every file",
        "holds them in that layout (gradients and final values are the PyTorch",
        "weight's, transposed). No two initializers are equal, so the exporter",
        "deduplicated nothing; it added "
        f"{bert['op_types'].get('Identity', 0) or 'no'} Identity nodes and folded",
        "the int64 `position_ids` buffer into a Constant node (listed above).",
        "",
        "| initializer | parameter |",
        "| --- | --- |",
    ]
    lines += [
        f"| `{n}` | `{bert['bindings'][n].param}`ᵀ |" for n in transposed
    ]
    lines += [
        "",
        "## Data",
        "",
        "- `bert_cls`: `input_ids`, `attention_mask`, `token_type_ids`, `labels`, all",
        f"  int64; 64 training and 16 validation examples of {BERT_CLS_SEQ} tokens. "
        + " ".join(bert_cls_data.__doc__.split()),
        "- `mlp_mse`: `x` float32[64, 16] and `target` float32[64, 4] (16 more in",
        "  the validation set). " + " ".join(mlp_mse_data.__doc__.split()),
        "",
        "Real tokens never use the pad id 0, so the gradient PyTorch gives",
        "`nn.Embedding(padding_idx=0)` (row 0 dropped) and the exported Gather's",
        "gradient agree: pad positions never reach the loss (their keys are",
        "masked to probability 0 and the classifier reads position 0). The",
        "gradient and training runs clear `padding_idx` all the same, so they",
        "differentiate exactly the exported graph.",
        "",
        "## Gradients",
        "",
        f"`NAME.grads.npz`: `{LOSS_KEY}` is the loss of the first {GRAD_BATCH} training",
        "examples (one batch) and every other entry the gradient of that loss",
        "with respect to the initializer of the same name, in the initializer's",
        "layout. Computed with the model and the float inputs cast to float64,",
        "stored float32. Float32 autograd is within "
        + ", ".join(
            f"{f['f32_grad_error']:.1g} (`{n}`)" for n, f in facts.items()
        )
        + " of it, relative to each tensor's largest",
        "gradient (the zero gradients below aside).",
        "",
        "The attention key biases ("
        + ", ".join(f"`{k}`" for k in bert["zero_gradients"])
        + ") have a gradient that is zero in exact arithmetic: adding q.b_k to",
        "every score of a query's row leaves its softmax unchanged. Their stored",
        "values are float64 rounding noise (below "
        f"{ZERO_GRADIENT:.0e} of the largest gradient); compare them with an",
        "absolute tolerance, not a relative one.",
        "",
        *(f"- `{t.name}` loss (`{t.loss_name}`): {t.loss_description}."
          for t in TASKS),
        "",
        "## Training curves",
        "",
        "`NAME.adamw.json` holds, per run, `hyperparameters` (the fields below),",
        "`no_decay_initializers` (the names the patterns select), a `curve`",
        "(`step` 1.., `loss` of the batch before the update, `lr` used by that",
        "update, `grad_norm` before clipping; losses and norms are float32 values),",
        "and `val_loss_after` (the validation set as one batch after the run;",
        "`val_loss_before` is at the top). Every run starts from the weights in",
        "`NAME.onnx`, in eval mode (dropout off), float32, single thread,",
        "deterministic algorithms.",
        "",
        "Optimizer step k (1-based) uses training examples `8(k-1) mod 64` to",
        "`+8` in file order (8 batches an epoch, no shuffling). Its update is",
        "`torch.optim.AdamW` (`foreach=False`), per tensor, with t = k:",
        "",
        "```text",
        "g  = gradient (clipped: g * min(1, max_grad_norm / (grad_norm + 1e-6)),",
        "    grad_norm = sqrt(sum over every tensor of sum(g^2)))",
        "p  = p * (1 - lr * weight_decay)",
        "m  = beta1 * m + (1 - beta1) * g",
        "v  = beta2 * v + (1 - beta2) * g^2",
        "p  = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)",
        "```",
        "",
        "The lr of step k is `lr * factor(k - 1)`; with the linear schedule",
        "(transformers' `get_linear_schedule_with_warmup`), `factor(s) = s /",
        "warmup_steps` for `s < warmup_steps`, else `max(0, (schedule_steps - s) /",
        "(schedule_steps - warmup_steps))`. Step 1 therefore has lr 0: it moves",
        "no weight but still updates m, v and t.",
        "",
        "Weight decay applies to every initializer but those whose name matches a",
        "`no_decay` pattern (`fnmatch.fnmatchcase` on the ONNX initializer name):",
        "`*bias` and `*LayerNorm*`, so the transposed `onnx::MatMul_*` weights do",
        "decay.",
        "",
        "| run | model | steps | batch | lr | schedule | weight decay | clip |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, f in facts.items():
        for run, r in f["runs"].items():
            h = r["hyperparameters"]
            schedule = (
                f"warm-up {h['warmup_steps']}, linear to 0 at {h['schedule_steps']}"
                if h["schedule"] == "linear"
                else "constant"
            )
            batch = str(h["batch_size"])
            if h["micro_batches"] > 1:
                batch += f" ({h['micro_batches']} x {h['batch_size'] // h['micro_batches']})"
            decay = (
                f"{h['weight_decay']} (0 on {', '.join(f'`{p}`' for p in h['no_decay'])})"
                if h["weight_decay"]
                else "0"
            )
            clip = h["max_grad_norm"] if h["max_grad_norm"] is not None else "none"
            lines.append(
                f"| {run} | `{name}` | {h['steps']} | {batch} | {h['lr']} | "
                f"{schedule} | {decay} | {clip} |"
            )
    lines += [""]
    for run, r in runs.items():
        lines.append(f"- run {run}: {r['description']}.")
    lines += [
        "",
        "Run B divides each micro-batch's loss by 2 before backward and records",
        "the mean of the two micro-batch losses; both micro-batches have 4",
        "examples, so its gradients are run A's up to rounding and so is its curve",
        "(a check that accumulation changes nothing).",
        "",
        "The key biases' gradients (zero, see above) are float32 rounding noise in",
        "training too, and AdamW turns noise into steps of up to lr |g| / eps: after",
        f"run C they have moved by {bert['zero_gradient_drift']:.1g} where other tensors "
        "moved by about 1e-2.",
        "Expect another run to drift as little, not identically.",
        "",
        "`bert_cls` run A, loss at steps 1, 10, 50, 100: "
        + ", ".join(f"{a[k - 1]:.4f}" for k in (1, 10, 50, 100))
        + f"; validation loss {bert['val_loss_before']:.4f} before, "
        f"{runs['A']['val_loss_after']:.4f} after (64 examples are memorized, "
        "not generalized from); clipping is active (grad_norm > 1) in "
        f"{sum(g > 1 for g in runs['A']['curve']['grad_norm'])} of its 100 steps.",
        "",
        "## Checking",
        "",
        "`python3 scripts/check_train_fixtures.py` (numpy and onnxruntime only)",
        "reruns ONNX Runtime on each model and checks that the files agree: every",
        "float initializer has a gradient and a final value of its shape, the",
        "losses of the gradient batch and of step 1 match ONNX Runtime's, the",
        "data have the documented shapes and ranges.",
        "",
        "## Regenerating",
        "",
        "```sh",
        "pip install torch transformers onnxscript",
        "python3 scripts/make_train_fixtures.py",
        "```",
        "",
        "Weights, data and training are seeded and deterministic, so regeneration",
        "with the same versions is byte-identical.",
        "",
        "## Dropout: `mlp_dropout`",
        "",
        "`mlp_dropout.onnx` (Dropout(0.1) on the input, Linear(16, 32), GELU,",
        "Dropout(0.25), Linear(32, 4); exported in training mode, so both Dropout",
        "nodes have `training_mode` true), `mlp_dropout.grads.npz` (loss and float64",
        "gradients of the first 8 examples of `mlp_mse.data.npz` at `dropout_seed`",
        "0x0123456789ABCDEF) and `mlp_dropout.adamw.json` (the eval-mode loss of",
        "those examples, and AdamW curves D and E under `lmopt-train --seed 5`) come",
        "from `scripts/make_dropout_fixtures.py`: PyTorch with each dropout's mask",
        "replaced by lmopt's Philox mask (docs/training.md, \"Dropout\"), computed",
        "in numpy by `test/Target/CPU/Inputs/dropout_mask_ref.py`.",
    ]
    with open(os.path.join(out_dir, "README.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.normpath(DEFAULT_OUT))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    import onnxscript
    import transformers

    versions = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": ort.__version__,
        "onnxscript": onnxscript.__version__,
        "numpy": np.__version__,
    }
    facts = {task.name: make_task(task, args.out) for task in TASKS}
    write_readme(args.out, facts, versions)
    total = sum(size for _, size in file_sizes(args.out))
    print(f"{len(file_sizes(args.out))} files, {total / 2**20:.2f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
