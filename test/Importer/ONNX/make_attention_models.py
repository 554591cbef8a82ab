#!/usr/bin/env python3
"""Writes the small models of attention-opset23.test: ONNX Attention,
RMSNormalization and RotaryEmbedding (opset 23+) in the forms lmopt imports,
and one model per attribute value or input it refuses.

Run from anywhere: python3 make_attention_models.py [output-dir]
(default: the Inputs/ folder next to this script). Every file is tiny and
committed.
"""

import os
import sys

from onnx import TensorProto, helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "Inputs")
os.makedirs(OUT, exist_ok=True)

F = TensorProto.FLOAT
F16 = TensorProto.FLOAT16
I64 = TensorProto.INT64
BOOL = TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, op, inputs, outputs, opset=23, **attrs):
    node = helper.make_node(op, [i.name if i else "" for i in inputs],
                            [o.name if o else "" for o in outputs],
                            name=name, **attrs)
    graph = helper.make_graph([node], "g", [i for i in inputs if i],
                              [o for o in outputs if o])
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_attention_models")
    m.ir_version = 11
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def qkv4(q_heads=4, kv_heads=2, sq=3, sk=3, d=8, dv=8, elem=F):
    return [vi("Q", elem, [2, q_heads, sq, d]), vi("K", elem, [2, kv_heads, sk, d]),
            vi("V", elem, [2, kv_heads, sk, dv])]


def qkv3(q_width=32, kv_width=16, sq=3, sk=3, batch=2):
    return [vi("Q", F, [batch, sq, q_width]), vi("K", F, [batch, sk, kv_width]),
            vi("V", F, [batch, sk, kv_width])]


Y = vi("Y", F, None)

# --- Accepted ---------------------------------------------------------------
# 4-D grouped-query attention with a cache: the new keys follow 5 past ones,
# so ONNX's causal alignment is lmopt's (aligned to the end of the keys).
save("attn23_gqa_past_causal", "Attention",
     qkv4() + [None, vi("past_key", F, [2, 2, 5, 8]),
               vi("past_value", F, [2, 2, 5, 8])],
     [Y, vi("present_key", F, None), vi("present_value", F, None)],
     is_causal=1)
# 3-D packed heads with a bool mask and a scale; symbolic batch and lengths.
save("attn23_3d_bool_mask", "Attention",
     [vi("Q", F, ["b", "s", 32]), vi("K", F, ["b", "t", 16]),
      vi("V", F, ["b", "t", 16]), vi("attn_mask", BOOL, ["s", "t"])],
     [Y], q_num_heads=4, kv_num_heads=2, scale=0.25)
# Causal over more keys than queries without a cache: ONNX aligns the
# queries to the first keys, so the mask is built; a float mask shorter
# than the keys is padded with -inf.
save("attn23_causal_offset", "Attention",
     qkv4(kv_heads=4, sq=3, sk=5) + [vi("attn_mask", F, [3, 4])], [Y],
     is_causal=1)
# Causal over symbolic lengths: the mask comes from run-time positions.
save("attn23_causal_dynamic", "Attention",
     [vi("Q", F, [2, 4, "s", 8]), vi("K", F, [2, 2, "t", 8]),
      vi("V", F, [2, 2, "t", 8])], [Y], is_causal=1)
# Opset 24: nonpad_kv_seqlen with is_causal.
save("attn24_nonpad_causal", "Attention",
     qkv4(sq=2, sk=6) + [None, None, None, vi("nonpad_kv_seqlen", I64, [2])],
     [Y], opset=24, is_causal=1)
save("rms23", "RMSNormalization", [vi("X", F, [2, 3, 8]), vi("W", F, [3, 8])],
     [Y], axis=-2, epsilon=1e-3)
# Partial rotary with positions on [B, H, S, D].
save("rotary23_positions", "RotaryEmbedding",
     [vi("input", F, [2, 4, 3, 8]), vi("cos_cache", F, [16, 2]),
      vi("sin_cache", F, [16, 2]), vi("position_ids", I64, [2, 3])],
     [Y], rotary_embedding_dim=4)
