#!/usr/bin/env python3
"""Writes the malformed and small ONNX models that the importer tests read.

Run from anywhere: python3 make_bad_models.py [output-dir]
(default: the Inputs/ folder next to this script). Every file is tiny and
committed; rerun after changing a case and commit the result.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "Inputs")
os.makedirs(OUT, exist_ok=True)

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)] + list(extra_opsets)
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="make_bad_models")
    m.ir_version = 8
    return m


def save(m, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def save_bytes(data, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def add_model():
    return model([helper.make_node("Add", ["x", "y"], ["z"], name="add0")],
                 [vi("x", F, [2, 3]), vi("y", F, [2, 3])],
                 [vi("z", F, [2, 3])])


# --- Files that are not ONNX models -------------------------------------
save_bytes(b"", "empty.onnx")
good = add_model().SerializeToString()
save_bytes(good[: len(good) // 2], "truncated.onnx")
save_bytes(b"\xff\xff\xff\xff not a protobuf \x00\x01", "not_protobuf.onnx")
# Parses as a protobuf (field 13, varint) but is no model.
save_bytes(b"\x68\x01", "no_ir_version.onnx")
m = onnx.ModelProto()
m.ir_version = 8
m.opset_import.add().version = 17
save(m, "no_graph.onnx")

# --- Opsets ---------------------------------------------------------------
m = add_model()
m.opset_import[0].version = 99
save(m, "opset_too_new.onnx")
m = add_model()
del m.opset_import[:]
m.opset_import.add(domain="com.example", version=1)
save(m, "no_default_opset.onnx")

# --- Graph structure ------------------------------------------------------
save(model([helper.make_node("Relu", ["b"], ["a"], name="first"),
            helper.make_node("Relu", ["a"], ["b"], name="second")],
           [vi("x", F, [2])], [vi("b", F, [2])]), "cycle.onnx")
save(model([helper.make_node("Add", ["x", "missing"], ["z"], name="add0")],
           [vi("x", F, [2])], [vi("z", F, [2])]), "dangling_input.onnx")
save(model([helper.make_node("Relu", ["x"], ["z"], name="relu_a"),
            helper.make_node("Neg", ["x"], ["z"], name="neg_b")],
           [vi("x", F, [2])], [vi("z", F, [2])]), "duplicate_output.onnx")
save(model([helper.make_node("Relu", ["x"], ["z"], name="relu0")],
           [vi("x", F, [2]), vi("x", F, [2])], [vi("z", F, [2])]),
     "duplicate_input.onnx")
w = numpy_helper.from_array(np.ones([2], np.float32), "w")
save(model([helper.make_node("Add", ["x", "w"], ["z"], name="add0")],
           [vi("x", F, [2])], [vi("z", F, [2])], inits=[w, w]),
     "duplicate_initializer.onnx")
save(model([helper.make_node("Relu", ["x"], ["z"], name="relu0")],
           [vi("x", F, [2])], [vi("nowhere", F, [2])]),
     "undefined_output.onnx")

# --- Nodes ----------------------------------------------------------------
save(model([helper.make_node("Concat", ["x", "x"], ["z"], name="cat0")],
           [vi("x", F, [2])], [vi("z", F, [4])]), "missing_attribute.onnx")
node = helper.make_node("Transpose", ["x"], ["z"], name="tr0")
node.attribute.append(helper.make_attribute("perm", 1.5))
save(model([node], [vi("x", F, [2, 3])], [vi("z", F, [3, 2])]),
     "wrong_attribute_kind.onnx")
save(model([helper.make_node("Add", ["x", "x", "x"], ["z"], name="add3")],
           [vi("x", F, [2])], [vi("z", F, [2])]), "wrong_input_count.onnx")
save(model([helper.make_node("GridSample", ["x", "x"], ["z"],
                             name="sampler_0"),
            helper.make_node("Attention", ["x"], ["y"], name="attn_0",
                             domain="com.example")],
           [vi("x", F, [1, 1, 2, 2])], [vi("z", F, [1, 1, 2, 2])],
           extra_opsets=[helper.make_opsetid("com.example", 1)]),
     "unsupported_op.onnx")
save(model([helper.make_node("FastGelu", ["x"], ["z"], name="gelu0",
                             domain="com.unknown")],
           [vi("x", F, [2])], [vi("z", F, [2])]), "unimported_domain.onnx")
save(model([helper.make_node("MatMul", ["x", "y"], ["z"], name="mm0")],
           [vi("x", F, [2, 3]), vi("y", F, [4, 5])], [vi("z", F, [2, 5])]),
     "matmul_mismatch.onnx")
save(model([helper.make_node("Add", ["x", "y"], ["z"], name="add0")],
           [vi("x", F, [2, 3]), vi("y", F, [4])], [vi("z", F, [2, 3])]),
     "broadcast_mismatch.onnx")
shape = numpy_helper.from_array(np.array([4, 4], np.int64), "shape")
save(model([helper.make_node("Reshape", ["x", "shape"], ["z"], name="rs0")],
           [vi("x", F, [2, 3])], [vi("z", F, [4, 4])], inits=[shape]),
     "reshape_mismatch.onnx")
save(model([helper.make_node("Unsqueeze", ["x", "axes"], ["z"], name="us0")],
           [vi("x", F, [2]), vi("axes", I64, [1])], [vi("z", F, [1, 2])]),
     "nonconstant_axes.onnx")
save(model([helper.make_node("Constant", [], ["z"], name="const0")],
           [vi("x", F, [2])], [vi("z", F, [2])]), "constant_without_value.onnx")

# --- Types and shapes -----------------------------------------------------
save(model([helper.make_node("Relu", ["x"], ["z"], name="relu0")],
           [vi("x", 99, [2])], [vi("z", F, [2])]), "unknown_element_type.onnx")
save(model([helper.make_node("Identity", ["x"], ["z"], name="id0")],
           [vi("x", TensorProto.STRING, [2])], [vi("z", F, [2])]),
     "string_input.onnx")
save(model([helper.make_node("Relu", ["x"], ["z"], name="relu0")],
           [vi("x", F, [2, -3])], [vi("z", F, [2])]), "negative_input_dim.onnx")
save(model([helper.make_node("Relu", ["x"], ["z"], name="relu0")],
           [vi("x", F, None)], [vi("z", F, None)]), "unranked_input.onnx")
save(model([helper.make_node("Relu", ["x"], ["z"], name="relu0")],
           [vi("x", F, ["batch", 8])], [vi("z", F, ["batch", 8])]),
     "dynamic_relu.onnx")


def tensor_model(tensor, name):
    save(model([helper.make_node("Add", ["x", tensor.name], ["z"],
                                 name="add0")],
               [vi("x", F, [3])], [vi("z", F, [3])], inits=[tensor]), name)


t = TensorProto(name="w", data_type=F, dims=[3, -2])
tensor_model(t, "negative_tensor_dim.onnx")
t = TensorProto(name="w", data_type=F, dims=[1 << 40, 1 << 40])
tensor_model(t, "overflow_tensor_dims.onnx")
t = TensorProto(name="w", data_type=F, dims=[3], raw_data=b"\0" * 8)
tensor_model(t, "raw_data_size.onnx")
t = TensorProto(name="w", data_type=F, dims=[3], float_data=[1.0, 2.0])
tensor_model(t, "typed_data_size.onnx")
t = TensorProto(name="w", data_type=77, dims=[3], raw_data=b"\0" * 12)
tensor_model(t, "unknown_tensor_type.onnx")


# --- External data --------------------------------------------------------
def external_model(location, name, offset=None, length=None):
    t = TensorProto(name="w", data_type=F, dims=[3])
    t.data_location = TensorProto.EXTERNAL
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    for key, value in entries:
        e = t.external_data.add()
        e.key, e.value = key, value
    tensor_model(t, name)


# 16 bytes of weights: [1, 2, 3] as float32 after a 4-byte header.
save_bytes(np.array([0, 1, 2, 3], np.float32).tobytes(), "weights.bin")
external_model("weights.bin", "external_ok.onnx", offset=4, length=12)
external_model("../weights.bin", "external_dotdot.onnx")
external_model("/etc/passwd", "external_absolute.onnx")
external_model("link.bin", "external_symlink.onnx")
external_model("weights.bin", "external_past_end.onnx", offset=8, length=12)
external_model("weights.bin", "external_wrong_length.onnx", offset=0,
               length=16)
external_model("no_such_file.bin", "external_missing.onnx")


# --- Node-test forms (conformance.test) -----------------------------------
# Expand's shape picked by Where(Not(Equal(...))) over a dim of the input,
# as the Attention function body computes its GQA interleave.
save(model([
    helper.make_node("Shape", ["x"], ["s"], start=0, end=1),
    helper.make_node("Equal", ["s", "two"], ["eq"]),
    helper.make_node("Not", ["eq"], ["ne"]),
    helper.make_node("Where", ["ne", "three", "four"], ["d"]),
    helper.make_node("Concat", ["s", "d"], ["shape"], axis=0),
    helper.make_node("Expand", ["x", "shape"], ["y"], name="expand"),
], [vi("x", F, ["n", 1])], [vi("y", F, None)],
    [numpy_helper.from_array(np.array([v], np.int64), n)
     for n, v in (("two", 2), ("three", 3), ("four", 4))], opset=18),
    "conformance_not_fold.onnx")
# ReduceSum whose axes come from a graph input (the node tests' form).
save(model([helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum",
                             keepdims=0)],
           [vi("x", F, [2, 3, 4]), vi("axes", I64, [1])], [vi("y", F, None)],
           opset=18), "conformance_axes_input.onnx")
# Range over float constants has a static length.
save(model([helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                             name="range")], [], [vi("y", F, None)],
           [numpy_helper.from_array(np.array(v, np.float32), n)
            for n, v in (("start", 1.0), ("limit", 2.0), ("delta", 0.25))],
           opset=18), "conformance_range_float.onnx")


def pad_model(name, x_shape, pads, opset=18, **attrs):
    save(model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad",
                                 **attrs)],
               [vi("x", F, x_shape)], [vi("y", F, None)],
               [numpy_helper.from_array(np.array(pads, np.int64), "pads")],
               opset=opset), name)


# Pad: slices and concatenations; the diagnostics of what it refuses.
pad_model("pad_reflect.onnx", [2, 3], [0, 1, 0, 2], mode="reflect")
pad_model("pad_reflect_too_large.onnx", [2, 3], [0, 3, 0, 0], mode="reflect")
pad_model("pad_dynamic.onnx", ["n", 3], [1, 0, 0, 0])
pad_model("pad_bad_mode.onnx", [2, 3], [0, 1, 0, 0], mode="mirror")
pad_model("pad_count.onnx", [2, 3], [0, 1, 0])
pad_model("pad_crop_too_much.onnx", [2, 3], [0, -2, 0, -2])


def trilu_model(name, x_shape, k=None, k_input=False, **attrs):
    inputs = [vi("x", F, x_shape)]
    inits = []
    if k is not None:
        inits.append(numpy_helper.from_array(np.array([k], np.int64), "k"))
    if k_input:
        inputs.append(vi("k", I64, [1]))
    names = ["x", "k"] if k is not None or k_input else ["x"]
    save(model([helper.make_node("Trilu", names, ["y"], name="trilu", **attrs)],
               inputs, [vi("y", F, None)], inits, opset=18), name)


# Trilu: a mask over static or symbolic dims; an empty tensor passes
# through; the diagnostics of what it refuses.
trilu_model("trilu_static.onnx", [2, 3, 4], k=1)
trilu_model("trilu_symbolic.onnx", ["b", "s", "s"], upper=0)
trilu_model("trilu_zero.onnx", [3, 0, 5], k=6, upper=0)
trilu_model("trilu_rank1.onnx", [4])
trilu_model("trilu_k_input.onnx", [3, 3], k_input=True)
trilu_model("trilu_bad_upper.onnx", [3, 3], upper=1.5)
# Neg of a known shape entry folds: the Reshape target is known.
save(model([
    helper.make_node("Shape", ["x"], ["s"], start=0, end=1),
    helper.make_node("Neg", ["c"], ["n"]),
    helper.make_node("Concat", ["s", "n"], ["shape"], axis=0),
    helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape"),
], [vi("x", F, ["b", 3])], [vi("y", F, None)],
    [numpy_helper.from_array(np.array([-3], np.int64), "c")], opset=18),
    "conformance_neg_fold.onnx")
# LayerNormalization with its Mean and InvStdDev outputs.
save(model([helper.make_node("LayerNormalization", ["x", "w"],
                             ["y", "mean", "inv"], name="ln", axis=-2)],
           [vi("x", F, [2, 3, 4]), vi("w", F, [3, 4])],
           [vi("y", F, None), vi("mean", F, None), vi("inv", F, None)],
           opset=17), "conformance_layer_norm_stats.onnx")


# --- Composite operators given the wrong types or shapes ----------------
I32 = TensorProto.INT32
save(model([helper.make_node("Elu", ["x"], ["y"], name="elu0")],
           [vi("x", I32, [2, 3])], [vi("y", I32, [2, 3])]), "elu_int.onnx")
save(model([helper.make_node("PRelu", ["x", "s"], ["y"], name="prelu0")],
           [vi("x", F, [2, 3]), vi("s", F, [2])], [vi("y", F, [2, 3])]),
     "prelu_slope.onnx")
save(model([helper.make_node("Clip", ["x", "lo"], ["y"], name="clip0")],
           [vi("x", F, [2, 3]), vi("lo", F, [3])], [vi("y", F, [2, 3])]),
     "clip_vector_bound.onnx")
save(model([helper.make_node("Xor", ["a", "b"], ["y"], name="xor0")],
           [vi("a", F, [2]), vi("b", F, [2])],
           [vi("y", TensorProto.BOOL, [2])]), "xor_float.onnx")
save(model([helper.make_node("Mean", ["a", "b"], ["y"], name="mean0")],
           [vi("a", I64, [2]), vi("b", I64, [2])], [vi("y", I64, [2])]),
     "mean_int.onnx")
save(model([helper.make_node("ReduceL2", ["x", "axes"], ["y"], name="l2")],
           [vi("x", F, [2, 3]), vi("axes", I64, [1])], [vi("y", F, [2, 1])],
           opset=18), "reduce_l2_axes_unknown.onnx")
save(model([helper.make_node("ArgMax", ["x"], ["y"], name="argmax0", axis=1)],
           [vi("x", F, [2, 0])], [vi("y", I64, [2, 1])]), "argmax_empty.onnx")
save(model([helper.make_node("Einsum", ["x"], ["y"], name="diag0",
                             equation="ii->i")],
           [vi("x", F, [3, 3])], [vi("y", F, [3])], opset=12),
     "einsum_diagonal.onnx")
save(model([helper.make_node("Einsum", ["x", "y"], ["z"], name="ein0",
                             equation="ij,jk->ik")],
           [vi("x", F, [2, 3]), vi("y", F, [4, 5])], [vi("z", F, [2, 5])],
           opset=12), "einsum_sizes.onnx")
save(model([helper.make_node("Einsum", ["x"], ["y"], name="ein1",
                             equation="ijk->i")],
           [vi("x", F, [2, 3])], [vi("y", F, [2])], opset=12),
     "einsum_rank.onnx")
save(model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile0")],
           [vi("x", F, [2, 3]), vi("r", I64, [2])], [vi("y", F, [4, 3])]),
     "tile_runtime_repeats.onnx")
