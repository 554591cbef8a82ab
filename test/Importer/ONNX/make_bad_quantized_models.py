#!/usr/bin/env python3
"""Writes the small quantized and com.microsoft models the importer tests read.

Run from anywhere: python3 make_bad_quantized_models.py [output-dir]
(default: the Inputs/ folder next to this script). Positive cases cover forms
the fixtures do not (block-wise int4 QDQ, computed uint8 input, Gelu and
FastGelu, causal Attention without mask); the others are bad inputs whose
diagnostics are tested. Every file is tiny and committed.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "Inputs")
os.makedirs(OUT, exist_ok=True)

F = TensorProto.FLOAT
I32 = TensorProto.INT32
U8 = TensorProto.UINT8
MS = "com.microsoft"
rng = np.random.default_rng(0)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=17, ms=False):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)]
    if ms:
        opsets.append(helper.make_opsetid(MS, 1))
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="make_bad_quantized_models")
    m.ir_version = 10
    return m


def save(m, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def floats(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# --- QuantizeLinear / DequantizeLinear ------------------------------------
# Opset 21 block-wise int4 weight: W [4, 64], blocks of 32 along axis 1.
w = helper.make_tensor("w", TensorProto.INT4, [4, 64],
                       rng.integers(-8, 8, size=256).tolist())
zp = helper.make_tensor("w_zp", TensorProto.INT4, [4, 2],
                        [0, 1, -1, 2, 0, 0, 3, -4])
save(model([helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zp"],
                             ["wf"], name="dq_w", axis=1, block_size=32),
            helper.make_node("MatMul", ["x", "wf"], ["y"], name="mm")],
           [vi("x", F, [2, 4])], [vi("y", F, [2, 64])],
           [w, const("w_scale", np.full((4, 2), 0.5, np.float32)), zp],
           opset=21),
     "qdq_int4_blockwise.onnx")

# A uint8 tensor computed at run time, dequantized per axis.
save(model([helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"],
                             name="dq_input", axis=1)],
           [vi("q", U8, [2, 3])], [vi("y", F, [2, 3])],
           [const("s", np.array([0.5, 0.25, 2.0], np.float32)),
            const("z", np.array([128, 0, 7], np.uint8))]),
     "qdq_computed_uint8.onnx")

save(model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"],
                             name="q_x"),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"],
                             name="dq_x")],
           [vi("x", F, [2, 3]), vi("s", F, [])], [vi("y", F, [2, 3])],
           [const("z", np.array(128, np.uint8))]),
     "qdq_nonconstant_scale.onnx")

save(model([helper.make_node("DequantizeLinear", ["w", "s", "z"], ["y"],
                             name="dq_mismatch")],
           [], [vi("y", F, [2, 3])],
           [const("w", np.ones((2, 3), np.int8)),
            const("s", np.array(0.5, np.float32)),
            const("z", np.array(3, np.uint8))]),
     "qdq_zero_point_mismatch.onnx")

save(model([helper.make_node("MatMulInteger", ["a", "b", "azp"], ["y"],
                             name="mmi_mismatch")],
           [vi("a", U8, [2, 3])], [vi("y", I32, [2, 4])],
           [const("b", np.ones((3, 4), np.int8)),
            const("azp", np.array(1, np.int8))]),
     "matmul_integer_zero_point_mismatch.onnx")

# --- com.microsoft activations and SkipLayerNormalization -----------------
save(model([helper.make_node("Gelu", ["x"], ["g"], name="gelu0", domain=MS),
            helper.make_node("FastGelu", ["g", "b"], ["y"], name="fast0",
                             domain=MS)],
           [vi("x", F, [2, 8])], [vi("y", F, [2, 8])], [const("b", floats(8))],
           ms=True),
     "ms_gelu.onnx")


def skip_ln(outputs, name):
    graph_outputs = [vi(o, F, [2, 3, 8]) for o in outputs if o]
    return model([helper.make_node("SkipLayerNormalization",
                                   ["x", "skip", "gamma", "beta", "bias"],
                                   outputs, name="sln0", domain=MS,
                                   epsilon=1e-6)],
                 [vi("x", F, [2, 3, 8]), vi("skip", F, [2, 3, 8])],
                 graph_outputs,
                 [const("gamma", floats(8)), const("beta", floats(8)),
                  const("bias", floats(8))], ms=True)


save(skip_ln(["y", "", "", "sum"], "sln0"), "ms_skip_layer_norm_sum.onnx")
save(skip_ln(["y", "mean"], "sln0"), "ms_skip_layer_norm_mean.onnx")

# --- com.microsoft Attention ------------------------------------------------


def attention(mask_input, mask_shape, name, x_shape=(2, 5, 8), **attrs):
    inputs = [vi("x", F, list(x_shape))]
    node_inputs = ["x", "qkv_w", "qkv_b"]
    if mask_input:
        inputs.append(vi("mask", I32, mask_shape))
        node_inputs.append("mask")
    return model([helper.make_node("Attention", node_inputs, ["y"], name=name,
                                   domain=MS, num_heads=2, **attrs)],
                 inputs, [vi("y", F, list(x_shape))],
                 [const("qkv_w", floats(8, 24)), const("qkv_b", floats(24))],
                 ms=True)


save(attention(False, None, "attn_causal", unidirectional=1),
     "ms_attention_causal.onnx")
save(attention(True, ["batch", "seq"], "attn_mask",
               x_shape=("batch", "seq", 8)), "ms_attention_mask_2d.onnx")
save(attention(True, [2, 5, 5], "attn_3d"), "ms_attention_mask_3d.onnx")

# --- com.microsoft MatMulNBits ------------------------------------------------


def nbits(name, k=64, n=8, bits=4, block=32, b_shape=None, zero_points=False):
    blocks = -(-k // block)
    b_shape = b_shape or [n, blocks, block * bits // 8]
    inputs = ["a", "b", "scales"]
    inits = [const("b", rng.integers(0, 256, size=b_shape, dtype=np.uint8)),
             const("scales", (rng.random(n * blocks) * 0.1 + 0.01)
                   .astype(np.float32))]
    if zero_points:
        inputs.append("zp")
        inits.append(const("zp", rng.integers(0, 256, size=[n, -(-blocks // 2)],
                                              dtype=np.uint8)))
    return model([helper.make_node("MatMulNBits", inputs, ["y"], name=name,
                                   domain=MS, K=k, N=n, bits=bits,
                                   block_size=block)],
                 [vi("a", F, [2, k])], [vi("y", F, [2, n])], inits, ms=True)


# Three blocks per row, so the packed zero points end in a half-used byte.
save(nbits("nbits_ok", k=96, n=4, zero_points=True), "ms_nbits.onnx")
save(nbits("nbits_8bit", bits=8), "ms_nbits_bits8.onnx")
save(nbits("nbits_shape", b_shape=[8, 3, 16]), "ms_nbits_wrong_b_shape.onnx")
save(nbits("nbits_k", k=48), "ms_nbits_k_not_multiple.onnx")

# --- One model per remaining diagnostic ---------------------------------------


def dq(name, x, scale, zero=None, x_input=None, opset=17, **attrs):
    """DequantizeLinear of initializer `x` (or graph input `x_input`)."""
    inits = [x] if x is not None else []
    inputs = [x_input] if x_input is not None else []
    names = ["x", "s"] + (["z"] if zero is not None else [])
    inits.append(scale)
    if zero is not None:
        inits.append(zero)
    return model([helper.make_node("DequantizeLinear", names, ["y"], name=name,
                                   **attrs)],
                 inputs, [vi("y", F, None)], inits, opset=opset)


def q(name, x_type, scale, zero=None, opset=17, **attrs):
    names = ["x", "s"] + (["z"] if zero is not None else [])
    inits = [scale] + ([zero] if zero is not None else [])
    return model([helper.make_node("QuantizeLinear", names, ["y"], name=name,
                                   **attrs)],
                 [vi("x", x_type, [2, 4])], [vi("y", U8, None)], inits,
                 opset=opset)


x8 = const("x", np.ones((2, 4), np.int8))
s1 = const("s", np.array(0.5, np.float32))
save(dq("dq_int_scale", x8, const("s", np.array(2, np.int32))),
     "qdq_int_scale.onnx")
save(model([helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"],
                             name="dq_zp_input")],
           [vi("z", TensorProto.INT8, [])], [vi("y", F, None)], [x8, s1]),
     "qdq_nonconstant_zero_point.onnx")
save(dq("dq_float_zp", const("x", np.ones((2, 4), np.uint8)), s1,
        helper.make_tensor("z", TensorProto.FLOAT8E4M3FN, [], [0.0])),
     "qdq_float8_zero_point.onnx")
save(dq("dq_zp_shape", x8, const("s", np.full(4, 0.5, np.float32)),
        const("z", np.zeros(3, np.int8)), axis=1), "qdq_zero_point_shape.onnx")
save(dq("dq_axis", x8, const("s", np.full(4, 0.5, np.float32)), axis=2),
     "qdq_axis_out_of_range.onnx")
save(dq("dq_axis_len", x8, const("s", np.full(3, 0.5, np.float32)), axis=1),
     "qdq_per_axis_length.onnx")
save(dq("dq_block_neg", x8, const("s", np.full((2, 4), 0.5, np.float32)),
        opset=21, axis=1, block_size=-2), "qdq_block_negative.onnx")
save(dq("dq_block_partial", x8, const("s", np.full((2, 2), 0.5, np.float32)),
        opset=21, axis=1, block_size=3), "qdq_block_partial.onnx")
save(dq("dq_block_scale", x8, const("s", np.full((2, 3), 0.5, np.float32)),
        opset=21, axis=1, block_size=2), "qdq_block_scale_shape.onnx")
save(dq("dq_block_computed", None,
        const("s", np.full((2, 2), 0.5, np.float32)),
        x_input=vi("x", U8, [2, 4]), opset=21, axis=1, block_size=2),
     "qdq_block_computed_uint8.onnx")
save(dq("dq_float_x", None, s1, x_input=vi("x", F, [2, 4])),
     "qdq_float_input.onnx")
save(dq("dq_int64", const("x", np.ones((2, 4), np.int64)), s1),
     "qdq_int64_input.onnx")
save(dq("dq_negative_scale", x8, const("s", np.array(-0.5, np.float32))),
     "qdq_negative_scale.onnx")
save(q("q_f16", TensorProto.FLOAT16, s1), "qdq_quantize_type_mismatch.onnx")
save(q("q_fp8_dtype", F, s1, opset=21,
       output_dtype=TensorProto.FLOAT8E4M3FN), "qdq_output_dtype_float.onnx")

# int4 tensors whose packed data does not match their shape.
bad4 = helper.make_tensor("x", TensorProto.INT4, [2, 4], [0] * 8)
bad4.ClearField("int32_data")
bad4.raw_data = b"\x00\x00\x00"
save(dq("dq_int4_raw", bad4, s1), "int4_raw_size.onnx")
bad4 = helper.make_tensor("x", TensorProto.INT4, [2, 4], [0] * 8)
del bad4.int32_data[-1]
save(dq("dq_int4_typed", bad4, s1), "int4_typed_size.onnx")
ext4 = helper.make_tensor("x", TensorProto.INT4, [2, 4], [0] * 8)
ext4.ClearField("int32_data")
ext4.data_location = TensorProto.EXTERNAL
ext4.external_data.add(key="location", value="weights.bin")
save(dq("dq_int4_external", ext4, s1), "int4_external.onnx")

save(model([helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"],
                             name="dql_f16")],
           [vi("x", TensorProto.FLOAT16, [2, 4])], [vi("y", U8, None)]),
     "dynamic_quantize_f16.onnx")
save(model([helper.make_node("MatMulInteger", ["a", "b"], ["y"],
                             name="mmi_int32")],
           [vi("a", I32, [2, 3])], [vi("y", I32, None)],
           [const("b", np.ones((3, 4), np.int8))]),
     "matmul_integer_int32.onnx")
save(model([helper.make_node("MatMulInteger", ["a", "b"], ["y"],
                             name="mmi_shapes")],
           [vi("a", U8, [2, 3])], [vi("y", I32, None)],
           [const("b", np.ones((5, 4), np.int8))]),
     "matmul_integer_shapes.onnx")

# com.microsoft activations and SkipLayerNormalization.
save(model([helper.make_node("BiasGelu", ["x", "b"], ["y"], name="bg_shape",
                             domain=MS)],
           [vi("x", F, [2, 8])], [vi("y", F, None)], [const("b", floats(3))],
           ms=True), "ms_bias_gelu_broadcast.onnx")
save(model([helper.make_node("BiasGelu", ["x", "b"], ["y"], name="bg_type",
                             domain=MS)],
           [vi("x", F, [2, 8])], [vi("y", F, None)],
           [const("b", floats(8).astype(np.float16))], ms=True),
     "ms_bias_gelu_types.onnx")
save(model([helper.make_node("Gelu", ["x"], ["y"], name="gelu_int",
                             domain=MS)],
           [vi("x", I32, [2, 8])], [vi("y", I32, None)], ms=True),
     "ms_gelu_int.onnx")
save(model([helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma"],
                             ["y"], name="sln_scalar", domain=MS)],
           [vi("x", F, []), vi("skip", F, [])], [vi("y", F, None)],
           [const("gamma", floats(1))], ms=True),
     "ms_skip_layer_norm_scalar.onnx")


def attention_case(name, file, inputs=("x", "qkv_w", "qkv_b"), outputs=("y",),
                   x_shape=(2, 5, 8), w_shape=(8, 24), extra_inputs=(),
                   **attrs):
    attrs.setdefault("num_heads", 2)
    return save(model(
        [helper.make_node("Attention", list(inputs), list(outputs), name=name,
                          domain=MS, **attrs)],
        [vi("x", F, list(x_shape))] + list(extra_inputs),
        [vi(o, F, None) for o in outputs if o],
        [const("qkv_w", floats(*w_shape)), const("qkv_b", floats(w_shape[-1]))],
        ms=True), file)


attention_case("attn_past", "ms_attention_past.onnx",
               inputs=("x", "qkv_w", "qkv_b", "", "past"),
               extra_inputs=[vi("past", F, [2, 2, 2, 3, 4])])
attention_case("attn_present", "ms_attention_present.onnx",
               outputs=("y", "present"))
attention_case("attn_heads", "ms_attention_num_heads.onnx", num_heads=0)
attention_case("attn_rotary", "ms_attention_rotary.onnx", do_rotary=1)
attention_case("attn_rank", "ms_attention_rank.onnx", x_shape=(10, 8))
attention_case("attn_split", "ms_attention_split.onnx", w_shape=(8, 25))
attention_case("attn_head_split", "ms_attention_head_split.onnx", num_heads=3)

# com.microsoft MatMulNBits.
save(nbits("nbits_block", block=24), "ms_nbits_block_size.onnx")
save(nbits("nbits_n", n=0, b_shape=[1, 2, 16]), "ms_nbits_n_zero.onnx")


def nbits_edit(name, file, a_type=F, a_shape=(2, 64), scales=None,
               zero_points=None, g_idx=False):
    inputs = ["a", "b", "s"]
    inits = [const("b", rng.integers(0, 256, size=[8, 2, 16], dtype=np.uint8)),
             const("s", scales if scales is not None
                   else np.full(16, 0.1, np.float32))]
    if zero_points is not None or g_idx:
        inputs.append("zp" if zero_points is not None else "")
        if zero_points is not None:
            inits.append(const("zp", zero_points))
    if g_idx:
        inputs.append("g")
        inits.append(const("g", np.zeros(64, np.int32)))
    save(model([helper.make_node("MatMulNBits", inputs, ["y"], name=name,
                                 domain=MS, K=64, N=8, bits=4, block_size=32)],
               [vi("a", a_type, list(a_shape))], [vi("y", F, None)], inits,
               ms=True), file)


nbits_edit("nbits_gidx", "ms_nbits_g_idx.onnx", g_idx=True)
nbits_edit("nbits_int_a", "ms_nbits_int_input.onnx", a_type=I32)
nbits_edit("nbits_a_k", "ms_nbits_input_k.onnx", a_shape=(2, 32))
nbits_edit("nbits_scales", "ms_nbits_scales.onnx",
           scales=np.full(15, 0.1, np.float32))
nbits_edit("nbits_float_zp", "ms_nbits_float_zero_points.onnx",
           zero_points=np.zeros(16, np.float32))
