#!/usr/bin/env python3
"""Generates the distillation references in test/models/distill.

A teacher (BERT classifier, 2 layers, hidden 64) and a smaller student (1
layer, same vocabulary and hidden size), both returning `logits` and
`hidden` (the last hidden state), exported to ONNX; seeded data; and
PyTorch's knowledge-distillation objective on them:

  alpha * CE(student logits, labels)
  + beta * T^2 * F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1),
                          reduction='batchmean')
  + gamma * F.mse_loss(student hidden, teacher hidden)

with the teacher frozen: the loss of one batch and float64 autograd
gradients of every student parameter (two weightings, one without the CE
term), a 30-step AdamW run's loss curve, and two badly matched students for
the diagnostics (another vocabulary; another width and class count).

usage: python3 scripts/make_distill_fixtures.py [--out DIR]
"""

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
import zlib

import numpy as np
import onnx
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402
import make_train_fixtures as mt  # noqa: E402

DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "models", "distill"
)
TEACHER_CONFIG = dict(mt.BERT_CLS_CONFIG)
STUDENT_CONFIG = dict(mt.BERT_CLS_CONFIG, num_hidden_layers=1)
# Diagnostics only: a vocabulary of 1200; a width of 32 and 4 classes.
VOCAB_CONFIG = dict(STUDENT_CONFIG, vocab_size=1200)
WIDTH_CONFIG = dict(STUDENT_CONFIG, hidden_size=32, intermediate_size=64,
                    num_labels=4)

# The weightings the gradients are stored for (name: alpha, beta, gamma, T).
WEIGHTINGS = {
    "mixed": (0.5, 0.5, 2.0, 2.0),
    "pure": (0.0, 1.0, 1.0, 1.0),
}
CURVE_WEIGHTING = "mixed"
# The width-32 student against the width-64 teacher: CE and the MSE term
# through the learned projection (no KL: the class counts differ).
PROJECTED = (1.0, 0.0, 1.0, 1.0)
CURVE = mt.Recipe(
    name="KD",
    description=(
        "AdamW at a constant lr 1e-3, no weight decay, no clipping, on the "
        "'mixed' objective"
    ),
    steps=30,
)


def bert_hidden_class():
    from transformers import BertForSequenceClassification

    class BertClsHidden(BertForSequenceClassification):
        """The classifier returning its logits and last hidden state."""

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = super().forward(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
                output_hidden_states=True,
            )
            return out.logits, out.hidden_states[-1]

    return BertClsHidden


def fixture(name: str, config: dict) -> mf.Fixture:
    from transformers import BertConfig

    return mf.Fixture(
        name=name,
        description=f"BertForSequenceClassification returning logits and the "
        f"last hidden state, {config['num_hidden_layers']} layer(s)",
        build=lambda: mf.hf_model(name, BertConfig, bert_hidden_class(), config),
        config=config,
        config_class="BertConfig",
        make_inputs=mf.bert_inputs,
        seq=mt.BERT_CLS_SEQ,
        input_axes=mf.BERT_IO["input_axes"],
        output_axes={"logits": {0: "batch"}, "hidden": {0: "batch", 1: "sequence"}},
    )


def kd_loss(student, teacher, batch: dict, weighting,
            projection=None) -> torch.Tensor:
    """The objective; with `projection`, the MSE term reads the student's
    hidden state times it (a narrower student's learned projection)."""
    alpha, beta, gamma, temp = weighting
    dtype = next(student.parameters()).dtype
    args = [torch.from_numpy(batch[k]) for k in ("input_ids", "attention_mask",
                                                 "token_type_ids")]
    s_logits, s_hidden = student(*args)
    with torch.no_grad():
        t_logits, t_hidden = teacher(*args)
    loss = torch.zeros((), dtype=dtype)
    if alpha:
        loss = loss + alpha * F.cross_entropy(s_logits, torch.from_numpy(batch["labels"]))
    if beta:
        kl = F.kl_div(F.log_softmax(s_logits / temp, -1),
                      F.softmax(t_logits / temp, -1), reduction="batchmean")
        loss = loss + beta * temp * temp * kl
    if gamma:
        if projection is not None:
            s_hidden = s_hidden @ projection
        loss = loss + gamma * F.mse_loss(s_hidden, t_hidden)
    return loss


class KdTask:
    """What mt.train needs: the loss of a batch and the ONNX layout."""

    def __init__(self, teacher, bindings, weighting):
        self.teacher, self.bindings, self.weighting = teacher, bindings, weighting

    def loss_of(self, module, batch):
        return kd_loss(module, self.teacher, batch, self.weighting)

    def onnx_layout(self, name, tensor):
        if self.bindings[name].transposed:
            tensor = tensor.T
        return np.ascontiguousarray(tensor.to(torch.float32).numpy())


