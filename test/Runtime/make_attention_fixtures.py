#!/usr/bin/env python3
"""Writes the expected outputs of the runtime's AttentionStep tests.

Each case is one `lmopt.attention` computed with NumPy in float64, following
the reference evaluator (lib/Reference/AttentionOps.cpp): hidden keys (a
false bool mask, causal masking aligned to the end of the keys) score
-FLT_MAX, so a row with every key hidden averages the values uniformly, and
a row whose scores are all -inf is NaN; with zero_masked_rows a row whose
every key is hidden or masked by -inf is zero. Query, key and value are not
stored: they come from the counter hash of fixture_util.py, which
AttentionStepTest.cpp evaluates bit for bit the same way. Masks are small and
stored as they are. Each fixture holds the expected values at sampled
positions (every output row, several columns; all positions for small
outputs) and every output row's sum. Grouped-query cases (`kv_heads` G < H)
have G key/value heads, each repeated for H / G query heads. Score-bias cases
add an f32 bias [1|B, 1|H, 1|Sq, Sk] (stored) to the scaled scores before
the mask; a -inf bias hides its key as a -inf mask does.

    python3 test/Runtime/make_attention_fixtures.py [--out test/Runtime/Inputs]
"""

import math

import numpy as np

from fixture_util import hash_values, sample_positions, write_fixtures

# Mask kinds, as AttentionMask numbers them.
NONE, ADDITIVE, BOOL = 0, 1, 2
# Hash seeds of query, key and value, and their scales: uniform in
# [-1.5, 1.5) for query and key, so that scores at D = 64 spread over a few
# units, and [-1, 1) for values.
SEEDS = [11, 12, 13]
SCALES = [3.0, 3.0, 2.0]
FLT_MAX = float(np.finfo(np.float32).max)


def case(name, b, h, sq, sk, d, *, scale=None, causal=False, split=False,
         zero_rows=False, mask_kind=NONE, mask=None, kv_heads=None,
         bias=None):
    return dict(name=name, dims=(b, h, sq, sk, d), scale=scale, causal=causal,
                split=split, zero_rows=zero_rows, mask_kind=mask_kind,
                mask=mask, kv_heads=kv_heads, bias=bias)


def score_bias(seed, shape, neginf_rows=(), neginf_keys=()):
    """A bias of `shape` in [-2, 2); rows (b, h, i) and keys (b, h, i, j)
    listed set to -inf."""
    bias = hash_values(seed, int(np.prod(shape)), 4.0).astype(np.float32)
    bias = bias.reshape(shape)
    for row in neginf_rows:
        bias[row] = -np.inf
    for key in neginf_keys:
        bias[key] = -np.inf
    return bias


def padding_mask(lengths, sk, dtype, hidden):
    """[B, 1, 1, Sk]: keys at or past each batch's length hidden."""
    keys = np.arange(sk)[None, :] < np.array(lengths)[:, None]
    out = np.where(keys, 0, hidden) if dtype != np.uint8 else keys
    return out.astype(dtype).reshape(len(lengths), 1, 1, sk)


def masked_rows_bool():
    """[1, 2, 6, 5]: rows 1 and 4 of head 0 and row 2 of head 1 all false."""
    m = (hash_values(21, 2 * 6 * 5, 1.0) > -0.25).astype(np.uint8)
    m = m.reshape(1, 2, 6, 5)
    m[0, 0, 1, :] = 0
    m[0, 0, 4, :] = 0
    m[0, 1, 2, :] = 0
    m[0, 1, 3, :] = 1
    return m


def masked_rows_additive():
    """[1, 1, 4, 6]: row 1 all -inf, row 3 -inf but for one key."""
    m = hash_values(22, 4 * 6, 4.0).astype(np.float32).reshape(1, 1, 4, 6)
    m[0, 0, 1, :] = -np.inf
    m[0, 0, 3, :] = -np.inf
    m[0, 0, 3, 2] = 0.5
    m[0, 0, 0, 4] = -np.inf
    return m


