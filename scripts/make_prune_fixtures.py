#!/usr/bin/env python3
"""Reference outputs of the bundled BERT fixture after structured pruning,
computed in PyTorch: the units lmopt-prune's magnitude criterion keeps
(docs/compression.md) are chosen here with numpy from the PyTorch weights,
and the model is cut by slicing its nn.Linear layers (a head's rows of
the query, key and value projections and columns of the attention's
output projection; a neuron's row of the FFN's first layer and column of
its second).

    python3 scripts/make_prune_fixtures.py [--out test/models/onnx]

Writes bert.pruned.ref.npz (ffn=0.5, heads=0.5) and bert.keep_layer1.ref.npz
(keep-layers=1: the encoder without its first layer) for
test/e2e/prune.test; and bert.calib.npz (calibration samples) with
bert.pruned_wanda.ref.npz and bert.pruned_activation.ref.npz, the same
cut with the units chosen by the wanda and activation criteria, whose
statistics are measured here with forward hooks on the PyTorch model
over the calibration samples (the tokens attention_mask keeps); and
bert.hidden_states.ref.npz, the outputs with Hugging Face's
output_hidden_states (hidden_state.0 to .2) for lmopt-compile
--expose=hidden-states; and for the gradient criterion (Michel et al.'s
head-mask gradients, and the same mask on FFN neurons, computed here with
PyTorch autograd in float64) bert.calib_labels.npz and bert.calib_target.npz
(the calibration samples with token labels or a pooler target) and
bert.pruned_gradient.ref.npz, bert.pruned_gradient_mse.ref.npz; and
bert.sparse24.ref.npz, every linear's weight 2:4-sparse by magnitude
(sparsity=2:4).
The unpruned model is first checked against bert.ref.npz, so the weights
are the fixture's own.
"""

import argparse
import copy
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures  # noqa: E402


def kept(scores: np.ndarray, ratio: float) -> list:
    """The units that stay: floor(ratio * n) removed, the highest scores
    kept (ties to the lower index), in ascending order."""
    n = len(scores)
    keep = max(n - int(np.floor(n * ratio + 1e-9)), 1)
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    return sorted(order[:keep])


def prune_ffn(layer, ratio: float) -> None:
    up, down = layer.intermediate.dense, layer.output.dense
    w1 = up.weight.detach().double().numpy()      # [F, K]
    w2 = down.weight.detach().double().numpy()    # [N, F]
    scores = (w1 ** 2).sum(axis=1) + (w2 ** 2).sum(axis=0)
    index = torch.tensor(kept(scores, ratio))
    layer.intermediate.dense = sliced(up, rows=index)
    layer.output.dense = sliced(down, cols=index)


def sliced(linear, rows=None, cols=None) -> torch.nn.Linear:
    """`linear` keeping output features `rows` and input features `cols`."""
    weight, bias = linear.weight.data, linear.bias.data
    if rows is not None:
        weight, bias = weight[rows], bias[rows]
    if cols is not None:
        weight = weight[:, cols]
    new = torch.nn.Linear(weight.shape[1], weight.shape[0])
    new.weight.data, new.bias.data = weight.clone(), bias.clone()
    return new


def prune_heads(layer, keep: list, num_heads: int) -> None:
    attn = layer.attention
    head_dim = attn.self.query.out_features // num_heads
    index = torch.tensor([h * head_dim + d for h in keep
                          for d in range(head_dim)])
    for name in ("query", "key", "value"):
        setattr(attn.self, name, sliced(getattr(attn.self, name), rows=index))
    attn.output.dense = sliced(attn.output.dense, cols=index)
    attn.self.num_attention_heads = len(keep)
    attn.self.all_head_size = len(index)


def head_scores(layer, num_heads: int) -> np.ndarray:
    attn = layer.attention
    head_dim = attn.self.query.out_features // num_heads
    scores = np.zeros(num_heads)
    for h in range(num_heads):
        rows = slice(h * head_dim, (h + 1) * head_dim)
        for proj in (attn.self.query, attn.self.key, attn.self.value):
            scores[h] += (proj.weight.detach().double().numpy()[rows] ** 2).sum()
        scores[h] += (attn.output.dense.weight.detach().double().numpy()[:, rows] ** 2).sum()
    return scores