def export(fx: mf.Fixture, module, inputs: dict, out_dir: str):
    model = mf.export(fx, module, inputs)
    mt.check_distinct_initializers(model)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = os.path.join(tmp, fx.name + ".onnx")
        onnx.save_model(model, tmp_path, save_as_external_data=False)
        _, diff = mf.reference(fx, module, tmp_path, inputs)
        shutil.move(tmp_path, os.path.join(out_dir, fx.name + ".onnx"))
    return model, diff


def gradients(student, teacher, bindings, batch, weighting, dtype):
    s = mt.without_padding_idx(copy.deepcopy(student).to(dtype))
    t = copy.deepcopy(teacher).to(dtype)
    loss = kd_loss(s, t, batch, weighting)
    loss.backward()
    named = dict(s.named_parameters())
    grads = {}
    for init, b in bindings.items():
        g = named[b.param].grad
        grads[init] = np.ascontiguousarray((g.T if b.transposed else g).numpy())
    return float(loss.item()), grads


def projected(args, batch: dict, inputs: dict) -> None:
    """projected.grads.npz: the width-32 student (4 classes) distilled with
    CE + MSE of its hidden state through the learned projection, which
    lmopt initializes to the truncated identity: float64 gradients of the
    student's parameters and of the projection (`distill.projection`,
    [32, 64]). The committed teacher and student are rebuilt from their
    seeds and checked against their ONNX files first."""
    built = {}
    for name, config in (("teacher", TEACHER_CONFIG),
                         ("student_width32", WIDTH_CONFIG)):
        fx = fixture(name, config)
        module = fx.build()
        mf.reference(fx, module, os.path.join(args.out, name + ".onnx"), inputs)
        built[name] = module
    student, teacher = built["student_width32"], built["teacher"]
    model = onnx.load(os.path.join(args.out, "student_width32.onnx"))
    bindings, non_parameters = mt.bind_initializers(model, student)
    assert not non_parameters, non_parameters
    s = mt.without_padding_idx(copy.deepcopy(student).to(torch.float64))
    t = copy.deepcopy(teacher).to(torch.float64)
    projection = torch.nn.Parameter(torch.eye(
        WIDTH_CONFIG["hidden_size"], TEACHER_CONFIG["hidden_size"],
        dtype=torch.float64))
    loss = kd_loss(s, t, batch, PROJECTED, projection)
    loss.backward()
    named = dict(s.named_parameters())
    grads = {init: np.ascontiguousarray(
        (named[b.param].grad.T if b.transposed else named[b.param].grad).numpy())
        for init, b in bindings.items()}
    grads["distill.projection"] = projection.grad.numpy()
    mf.save_npz(os.path.join(args.out, "projected.grads.npz"),
                {"loss": np.float32(loss.item()),
                 **{k: v.astype(np.float32) for k, v in grads.items()}})
    print(f"projected {PROJECTED}: loss {loss.item():.6f}, "
          f"{len(grads)} gradients")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.normpath(DEFAULT_OUT))
    parser.add_argument("--projected-only", action="store_true",
                        help="write projected.grads.npz alone, from the "
                        "committed models")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    data = mt.bert_cls_data(np.random.default_rng(zlib.crc32(b"distill.data")), 64)
    batch = mt.batch_of(data, 0, mt.GRAD_BATCH)
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    if args.projected_only:
        projected(args, batch, inputs)
        return 0
    facts = {}
    modules = {}
    for name, config in (("teacher", TEACHER_CONFIG), ("student", STUDENT_CONFIG),
                         ("student_vocab1200", VOCAB_CONFIG),
                         ("student_width32", WIDTH_CONFIG)):
        fx = fixture(name, config)
        module = fx.build()
        model, diff = export(fx, module, inputs, args.out)
        modules[name] = (module, model)
        facts[name] = {"config": config, "max_abs_diff_vs_torch": diff}
        print(f"{name}: exported, ORT vs torch {diff:.2g}")
    teacher = modules["teacher"][0]
    student, student_model = modules["student"]
    bindings, non_parameters = mt.bind_initializers(student_model, student)
    assert not non_parameters, non_parameters

    mf.save_npz(os.path.join(args.out, "data.npz"), data)
    for key, weighting in WEIGHTINGS.items():
        loss64, grads64 = gradients(student, teacher, bindings, batch, weighting,
                                    torch.float64)
        loss32, grads32 = gradients(student, teacher, bindings, batch, weighting,
                                    torch.float32)
        # Zero in exact arithmetic (a key bias), rounding noise in float64.
        zeros = mt.zero_gradients(grads64)
        err = mt.max_relative_error(grads32, grads64, zeros)
        print(f"{key} {weighting}: loss {loss64:.6f} (f32 {loss32:.6f}), f32 "
              f"gradients within {err:.2g} of float64; zero: {zeros}")
        mf.save_npz(os.path.join(args.out, f"{key}.grads.npz"),
                    {"loss": np.float32(loss64),
                     **{k: v.astype(np.float32) for k, v in grads64.items()}})
        facts[key] = {"weighting": dict(zip(("alpha", "beta", "gamma", "T"), weighting)),
                      "loss": loss64, "f32_grad_error": err}

    projected(args, batch, inputs)

    # The teacher's first layer alone as the student (what lmopt-compile
    # teacher.onnx --prune=keep-layers=0 --distill-from teacher.onnx trains).
    layers = copy.deepcopy(teacher)
    layers.bert.encoder.layer = torch.nn.ModuleList(layers.bert.encoder.layer[:1])
    teacher_bindings, _ = mt.bind_initializers(modules["teacher"][1], teacher)
    kept = dict(layers.named_parameters())
    layer_bindings = {k: b for k, b in teacher_bindings.items() if b.param in kept}
    loss64, grads64 = gradients(layers, teacher, layer_bindings, batch,
                                WEIGHTINGS["pure"], torch.float64)
    print(f"keep-layers=0 student, pure: loss {loss64:.6f}, "
          f"{len(grads64)} parameters")
    mf.save_npz(os.path.join(args.out, "layers.grads.npz"),
                {"loss": np.float32(loss64),
                 **{k: v.astype(np.float32) for k, v in grads64.items()}})
    facts["layers"] = {"weighting": facts["pure"]["weighting"], "loss": loss64}

    trained = mt.without_padding_idx(copy.deepcopy(student))
    task = KdTask(teacher, bindings, WEIGHTINGS[CURVE_WEIGHTING])
    named = dict(trained.named_parameters())
    params = {n: named[b.param] for n, b in bindings.items()}
    run, _ = mt.train(task, trained, params, CURVE, data, mt.batch_of(data, 0, 16))
    c = run["curve"]["loss"]
    print(f"KD run: loss {c[0]:.5f} -> {c[-1]:.5f} in {CURVE.steps} steps")
    with open(os.path.join(args.out, "kd.adamw.json"), "w") as fh:
        json.dump({"weighting": facts[CURVE_WEIGHTING]["weighting"],
                   "runs": {"KD": run}}, fh, indent=1)
        fh.write("\n")
    with open(os.path.join(args.out, "README.md"), "w") as fh:
        fh.write(README.format(facts=json.dumps(facts, indent=1, default=str),
                               torch=torch.__version__))
    return 0


