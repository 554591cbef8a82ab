"""Writes small ONNX models whose GatherElements has run-time sizes, their
inputs and onnxruntime's outputs, for dynamic-gather-elements.test:

- positions.onnx: RoBERTa's token types as Hugging Face exports them:
  mask i64 [B, S]; position ids = CumSum(mask, 1) * mask + 1; a constant
  row [1, 12] expanded to [B, 12] and gathered along axis 1 at the position
  ids (f32 output), and at the position ids minus 12 (negative indices,
  i64 output from an i64 table);
- direct.onnx: data f32 [B, T] and indices i64 [C, S] both graph inputs,
  axis 1: the indices' values and the dims off the axis come from the
  caller, so the run must check both;
- axis0.onnx: data f32 [T, 3] and i32 indices [S, 3] along axis 0.

Inputs named *_bad are refused by onnxruntime too and have no reference.

usage: make_gather_elements.py OUTDIR
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


def positions_model():
    mask = helper.make_tensor_value_info("mask", TensorProto.INT64, ["B", "S"])
    types = helper.make_tensor_value_info("types", TensorProto.FLOAT,
                                          ["B", "S"])
    back = helper.make_tensor_value_info("back", TensorProto.INT64, ["B", "S"])
    table = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(1, 12)
    inits = [
        numpy_helper.from_array(table, "table"),
        numpy_helper.from_array(np.arange(100, 112, dtype=np.int64)
                                .reshape(1, 12), "itable"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array(1, np.int64), "one_scalar"),
        numpy_helper.from_array(np.array(12, np.int64), "twelve"),
        numpy_helper.from_array(np.array([12], np.int64), "width"),
    ]
    nodes = [
        helper.make_node("Shape", ["mask"], ["shape"]),
        helper.make_node("Slice", ["shape", "zero", "one"], ["batch"]),
        helper.make_node("Concat", ["batch", "width"], ["expanded"], axis=0),
        helper.make_node("Expand", ["table", "expanded"], ["data"]),
        helper.make_node("Expand", ["itable", "expanded"], ["idata"]),
        helper.make_node("CumSum", ["mask", "one_scalar"], ["sum"]),
        helper.make_node("Mul", ["sum", "mask"], ["masked"]),
        helper.make_node("Add", ["masked", "one_scalar"], ["pos"]),
        helper.make_node("GatherElements", ["data", "pos"], ["types"],
                         name="token_types", axis=1),
        helper.make_node("Sub", ["pos", "twelve"], ["neg"]),
        helper.make_node("GatherElements", ["idata", "neg"], ["back"],
                         name="from_the_end", axis=-1),
    ]
    return helper.make_model(helper.make_graph(nodes, "positions", [mask],
                                               [types, back], inits))


def direct_model():
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, ["B", "T"])
    idx = helper.make_tensor_value_info("idx", TensorProto.INT64, ["C", "S"])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["C", "S"])
    nodes = [helper.make_node("GatherElements", ["data", "idx"], ["out"],
                              name="pick", axis=1)]
    return helper.make_model(helper.make_graph(nodes, "direct", [data, idx],
                                               [out]))


def axis0_model():
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, ["T", 3])
    idx = helper.make_tensor_value_info("idx", TensorProto.INT32, ["S", 3])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["S", 3])
    nodes = [helper.make_node("GatherElements", ["data", "idx"], ["out"],
                              name="rows", axis=0)]
    return helper.make_model(helper.make_graph(nodes, "axis0", [data, idx],
                                               [out]))


def main():
    out = sys.argv[1]
    save(positions_model(), os.path.join(out, "positions.onnx"))
    save(direct_model(), os.path.join(out, "direct.onnx"))
    save(axis0_model(), os.path.join(out, "axis0.onnx"))

    rng = np.random.default_rng(0)
    mask_2x5 = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int64)
    mask_4x10 = (rng.random((4, 10)) > 0.3).astype(np.int64)
    data_3x7 = rng.standard_normal((3, 7)).astype(np.float32)
    idx_2x4 = rng.integers(-7, 7, (2, 4)).astype(np.int64)
    idx_bad = idx_2x4.copy()
    idx_bad[1, 2] = 7
    idx_neg_bad = idx_2x4.copy()
    idx_neg_bad[0, 3] = -8
    cases = {
        "positions_2x5": ("positions", {"mask": mask_2x5}),
        "positions_4x10": ("positions", {"mask": mask_4x10}),
        "direct_3x7_2x4": ("direct", {"data": data_3x7, "idx": idx_2x4}),
        "direct_3x7_3x7": ("direct", {
            "data": data_3x7,
            "idx": rng.integers(-7, 7, (3, 7)).astype(np.int64)}),
        "axis0_5": ("axis0", {
            "data": rng.standard_normal((5, 3)).astype(np.float32),
            "idx": rng.integers(-5, 5, (4, 3)).astype(np.int32)}),
        "direct_bad": (None, {"data": data_3x7, "idx": idx_bad}),
        "direct_neg_bad": (None, {"data": data_3x7, "idx": idx_neg_bad}),
        # Four index rows for three data rows: off the axis, indices exceed
        # data.
        "direct_rows_bad": (None, {
            "data": data_3x7,
            "idx": np.zeros((4, 2), np.int64)}),
    }
    for name, (model, feed) in cases.items():
        np.savez(os.path.join(out, name + ".inputs.npz"), **feed)
        if model is None:
            continue
        session = ort.InferenceSession(os.path.join(out, model + ".onnx"),
                                       providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        np.savez(os.path.join(out, name + ".ref.npz"),
                 **dict(zip(names, session.run(None, feed))))


if __name__ == "__main__":
    main()