def calibration_samples(inputs: dict, count: int, vocab: int) -> dict:
    """`count` random samples shaped like `inputs`, one leading sample dim;
    later rows pad their tails."""
    rng = np.random.default_rng(7)
    shape = inputs["input_ids"].shape
    ids = rng.integers(0, vocab, size=(count,) + shape, dtype=np.int64)
    mask = np.ones_like(ids)
    for s in range(count):
        for b in range(shape[0]):
            mask[s, b, shape[1] - (s + b) % 4:] = 0
    types = (rng.random(ids.shape) < 0.3).astype(np.int64)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def measure(wrapper, samples: dict, names: list) -> dict:
    """Per linear input (keyed by module), over the tokens the attention
    mask keeps: sum of x^2 and of |x| per feature, the token count and, for
    the attention's output projection, the sum of each token's per-head L2
    norm."""
    bert = wrapper.model
    heads = bert.config.num_attention_heads
    stats = {}

    keep = {}

    def hook(module, args, head_count):
        x = args[0].detach().double().reshape(-1, args[0].shape[-1])
        x = x[keep["rows"]]
        entry = stats.setdefault(module, {"sq": 0, "abs": 0, "tokens": 0,
                                          "heads": 0})
        entry["sq"] = entry["sq"] + (x ** 2).sum(0).numpy()
        entry["abs"] = entry["abs"] + x.abs().sum(0).numpy()
        entry["tokens"] += x.shape[0]
        if head_count:
            norms = x.reshape(x.shape[0], head_count, -1).norm(dim=2)
            entry["heads"] = entry["heads"] + norms.sum(0).numpy()

    handles = []
    for layer in bert.encoder.layer:
        for module, count in ((layer.attention.self.query, 0),
                              (layer.attention.output.dense, heads),
                              (layer.intermediate.dense, 0),
                              (layer.output.dense, 0)):
            handles.append(module.register_forward_pre_hook(
                lambda m, a, c=count: hook(m, a, c)))
    with torch.no_grad():
        for s in range(samples["input_ids"].shape[0]):
            keep["rows"] = torch.from_numpy(
                samples["attention_mask"][s].reshape(-1) != 0)
            wrapper(*(torch.from_numpy(samples[n][s]) for n in names))
    for handle in handles:
        handle.remove()
    return stats


def abs_weight(linear) -> np.ndarray:
    """|W| of `linear` as [out, in], float64."""
    return np.abs(linear.weight.detach().double().numpy())


def criterion_scores(layer, stats: dict, criterion: str, num_heads: int):
    """(head scores, neuron scores) of `layer` by `criterion`:
    wanda: sum over the unit's weights of |W| * ||x|| of the input feature
    they multiply; activation: mean |a_j| of neuron j's activation, mean
    over tokens of head h's output L2 norm."""
    attn, up, down = (layer.attention, layer.intermediate.dense,
                      layer.output.dense)
    qkv_in, out_in = stats[attn.self.query], stats[attn.output.dense]
    up_in, down_in = stats[up], stats[down]
    head_dim = attn.self.query.out_features // num_heads
    if criterion == "activation":
        return (out_in["heads"] / out_in["tokens"],
                down_in["abs"] / down_in["tokens"])
    l2 = {k: np.sqrt(v["sq"]) for k, v in
          (("qkv", qkv_in), ("out", out_in), ("up", up_in), ("down", down_in))}
    heads = np.zeros(num_heads)
    for h in range(num_heads):
        rows = slice(h * head_dim, (h + 1) * head_dim)
        for proj in (attn.self.query, attn.self.key, attn.self.value):
            heads[h] += (abs_weight(proj)[rows] * l2["qkv"][None, :]).sum()
        heads[h] += (abs_weight(attn.output.dense)[:, rows]
                     * l2["out"][None, rows]).sum()
    neurons = ((abs_weight(up) * l2["up"][None, :]).sum(axis=1)
               + (abs_weight(down) * l2["down"][None, :]).sum(axis=0))
    return heads, neurons


