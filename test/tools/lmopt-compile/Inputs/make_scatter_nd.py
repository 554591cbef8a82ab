"""Writes small ONNX models with ScatterND, their inputs and onnxruntime's
outputs, for scatter-nd.test:

- kv.onnx: a key/value cache written at each sequence's position, as a
  decoder export without Concat updates its cache: cache f32 [B, T, D],
  new f32 [B, 1, D] and pos i64 [B] graph inputs; the index tuples
  [b, pos[b]] are built from Range over the batch and the positions
  (run-time sizes throughout); the output is the updated cache;
- reduce.onnx (opset 18): data f32 [4, 5, 6] and updates f32 [3, 5, 6]
  graph inputs, constant indices [[1], [3], [1]] (a duplicate), one
  ScatterND per reduction (none, add, mul, max, min);
- ints.onnx (opset 18): i64 data [N, 2], index tuples [K, 2] (negative
  ones among them, a duplicate) and values [K] graph inputs, reduction
  add: tuples as long as data's rank address elements, not slices;
- bad_reduction.onnx and bad_updates.onnx: refused at import.

Inputs named *_bad are refused by onnxruntime too and have no reference.

usage: make_scatter_nd.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def save(model, path, opset=17, check=True):
    model.opset_import[0].version = opset
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, path)


def kv_model():
    cache = helper.make_tensor_value_info("cache", TensorProto.FLOAT,
                                          ["B", "T", "D"])
    new = helper.make_tensor_value_info("new", TensorProto.FLOAT,
                                        ["B", 1, "D"])
    pos = helper.make_tensor_value_info("pos", TensorProto.INT64, ["B"])
    out = helper.make_tensor_value_info("updated", TensorProto.FLOAT,
                                        ["B", "T", "D"])
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array([0], np.int64), "first"),
        numpy_helper.from_array(np.array([1], np.int64), "second"),
        numpy_helper.from_array(np.array([-1], np.int64), "last"),
    ]
    nodes = [
        helper.make_node("Shape", ["pos"], ["batch_1d"]),
        helper.make_node("Squeeze", ["batch_1d", "first"], ["batch"]),
        helper.make_node("Range", ["zero", "batch", "one"], ["rows"]),
        helper.make_node("Unsqueeze", ["rows", "last"], ["rows_col"]),
        helper.make_node("Unsqueeze", ["pos", "last"], ["pos_col"]),
        helper.make_node("Concat", ["rows_col", "pos_col"], ["pairs"],
                         axis=1),
        helper.make_node("Unsqueeze", ["pairs", "second"], ["tuples"]),
        helper.make_node("ScatterND", ["cache", "tuples", "new"],
                         ["updated"], name="write_cache"),
    ]
    return helper.make_model(helper.make_graph(nodes, "kv", [cache, new, pos],
                                               [out], inits))


def reduce_model():
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT,
                                         [4, 5, 6])
    updates = helper.make_tensor_value_info("updates", TensorProto.FLOAT,
                                            [3, 5, 6])
    idx = numpy_helper.from_array(np.array([[1], [3], [1]], np.int64), "idx")
    outs, nodes = [], []
    for r in ["none", "add", "mul", "max", "min"]:
        outs.append(helper.make_tensor_value_info(r, TensorProto.FLOAT,
                                                  [4, 5, 6]))
        attrs = {} if r == "none" else {"reduction": r}
        nodes.append(helper.make_node("ScatterND", ["data", "idx", "updates"],
                                      [r], name="scatter_" + r, **attrs))
    # Without a reduction, duplicate indices are undefined in ONNX: the
    # 'none' output reads a copy whose tuples are distinct.
    nodes[0].input[1] = "distinct"
    nodes[0].input[2] = "two"
    inits = [idx,
             numpy_helper.from_array(np.array([[2], [0]], np.int64),
                                     "distinct"),
             numpy_helper.from_array(np.array([0, 1], np.int64), "take")]
    nodes.insert(0, helper.make_node("Gather", ["updates", "take"], ["two"],
                                     axis=0))
    return helper.make_model(helper.make_graph(nodes, "reduce",
                                               [data, updates], outs, inits))


def ints_model():
    data = helper.make_tensor_value_info("data", TensorProto.INT64, ["N", 2])
    idx = helper.make_tensor_value_info("idx", TensorProto.INT64, ["K", 2])
    vals = helper.make_tensor_value_info("vals", TensorProto.INT64, ["K"])
    out = helper.make_tensor_value_info("out", TensorProto.INT64, ["N", 2])
    nodes = [helper.make_node("ScatterND", ["data", "idx", "vals"], ["out"],
                              name="put", reduction="add")]
    return helper.make_model(helper.make_graph(nodes, "ints",
                                               [data, idx, vals], [out]))


def bad_model(reduction, updates_shape):
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 3])
    updates = helper.make_tensor_value_info("updates", TensorProto.FLOAT,
                                            updates_shape)
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [4, 3])
    idx = numpy_helper.from_array(np.array([[1], [2]], np.int64), "idx")
    nodes = [helper.make_node("ScatterND", ["data", "idx", "updates"],
                              ["out"], name="bad_scatter",
                              reduction=reduction)]
    return helper.make_model(helper.make_graph(nodes, "bad", [data, updates],
                                               [out], [idx]))


def write(out, name, inputs, with_reference=True):
    np.savez(os.path.join(out, name + ".inputs.npz"), **inputs)
    if not with_reference:
        return
    model = name.split("_")[0]
    sess = ort.InferenceSession(os.path.join(out, model + ".onnx"),
                                providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    np.savez(os.path.join(out, name + ".ref.npz"),
             **dict(zip(names, sess.run(None, inputs))))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    save(kv_model(), os.path.join(out, "kv.onnx"))
    save(reduce_model(), os.path.join(out, "reduce.onnx"), opset=18)
    save(ints_model(), os.path.join(out, "ints.onnx"), opset=18)
    save(bad_model("avg", [2, 3]), os.path.join(out, "bad_reduction.onnx"),
         opset=18, check=False)
    save(bad_model("add", [2, 4]), os.path.join(out, "bad_updates.onnx"),
         opset=18, check=False)

    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    write(out, "kv_2x6x8", {"cache": f32(2, 6, 8), "new": f32(2, 1, 8),
                            "pos": np.array([5, 0], np.int64)})
    write(out, "kv_3x16x8", {"cache": f32(3, 16, 8), "new": f32(3, 1, 8),
                             "pos": np.array([3, -1, 15], np.int64)})
    write(out, "kv_bad", {"cache": f32(2, 6, 8), "new": f32(2, 1, 8),
                          "pos": np.array([2, 6], np.int64)},
          with_reference=False)
    write(out, "reduce", {"data": f32(4, 5, 6), "updates": f32(3, 5, 6)})
    write(out, "ints", {
        "data": np.arange(12, dtype=np.int64).reshape(6, 2) * 10,
        "idx": np.array([[0, 1], [-1, 0], [0, 1], [2, -2]], np.int64),
        "vals": np.array([5, -7, 100, 2**40], np.int64)})
    write(out, "ints_short", {
        "data": np.arange(12, dtype=np.int64).reshape(6, 2) * 10,
        "idx": np.array([[0, 1], [-1, 0], [0, 1]], np.int64),
        "vals": np.array([5, -7, 100, 1], np.int64)}, with_reference=False)


if __name__ == "__main__":
    main()
