#!/usr/bin/env python3
"""Writes the small models that test operators at opsets 24-28.

Run from anywhere: python3 make_opset_models.py [output-dir]
(default: the Inputs/ folder next to this script). Each model is one node at
an opset above 23 whose schema changed there (docs/importer.md, "Opsets above
23"): forms lmopt converts, and new attribute values or types it refuses.
Every file is tiny and committed.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "Inputs")
os.makedirs(OUT, exist_ok=True)

F = TensorProto.FLOAT
F16 = TensorProto.FLOAT16


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, node, inputs, outputs, opset, inits=()):
    graph = helper.make_graph([node], "g", inputs, outputs, list(inits))
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_opset_models")
    m.ir_version = 11
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def cast(name, src, dst, opset, **attrs):
    save(name + ".onnx",
         helper.make_node("Cast", ["x"], ["y"], name=name, to=dst, **attrs),
         [vi("x", src, [2, 3])], [vi("y", dst, None)], opset)


# --- Accepted ---------------------------------------------------------------
cast("opset28_cast_f16", F, F16, 28)
cast("opset28_cast_e8m0_to_f32", TensorProto.FLOAT8E8M0, F, 28)
cast("opset28_cast_fp8_no_saturate", F, TensorProto.FLOAT8E4M3FN, 28,
     saturate=0)
save("opset25_transpose_int2.onnx",
     helper.make_node("Transpose", ["x"], ["y"], name="transpose_int2",
                      perm=[1, 0]),
     [vi("x", TensorProto.INT2, [2, 3])], [vi("y", TensorProto.INT2, None)],
     25)
save("opset28_mod_int.onnx",
     helper.make_node("Mod", ["a", "b"], ["y"], name="mod_int"),
     [vi("a", TensorProto.INT32, [4]), vi("b", TensorProto.INT32, [4])],
     [vi("y", TensorProto.INT32, None)], 28)
for stash, suffix in ((None, "default"), (11, "double")):
    attrs = {} if stash is None else {"stash_type": stash}
    save(f"opset27_range_f16_{suffix}.onnx",
         helper.make_node("Range", ["s", "l", "d"], ["y"],
                          name=f"range_{suffix}", **attrs),
         [vi(n, F16, []) for n in ("s", "l", "d")], [vi("y", F16, None)], 27)
save("opset25_qdq_same_types.onnx",
     helper.make_node("QuantizeLinear", ["x", "s"], ["q"], name="q_precision",
                      precision=F),
     [vi("x", F, [2, 4])], [vi("q", TensorProto.UINT8, None)], 25,
     [const("s", np.array(0.5, np.float32))])
save("opset25_dq_output_dtype.onnx",
     helper.make_node("DequantizeLinear", ["x", "s"], ["y"],
                      name="dq_output_dtype", output_dtype=F),
     [], [vi("y", F, None)], 25,
     [const("x", np.ones((2, 4), np.int8)),
      const("s", np.array(0.5, np.float32))])

# --- Refused ----------------------------------------------------------------
cast("opset28_cast_fp8_saturate", F, TensorProto.FLOAT8E4M3FN, 28)
cast("opset28_cast_to_e8m0", F, TensorProto.FLOAT8E8M0, 28,
     round_mode="nearest")
save("opset24_castlike_to_e8m0.onnx",
     helper.make_node("CastLike", ["x", "t"], ["y"], name="castlike_e8m0"),
     [vi("x", F, [2, 3]), vi("t", TensorProto.FLOAT8E8M0, [1])],
     [vi("y", TensorProto.FLOAT8E8M0, None)], 24)
save("opset27_range_f16_stash_f16.onnx",
     helper.make_node("Range", ["s", "l", "d"], ["y"], name="range_stash_f16",
                      stash_type=F16),
     [vi(n, F16, []) for n in ("s", "l", "d")], [vi("y", F16, None)], 27)
save("opset28_mod_float_floor.onnx",
     helper.make_node("Mod", ["a", "b"], ["y"], name="mod_float_floor"),
     [vi("a", F, [4]), vi("b", F, [4])], [vi("y", F, None)], 28)
save("opset25_q_precision_f16.onnx",
     helper.make_node("QuantizeLinear", ["x", "s"], ["q"], name="q_precision",
                      precision=F16),
     [vi("x", F, [2, 4])], [vi("q", TensorProto.UINT8, None)], 25,
     [const("s", np.array(0.5, np.float32))])
save("opset25_dq_output_dtype_f16.onnx",
     helper.make_node("DequantizeLinear", ["x", "s"], ["y"],
                      name="dq_output_f16", output_dtype=F16),
     [], [vi("y", F16, None)], 25,
     [const("x", np.ones((2, 4), np.int8)),
      const("s", np.array(0.5, np.float32))])
save("opset25_dq_e8m0_scale.onnx",
     helper.make_node("DequantizeLinear", ["x", "s"], ["y"],
                      name="dq_e8m0_scale", output_dtype=F),
     [], [vi("y", F, None)], 25,
     [const("x", np.ones((2, 4), np.int8)),
      helper.make_tensor("s", TensorProto.FLOAT8E8M0, [], [0.5])])