def gradient_scores(wrapper, samples: dict, names: list, loss_of) -> tuple:
    """Michel et al.'s importance, in float64: per layer, the sum over the
    samples of |dL/dm| for a mask of ones on each head's slice of the
    attention's output and on each FFN neuron's activation, with
    L = loss_of(outputs, sample index). Returns (head scores, neuron
    scores), one array per layer."""
    model = copy.deepcopy(wrapper).double()
    bert = model.model
    num_heads = bert.config.num_attention_heads
    head_masks, neuron_masks, handles = [], [], []
    for layer in bert.encoder.layer:
        width = layer.attention.self.query.out_features
        hm = torch.ones(num_heads, dtype=torch.float64, requires_grad=True)
        nm = torch.ones(layer.intermediate.dense.out_features,
                        dtype=torch.float64, requires_grad=True)
        head_masks.append(hm)
        neuron_masks.append(nm)

        def mask_heads(module, args, out, hm=hm, width=width):
            context = out[0] if isinstance(out, tuple) else out
            assert context.shape[-1] == width, context.shape
            masked = context * hm.repeat_interleave(width // num_heads)
            return (masked,) + tuple(out[1:]) if isinstance(out, tuple) \
                else masked

        handles.append(layer.attention.self.register_forward_hook(mask_heads))
        handles.append(layer.intermediate.register_forward_hook(
            lambda module, args, out, nm=nm: out * nm))
    heads = [np.zeros(num_heads) for _ in head_masks]
    neurons = [np.zeros(len(nm)) for nm in neuron_masks]
    for s in range(samples["input_ids"].shape[0]):
        for mask in head_masks + neuron_masks:
            mask.grad = None
        outputs = model(*(torch.from_numpy(samples[n][s]) for n in names))
        loss_of(outputs, s).backward()
        for i, (hm, nm) in enumerate(zip(head_masks, neuron_masks)):
            heads[i] += hm.grad.abs().numpy()
            neurons[i] += nm.grad.abs().numpy()
    for handle in handles:
        handle.remove()
    return heads, neurons


def sparsify(linear, n: int, m: int) -> None:
    """lmopt-prune's sparsity=n:m by magnitude: in every group of m
    consecutive input features of each output row, the n weights of largest
    |w| stay (ties to the lower index), the others become 0."""
    w = linear.weight.data
    groups = w.reshape(w.shape[0], -1, m)
    order = np.argsort(-np.abs(groups.numpy()), axis=-1, kind="stable")
    mask = np.zeros(groups.shape, dtype=bool)
    np.put_along_axis(mask, order[..., :n], True, axis=-1)
    linear.weight.data = (groups * torch.from_numpy(mask)).reshape(w.shape)


def cut_and_run(bert, run, heads: list, neurons: list) -> dict:
    """The outputs of `run` with each layer i keeping heads[i] and the FFN
    neurons neurons[i] (the model's layers restored after)."""
    layers = bert.encoder.layer
    bert.encoder.layer = copy.deepcopy(layers)
    for layer, keep, index in zip(bert.encoder.layer, heads, neurons):
        prune_heads(layer, keep, bert.config.num_attention_heads)
        index = torch.tensor(index)
        layer.intermediate.dense = sliced(layer.intermediate.dense, rows=index)
        layer.output.dense = sliced(layer.output.dense, cols=index)
    pruned = run()
    bert.encoder.layer = layers
    return pruned


def check_margins(name: str, head_s: list, neuron_s: list, args) -> None:
    """Stops when a layer's scores are too close for float rounding not to
    choose."""
    for i, (heads, neurons) in enumerate(zip(head_s, neuron_s)):
        for what, scores, ratio in (("heads", heads, args.heads),
                                    ("ffn", neurons, args.ffn)):
            if margin(scores, ratio) < 1e-4:
                sys.exit(f"{name}: layer {i}'s {what} scores are too close "
                         "to rank reliably")


def margin(scores: np.ndarray, ratio: float) -> float:
    """The relative gap between the last kept and the first removed score:
    a tiny one would let float rounding choose."""
    n = len(scores)
    keep = max(n - int(np.floor(n * ratio + 1e-9)), 1)
    ordered = np.sort(scores)[::-1]
    return (ordered[keep - 1] - ordered[keep]) / max(abs(ordered[keep - 1]),
                                                     1e-30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=make_fixtures.DEFAULT_OUT)
    parser.add_argument("--ffn", type=float, default=0.5)
    parser.add_argument("--heads", type=float, default=0.5)
    args = parser.parse_args()

    wrapper = make_fixtures.build_bert()
    inputs = dict(np.load(os.path.join(args.out, "bert.inputs.npz")))
    names = ["input_ids", "attention_mask", "token_type_ids"]
    outputs = ["last_hidden_state", "pooler_output"]
    ref = dict(np.load(os.path.join(args.out, "bert.ref.npz")))

    def run() -> dict:
        with torch.no_grad():
            got = wrapper(*(torch.from_numpy(inputs[n]) for n in names))
        return {n: t.numpy() for n, t in zip(outputs, got)}

    before = run()
    for name in outputs:
        diff = np.abs(before[name] - ref[name]).max()
        if diff > 1e-4:
            sys.exit(f"the rebuilt BERT differs from bert.ref.npz ({name}: "
                     f"{diff}); regenerate the fixtures first")

    bert = wrapper.model
    with torch.no_grad():
        full = bert(**{n: torch.from_numpy(inputs[n]) for n in names},
                    output_hidden_states=True)
    hidden = {f"hidden_state.{i}": h.numpy()
              for i, h in enumerate(full.hidden_states)}
    # Two ONNX nodes by name: the embeddings' LayerNorm (hidden state 0)
    # and the pooler's Gemm (before its tanh).
    with torch.no_grad():
        gemm = bert.pooler.dense(full.last_hidden_state[:, 0]).numpy()
    hidden["/model/embeddings/LayerNorm/LayerNormalization"] = \
        hidden["hidden_state.0"]
    hidden["/model/pooler/dense/Gemm"] = gemm
    path = os.path.join(args.out, "bert.hidden_states.ref.npz")
    np.savez(path, **before, **hidden)
    print(f"wrote {path}: {len(hidden)} hidden states")
    # Layer reduction first, on its own: the encoder keeps layer 1 only.
    layers = bert.encoder.layer
    bert.encoder.layer = torch.nn.ModuleList([layers[1]])
    reduced = run()
    bert.encoder.layer = layers
    path = os.path.join(args.out, "bert.keep_layer1.ref.npz")
    np.savez(path, **reduced)
    print(f"wrote {path}")

    num_heads = bert.config.num_attention_heads
    # The calibration criteria, on the unpruned model's statistics.
    samples = calibration_samples(inputs, 4, bert.config.vocab_size)
    path = os.path.join(args.out, "bert.calib.npz")
    np.savez(path, **samples)
    stats = measure(wrapper, samples, names)

    def write_cut(name: str, head_s: list, neuron_s: list) -> None:
        """bert.pruned_NAME.ref.npz: the model cut by per-layer scores."""
        check_margins(name, head_s, neuron_s, args)
        chosen = [kept(h, args.heads) for h in head_s]
        pruned = cut_and_run(bert, run, chosen,
                             [kept(n, args.ffn) for n in neuron_s])
        path = os.path.join(args.out, f"bert.pruned_{name}.ref.npz")
        np.savez(path, **pruned)
        print(f"wrote {path}: heads kept {dict(enumerate(chosen))}, head "
              f"scores {[np.round(h, 6).tolist() for h in head_s]}")

    for criterion in ("wanda", "activation"):
        scores = [criterion_scores(layer, stats, criterion, num_heads)
                  for layer in bert.encoder.layer]
        write_cut(criterion, [s[0] for s in scores], [s[1] for s in scores])

    # The gradient criterion, with two losses: the default (cross-entropy
    # of the first output, last_hidden_state's 64 features read as classes,
    # against token labels, -100 on padding) and --loss=mse:pooler_output,
    # target. Each writes its samples (the calibration inputs and the
    # labels) and the model cut by the units it ranks first.
    rng = np.random.default_rng(11)
    hidden_size = bert.config.hidden_size
    labels = rng.integers(0, hidden_size, size=samples["input_ids"].shape)
    labels[samples["attention_mask"] == 0] = -100
    target = rng.standard_normal(
        samples["input_ids"].shape[:2] + (hidden_size,)).astype(np.float32)
    losses = {
        "gradient": ("labels", labels, lambda out, s: torch.nn.functional.
                     cross_entropy(out[0].reshape(-1, hidden_size),
                                   torch.from_numpy(labels[s]).reshape(-1),
                                   ignore_index=-100)),
        "gradient_mse": ("target", target,
                         lambda out, s: torch.nn.functional.mse_loss(
                             out[1], torch.from_numpy(target[s]).double())),
    }
    for name, (key, values, loss_of) in losses.items():
        path = os.path.join(args.out, f"bert.calib_{key}.npz")
        np.savez(path, **samples, **{key: values})
        write_cut(name, *gradient_scores(wrapper, samples, names, loss_of))

    # 2:4 sparsity of every linear (the encoder's and the pooler's).
    saved = copy.deepcopy(bert.state_dict())
    for module in bert.modules():
        if isinstance(module, torch.nn.Linear):
            sparsify(module, 2, 4)
    sparse = run()
    bert.load_state_dict(saved)
    path = os.path.join(args.out, "bert.sparse24.ref.npz")
    np.savez(path, **sparse)
    change = max(np.abs(sparse[n] - before[n]).max() for n in outputs)
    print(f"wrote {path}: max change from the unpruned outputs {change:.3g}")

    heads_to_prune = {}
    for i, layer in enumerate(bert.encoder.layer):
        keep = kept(head_scores(layer, num_heads), args.heads)
        heads_to_prune[i] = [h for h in range(num_heads) if h not in keep]
        prune_heads(layer, keep, num_heads)
        prune_ffn(layer, args.ffn)
    after = run()
    path = os.path.join(args.out, "bert.pruned.ref.npz")
    np.savez(path, **after)
    change = max(np.abs(after[n] - before[n]).max() for n in outputs)
    print(f"wrote {path}: heads removed {heads_to_prune}, FFN "
          f"{bert.config.intermediate_size} -> "
          f"{bert.encoder.layer[0].intermediate.dense.out_features}; "
          f"max change from the unpruned outputs {change:.3g}")


if __name__ == "__main__":
    main()
