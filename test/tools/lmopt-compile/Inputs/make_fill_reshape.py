"""Writes two small ONNX models with run-time sizes and onnxruntime's
outputs for dynamic-fill-reshape.test:

- fill.onnx: x f32 [B, S]; y = x + ConstantOfShape(Shape(x), 1.5) and
  z = ConstantOfShape(Shape(x), int64 7), the fills exporters build masks
  and position ids from;
- baked.onnx: x f32 [S, 4] reshaped to the constant [8, 2], as an exporter
  that baked the traced length in writes it; valid only when S == 4.

usage: make_fill_reshape.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def save(model, path):
    model.opset_import[0].version = 17
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    out = sys.argv[1]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S"])
    z = helper.make_tensor_value_info("z", TensorProto.INT64, ["B", "S"])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("ConstantOfShape", ["shape"], ["ones"], name="fill_f32",
                         value=numpy_helper.from_array(np.array([1.5], np.float32))),
        helper.make_node("Add", ["x", "ones"], ["y"], name="add"),
        helper.make_node("ConstantOfShape", ["shape"], ["z"], name="fill_i64",
                         value=numpy_helper.from_array(np.array([7], np.int64))),
    ]
    save(helper.make_model(helper.make_graph(nodes, "fill", [x], [y, z])),
         os.path.join(out, "fill.onnx"))

    xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S", 4])
    ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 2])
    target = numpy_helper.from_array(np.array([8, 2], np.int64), "target")
    nodes = [helper.make_node("Reshape", ["x", "target"], ["y"], name="baked")]
    save(helper.make_model(helper.make_graph(nodes, "baked", [xs], [ys],
                                             initializer=[target])),
         os.path.join(out, "baked.onnx"))

    rng = np.random.default_rng(0)
    for name, model, shape in (("fill_2x5", "fill", (2, 5)),
                               ("fill_3x8", "fill", (3, 8)),
                               ("baked_4", "baked", (4, 4)),
                               ("baked_3", "baked", (3, 4))):
        feed = {"x": rng.standard_normal(shape).astype(np.float32)}
        np.savez(os.path.join(out, name + ".inputs.npz"), **feed)
        if name == "baked_3":
            continue  # onnxruntime refuses it too
        session = ort.InferenceSession(os.path.join(out, model + ".onnx"))
        names = [o.name for o in session.get_outputs()]
        np.savez(os.path.join(out, name + ".ref.npz"),
                 **dict(zip(names, session.run(None, feed))))


if __name__ == "__main__":
    main()