def cases():
    rng_mask = hash_values(31, 2 * 6 * 6, 1.0)
    bool_bqk = (rng_mask > -0.2).astype(np.uint8).reshape(2, 1, 6, 6)
    additive_full = hash_values(32, 2 * 3 * 4 * 11, 6.0).reshape(2, 3, 4, 11)
    additive_2d = hash_values(33, 5 * 7, 3.0).reshape(5, 7)
    rows_bool = np.array([1, 0, 1, 1, 0], dtype=np.uint8).reshape(1, 1, 5, 1)
    return [
        case("plain", 2, 3, 5, 7, 8),
        case("scale", 1, 2, 4, 6, 4, scale=0.3),
        case("additive_b11k", 2, 2, 5, 9, 8, mask_kind=ADDITIVE,
             mask=padding_mask([9, 4], 9, np.float32, -10000.0)),
        case("additive_2d", 2, 2, 5, 7, 8, mask_kind=ADDITIVE,
             mask=additive_2d),
        case("bool_bqk", 2, 3, 6, 6, 8, mask_kind=BOOL, mask=bool_bqk),
        case("bool_rows", 1, 2, 5, 6, 4, mask_kind=BOOL, mask=rows_bool),
        case("causal_square", 1, 2, 8, 8, 16, causal=True),
        case("causal_shorter", 2, 2, 3, 10, 8, causal=True, mask_kind=BOOL,
             mask=padding_mask([10, 7], 10, np.uint8, 0)),
        case("kv_split", 2, 3, 4, 11, 8, split=True, mask_kind=ADDITIVE,
             mask=additive_full),
        case("kv_split_causal", 1, 2, 1, 9, 8, split=True, causal=True),
        case("masked_rows_zero", 1, 2, 6, 5, 4, zero_rows=True,
             mask_kind=BOOL, mask=masked_rows_bool()),
        case("masked_rows_eval", 1, 2, 6, 5, 4, mask_kind=BOOL,
             mask=masked_rows_bool()),
        # Sq > Sk: causal masking hides every key of the first rows.
        case("causal_longer_zero", 1, 2, 6, 4, 4, causal=True, zero_rows=True),
        case("causal_longer_eval", 1, 2, 6, 4, 4, causal=True),
        case("neginf_rows_zero", 1, 1, 4, 6, 4, zero_rows=True,
             mask_kind=ADDITIVE, mask=masked_rows_additive()),
        case("neginf_rows_eval", 1, 1, 4, 6, 4, mask_kind=ADDITIVE,
             mask=masked_rows_additive()),
        # BERT-base self-attention with a padding mask, and GPT-2's causal
        # one.
        case("bert_b1", 1, 12, 128, 128, 64, mask_kind=ADDITIVE,
             mask=padding_mask([100], 128, np.float32, -10000.0)),
        case("bert_b8", 8, 12, 128, 128, 64, mask_kind=ADDITIVE,
             mask=padding_mask([128, 1, 17, 64, 100, 127, 90, 128], 128,
                               np.float32, -10000.0)),
        case("gpt2_b1", 1, 12, 128, 128, 64, causal=True),
        # Shapes whose D and Sk are multiples of 32 (the bf16 tile products'
        # unit) with query blocks that are not: 45 rows (32 + 13) and 20,
        # grouped heads, a head-split cache and a score bias.
        case("tile_edges", 2, 4, 45, 64, 32, causal=True, kv_heads=2,
             zero_rows=True, mask_kind=BOOL,
             mask=padding_mask([64, 50], 64, np.uint8, 0)),
        case("tile_edges_split", 1, 3, 20, 96, 64, split=True,
             mask_kind=ADDITIVE,
             mask=padding_mask([70], 96, np.float32, -10000.0),
             bias=score_bias(42, (1, 3, 1, 96))),
        # Grouped-query attention: Llama's prefill (causal, padding), a
        # decode step on a head-split cache, and one key/value head for all.
        case("gqa_causal", 2, 4, 5, 7, 8, causal=True, kv_heads=2,
             mask_kind=BOOL, mask=padding_mask([7, 5], 7, np.uint8, 0)),
        case("gqa_split_decode", 2, 6, 1, 9, 8, split=True, causal=True,
             kv_heads=2),
        case("gqa_one_kv_head", 1, 3, 4, 6, 4, kv_heads=1, mask_kind=ADDITIVE,
             mask=additive_2d[:4, :6]),
        # Score biases: T5's [1, H, Sq, Sk] unscaled with a boolean padding
        # mask, MPNet's [B, H, Sq, Sk] with an additive one, a bias
        # broadcast over heads and rows under causal masking, and -inf in
        # the bias hiding keys and a whole row.
        case("bias_t5", 2, 4, 6, 6, 8, scale=1.0, mask_kind=BOOL,
             mask=padding_mask([6, 4], 6, np.uint8, 0),
             bias=score_bias(41, (1, 4, 6, 6))),
        case("bias_mpnet", 2, 3, 5, 5, 8, mask_kind=ADDITIVE,
             mask=padding_mask([5, 3], 5, np.float32, -10000.0),
             bias=score_bias(42, (2, 3, 5, 5))),
        case("bias_keys_causal", 2, 2, 4, 7, 4, causal=True,
             bias=score_bias(43, (2, 1, 1, 7), neginf_keys=[(0, 0, 0, 1)])),
        case("bias_neginf_rows_zero", 1, 2, 4, 6, 4, zero_rows=True,
             bias=score_bias(44, (1, 2, 4, 6), neginf_rows=[(0, 1, 2)])),
    ]


