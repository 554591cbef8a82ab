#!/usr/bin/env python3
"""Writes the fixtures of the attention backward (lmopt.attention_grad): the
gradients of multi-head attention with respect to query, key and value,
from PyTorch's autograd in float64 on float32 inputs.

The forward follows lmopt.attention's rules (lib/Reference/AttentionOps.cpp):
scores Q K^T * scale, an additive mask added, keys hidden by a false bool
mask or by causal masking (aligned to the end of the keys) scoring -FLT_MAX,
softmax over the keys. With zero_masked_rows, a row whose every key is hidden
(or masked by -inf) yields zeros: here its probabilities are multiplied by 0,
so autograd gives it zero gradient, as lmopt's backward must.

Outputs:
  test/Runtime/Inputs/attention_grad_<case>.npz, read by
    AttentionGradStepTest.cpp: dims [B, H, Sq, Sk, D] (i64), scale (f32),
    flags [causal, zero_masked_rows, mask kind 0 none / 1 additive / 2 bool]
    (i64), query, key, value, output_grad (f32), mask (f32 or bool, when
    there is one), and the expected query_grad, key_grad, value_grad
    (float64 results rounded to f32).
  test/Target/CPU/Inputs/attention_grad.npz and attention_grad.expected.npz,
    read by test/Target/CPU/attention-grad.mlir: its inputs q, k, v, dy, mask
    and expected outputs dq, dk, dv.

    python3 scripts/make_attention_grad_fixtures.py
"""

import argparse
import math
import os

import numpy as np
import torch

NONE, ADDITIVE, BOOL = 0, 1, 2
FLT_MAX = float(np.finfo(np.float32).max)


def attention(q, k, v, heads, scale, causal, zero_rows, mask_kind, mask):
    """lmopt.attention in torch (float64), packed heads [B, S, H*D]."""
    b, sq, width = q.shape
    sk = k.shape[1]
    d = width // heads

    def split(x):
        return x.view(b, x.shape[1], heads, d).transpose(1, 2)

    s = split(q) @ split(k).transpose(-1, -2) * scale
    keep = torch.ones(b, heads, sq, sk, dtype=torch.bool)
    neg_inf = torch.zeros(b, heads, sq, sk, dtype=torch.bool)
    if causal:
        i = torch.arange(sq)[:, None]
        j = torch.arange(sk)[None, :]
        keep = keep & (j <= i + (sk - sq))
    if mask_kind == BOOL:
        keep = keep & torch.from_numpy(mask)
    elif mask_kind == ADDITIVE:
        m = torch.from_numpy(mask).double()
        s = s + m
        neg_inf = neg_inf | torch.isneginf(m)
    s = torch.where(keep, s, torch.tensor(-FLT_MAX, dtype=torch.float64))
    if zero_rows:
        hidden = (~keep | neg_inf).all(dim=-1, keepdim=True)
        s = torch.where(hidden, torch.zeros_like(s), s)
        p = torch.softmax(s, dim=-1) * (~hidden).double()
    else:
        p = torch.softmax(s, dim=-1)
    o = p @ split(v)
    return o.transpose(1, 2).reshape(b, sq, width)


def gradients(case, gen):
    b, h, sq, sk, d = case["dims"]
    width = h * d

    def rand(*shape):
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) *
                case.get("spread", 1.0)).float().numpy()

    q, k, v = rand(b, sq, width), rand(b, sk, width), rand(b, sk, width)
    dy = rand(b, sq, width)
    scale = case.get("scale") or 1.0 / math.sqrt(d)
    leaves = [torch.from_numpy(x).double().requires_grad_() for x in (q, k, v)]
    out = attention(*leaves, h, scale, case.get("causal", False),
                    case.get("zero_rows", False), case.get("mask_kind", NONE),
                    case.get("mask"))
    (out * torch.from_numpy(dy).double()).sum().backward()
    dq, dk, dv = (x.grad.numpy() for x in leaves)
    assert all(np.isfinite(g).all() for g in (dq, dk, dv)), case["name"]
    return dict(q=q, k=k, v=v, dy=dy, scale=scale, dq=dq, dk=dk, dv=dv)