README = """# Distillation reference data

Generated by `scripts/make_distill_fixtures.py` (torch {torch}); do not edit
by hand. The models are BertForSequenceClassification (seeded, every
initializer distinct) returning `logits` [batch, 3] and `hidden` [batch,
sequence, 64], exported by the TorchScript exporter:

| file | what |
| --- | --- |
| `teacher.onnx` | 2 layers, hidden 64, vocabulary 1000 |
| `student.onnx` | 1 layer, hidden 64, vocabulary 1000 |
| `student_vocab1200.onnx` | 1 layer, vocabulary 1200 (diagnostics) |
| `student_width32.onnx` | 1 layer, hidden 32, 4 classes (diagnostics; the learned projection) |
| `data.npz` | 64 examples (`input_ids`, `attention_mask`, `token_type_ids`, `labels`) |
| `mixed.grads.npz`, `pure.grads.npz` | the first 8 examples' loss and float64 autograd gradient of every student initializer (stored float32), teacher frozen |
| `kd.adamw.json` | 30 AdamW steps on the `mixed` objective in file order, batch 8 |
| `layers.grads.npz` | the `pure` objective's gradients for the teacher's first layer alone as the student (keyed by the teacher's initializers) |
| `projected.grads.npz` | `student_width32` on alpha 1, beta 0, gamma 1 (CE plus the MSE of its hidden state times the learned projection, initialized to the truncated identity [32, 64]): loss and float64 gradients, the projection's as `distill.projection` |

Objective: alpha CE(student logits, labels) + beta T^2
KL(softmax(teacher / T) || softmax(student / T)) (batchmean) + gamma
MSE(student hidden, teacher hidden). `mixed`: alpha 0.5, beta 0.5, gamma
2, T 2; `pure`: alpha 0, beta 1, gamma 1, T 1 (no labels).

Facts:

```
{facts}
```
"""


if __name__ == "__main__":
    sys.exit(main())