def attention(c, q, k, v):
    b, h, sq, sk, d = c["dims"]
    g = c["kv_heads"] or h
    scale = np.float64(np.float32(c["scale"] if c["scale"] is not None
                                  else 1.0 / math.sqrt(d)))
    qh = q.reshape(b, sq, h, d).transpose(0, 2, 1, 3)
    if c["split"]:
        kh, vh = k.reshape(b, g, sk, d), v.reshape(b, g, sk, d)
    else:
        kh = k.reshape(b, sk, g, d).transpose(0, 2, 1, 3)
        vh = v.reshape(b, sk, g, d).transpose(0, 2, 1, 3)
    # Query head i reads key/value head i // (h // g).
    kh, vh = np.repeat(kh, h // g, axis=1), np.repeat(vh, h // g, axis=1)
    s = (qh @ kh.transpose(0, 1, 3, 2)) * scale
    keep = np.ones((b, h, sq, sk), dtype=bool)
    visible_bias = np.ones_like(keep)
    if c["bias"] is not None:
        bias = np.broadcast_to(c["bias"].astype(np.float64), s.shape)
        s = s + bias
        visible_bias = bias != -np.inf
    if c["causal"]:
        i = np.arange(sq)[:, None]
        j = np.arange(sk)[None, :]
        keep &= j <= i + (sk - sq)
    visible = keep & visible_bias
    if c["mask_kind"] == ADDITIVE:
        m = np.broadcast_to(c["mask"].astype(np.float64), s.shape)
        s = s + m
        visible &= m != -np.inf
    elif c["mask_kind"] == BOOL:
        m = np.broadcast_to(c["mask"] != 0, s.shape)
        keep &= m
        visible &= m
    s = np.where(keep, s, -FLT_MAX)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        out = (p @ vh) / p.sum(axis=-1, keepdims=True)
    if c["zero_rows"]:
        out[~visible.any(axis=-1)] = 0.0
    return out.transpose(0, 2, 1, 3).reshape(b * sq, h * d)


def make_case(c):
    b, h, sq, sk, d = c["dims"]
    g = c["kv_heads"] or h
    q = hash_values(SEEDS[0], b * sq * h * d, SCALES[0]).astype(np.float64)
    k = hash_values(SEEDS[1], b * sk * g * d, SCALES[1]).astype(np.float64)
    v = hash_values(SEEDS[2], b * sk * g * d, SCALES[2]).astype(np.float64)
    out = attention(c, q, k, v)
    rng = np.random.default_rng(sum(c["dims"]) * 7919 + len(c["name"]))
    idx = sample_positions(b * sq, h * d, rng)
    scale = c["scale"] if c["scale"] is not None else 1.0 / math.sqrt(d)
    fixture = {
        "dims": np.array(c["dims"], dtype=np.int64),
        "flags": np.array([c["causal"], c["split"], c["zero_rows"],
                           c["mask_kind"]], dtype=np.int64),
        "scale": np.array([np.float32(scale)], dtype=np.float32),
        "seeds": np.array(SEEDS, dtype=np.int64),
        "scales": np.array(SCALES, dtype=np.float64),
        "index": idx,
        "want": out.reshape(-1)[idx],
        "rowsum": out.sum(axis=1),
    }
    if c["kv_heads"]:
        fixture["kv_heads"] = np.array([g], dtype=np.int64)
    if c["mask"] is not None:
        dtype = np.float32 if c["mask_kind"] == ADDITIVE else np.uint8
        fixture["mask"] = np.ascontiguousarray(c["mask"], dtype=dtype)
    if c["bias"] is not None:
        fixture["bias"] = np.ascontiguousarray(c["bias"], dtype=np.float32)
    return fixture


def main():
    write_fixtures(__doc__.split("\n")[0],
                   ((f"attention_{c['name']}.npz", lambda c=c: make_case(c))
                    for c in cases()))


if __name__ == "__main__":
    main()