def padding(lengths, sk, kind):
    """[B, 1, 1, Sk]: keys at or past each batch's length hidden."""
    keys = np.arange(sk)[None, :] < np.array(lengths)[:, None]
    if kind == BOOL:
        return keys.reshape(len(lengths), 1, 1, sk)
    return np.where(keys, 0.0, -np.inf).astype(np.float32).reshape(
        len(lengths), 1, 1, sk)


def rows_mask(rng, shape, kind, hidden_rows):
    """A mask of `shape` [.., Sq, Sk] with the rows listed fully hidden."""
    if kind == BOOL:
        m = rng.random(shape) > 0.3
        for row in hidden_rows:
            m[row] = False
        return m
    m = (rng.random(shape) * 2 - 1).astype(np.float32)
    m[rng.random(shape) < 0.25] = -np.inf
    for row in hidden_rows:
        m[row] = -np.inf
    return m


def cases(rng):
    return [
        dict(name="plain", dims=(2, 3, 7, 7, 8)),
        dict(name="scale_keys", dims=(1, 2, 5, 9, 16), scale=0.3),
        dict(name="bert_padding", dims=(2, 4, 16, 16, 16), mask_kind=BOOL,
             mask=padding([16, 11], 16, BOOL)),
        dict(name="additive_padding", dims=(2, 2, 6, 6, 8),
             mask_kind=ADDITIVE, mask=padding([6, 4], 6, ADDITIVE)),
        dict(name="causal_shorter", dims=(1, 2, 4, 9, 8), causal=True),
        dict(name="bool_rows_zero", dims=(1, 2, 6, 5, 4), zero_rows=True,
             mask_kind=BOOL,
             mask=rows_mask(rng, (1, 2, 6, 5), BOOL,
                            [(0, 0, 1), (0, 0, 4), (0, 1, 2)])),
        dict(name="additive_rows_zero", dims=(2, 1, 4, 6, 8), zero_rows=True,
             mask_kind=ADDITIVE,
             mask=rows_mask(rng, (1, 1, 4, 6), ADDITIVE, [(0, 0, 1)])),
        dict(name="causal_zero", dims=(1, 2, 6, 4, 8), causal=True,
             zero_rows=True),
        # 700 keys: rows are blocked by 46, so 100 query rows are 3 blocks
        # whose key and value gradients add up.
        dict(name="row_blocks", dims=(1, 1, 100, 700, 8), spread=0.5),
    ]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runtime-out",
                        default=os.path.join(root, "test/Runtime/Inputs"))
    parser.add_argument("--target-out",
                        default=os.path.join(root, "test/Target/CPU/Inputs"))
    args = parser.parse_args()
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    rng = np.random.default_rng(99)
    for case in cases(rng):
        g = gradients(case, gen)
        arrays = dict(
            dims=np.array(case["dims"], dtype=np.int64),
            scale=np.float32(g["scale"]),
            flags=np.array([case.get("causal", False),
                            case.get("zero_rows", False),
                            case.get("mask_kind", NONE)], dtype=np.int64),
            query=g["q"], key=g["k"], value=g["v"], output_grad=g["dy"],
            query_grad=g["dq"].astype(np.float32),
            key_grad=g["dk"].astype(np.float32),
            value_grad=g["dv"].astype(np.float32))
        if case.get("mask") is not None:
            arrays["mask"] = case["mask"]
        path = os.path.join(args.runtime_out,
                            f"attention_grad_{case['name']}.npz")
        np.savez(path, **arrays)
        print(f"wrote {path}")

    # The lit test: a bool mask [B, 1, Sq, Sk] with one fully hidden row,
    # causal, zero_masked_rows, scale 0.25 (B 2, H 2, S 5, D 4).
    mask = rows_mask(rng, (2, 1, 5, 5), BOOL, [(1, 0, 3)])
    case = dict(name="lit", dims=(2, 2, 5, 5, 4), scale=0.25, causal=True,
                zero_rows=True, mask_kind=BOOL, mask=mask)
    g = gradients(case, gen)
    inputs = os.path.join(args.target_out, "attention_grad.npz")
    expected = os.path.join(args.target_out, "attention_grad.expected.npz")
    np.savez(inputs, q=g["q"], k=g["k"], v=g["v"], dy=g["dy"], mask=mask)
    np.savez(expected, dq=g["dq"].astype(np.float32),
             dk=g["dk"].astype(np.float32), dv=g["dv"].astype(np.float32))
    print(f"wrote {inputs} and {expected}")


if __name__ == "__main__":
    main()