# Packed [B, S, H*D] with per-batch caches.
save("rotary23_3d", "RotaryEmbedding",
     [vi("input", F, [2, 3, 32]), vi("cos_cache", F, [2, 3, 4]),
      vi("sin_cache", F, [2, 3, 4])], [Y], num_heads=4)

# --- Refused ----------------------------------------------------------------
save("attn23_softcap", "Attention", qkv4(), [Y], softcap=2.0)
save("attn23_qk_output", "Attention", qkv4(),
     [Y, None, None, vi("qk", F, None)], qk_matmul_output_mode=2)
save("attn25_window", "Attention", qkv4(), [Y], opset=25, is_causal=1,
     left_window_size=2)
save("attn23_softmax_precision", "Attention", qkv4(), [Y],
     softmax_precision=TensorProto.DOUBLE)
save("attn23_3d_no_heads", "Attention", qkv3(), [Y], q_num_heads=4)
save("attn23_mask_type", "Attention", qkv4() + [vi("attn_mask", I64, [3, 3])],
     [Y])
save("attn23_causal_dynamic_past", "Attention",
     [vi("Q", F, [2, 4, "s", 8]), vi("K", F, [2, 2, "s", 8]),
      vi("V", F, [2, 2, "s", 8]), None, vi("past_key", F, [2, 2, "p", 8]),
      vi("past_value", F, [2, 2, "p", 8])], [Y], is_causal=1)
save("rotary23_interleaved", "RotaryEmbedding",
     [vi("input", F, [2, 4, 3, 8]), vi("cos_cache", F, [2, 3, 4]),
      vi("sin_cache", F, [2, 3, 4])], [Y], interleaved=1)
save("rms23_stash_double", "RMSNormalization",
     [vi("X", F, [2, 8]), vi("W", F, [8])], [Y], stash_type=11)
save("attn23_ranks", "Attention",
     [vi("Q", F, [2, 4, 3, 8]), vi("K", F, [2, 3, 16]), vi("V", F, [2, 3, 16])],
     [Y])
save("attn23_heads", "Attention", qkv4(q_heads=4, kv_heads=3), [Y])
save("attn23_negative_scale", "Attention", qkv4(), [Y], scale=-0.5)
save("attn23_mask_too_long", "Attention",
     qkv4() + [vi("attn_mask", F, [3, 7])], [Y])
save("attn23_past_heads", "Attention",
     qkv4() + [None, vi("past_key", F, [2, 3, 5, 8]),
               vi("past_value", F, [2, 3, 5, 8])], [Y])
save("attn23_past_alone", "Attention",
     qkv4() + [None, vi("past_key", F, [2, 2, 5, 8])], [Y])
save("attn24_nonpad_past", "Attention",
     qkv4() + [None, vi("past_key", F, [2, 2, 5, 8]),
               vi("past_value", F, [2, 2, 5, 8]),
               vi("nonpad_kv_seqlen", I64, [2])], [Y], opset=24)
save("rotary23_odd_dim", "RotaryEmbedding",
     [vi("input", F, [2, 4, 3, 8]), vi("cos_cache", F, [2, 3, 2]),
      vi("sin_cache", F, [2, 3, 2])], [Y], rotary_embedding_dim=5)
save("rotary23_cache_width", "RotaryEmbedding",
     [vi("input", F, [2, 4, 3, 8]), vi("cos_cache", F, [16, 8]),
      vi("sin_cache", F, [16, 8]), vi("position_ids", I64, [2, 3])], [Y])
save("rms23_axis", "RMSNormalization",
     [vi("X", F, [2, 8]), vi("W", F, [8])], [Y], axis=2)
save("attn23_mask_shape", "Attention",
     qkv4(kv_heads=4, sq=3, sk=5) + [vi("attn_mask", F, [4, 5])], [Y],
     is_causal=1)
save("attn23_zero_heads", "Attention", qkv4(q_heads=0, kv_heads=0), [Y])
save("rotary23_position_rank", "RotaryEmbedding",
     [vi("input", F, [2, 4, 3, 8]), vi("cos_cache", F, [16, 4]),
      vi("sin_cache", F, [16, 4]), vi("position_ids", I64, [3])], [Y])
