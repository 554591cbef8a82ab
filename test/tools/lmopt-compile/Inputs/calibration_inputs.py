#!/usr/bin/env python3
"""Fixtures and the independent check for the quantize-*.test files.

make OUT: writes OUT/mlp.onnx (x: f32 [2, 8] -> MatMul+Add -> Relu -> MatMul
  -> y [2, 4], node names 'fc1' and 'fc2') and calibration files: good ones in
  the three layouts (cal.npz stacked [16, 2, 8], cal_rows.npz [32, 8],
  cal_numbered.npz x_0..x_3) and bad ones (wrong name, dtype, shape, no
  samples, NaN, Inf, a gap in the numbering).
check MODEL CAL TABLE METHOD: runs MODEL with onnxruntime on every sample of
  CAL with each MatMul's input added as a graph output, takes its range the
  way METHOD says (numpy min/max or numpy.percentile), and compares it with
  TABLE's entry for the node that ends the fused linear (the MatMul, or the
  bias Add after it). Prints one line per linear and "OK" or "MISMATCH".
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def make(out):
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    b1 = rng.standard_normal(16).astype(np.float32)
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Relu", ["h1"], ["h"], name="act"),
        helper.make_node("MatMul", ["h", "w2"], ["y"], name="fc2"),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, "mlp.onnx"))

    samples = rng.standard_normal((16, 2, 8)).astype(np.float32)
    # A few outliers, so that percentile and minmax ranges differ.
    samples[3, 1, 2] = 9.0
    samples[11, 0, 5] = -8.0
    save = lambda name, **arrays: np.savez(os.path.join(out, name), **arrays)
    save("cal.npz", x=samples)
    save("cal_rows.npz", x=samples.reshape(32, 8))
    save("cal_numbered.npz", **{f"x_{i}": samples[i] for i in range(4)})
    save("bad_name.npz", x=samples, input_ids=samples)
    save("bad_dtype.npz", x=samples.astype(np.float64))
    save("bad_shape.npz", x=samples.reshape(16, 4, 4))
    save("empty.npz", x=np.zeros((0, 2, 8), np.float32))
    save("no_arrays.npz")
    nan = samples.copy()
    nan[5, 1, 3] = np.nan
    save("nan.npz", x=nan)
    inf = samples.copy()
    inf[0, 0, 1] = -np.inf
    save("inf.npz", x=inf)
    save("gap.npz", x_0=samples[0], x_2=samples[2])


def check(model_path, cal_path, table_path, method):
    model = onnx.load(model_path)
    matmuls = [n for n in model.graph.node if n.op_type == "MatMul"]
    for node in matmuls:
        model.graph.output.append(
            helper.make_tensor_value_info(node.input[0], TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    samples = np.load(cal_path)["x"]
    names = [o.name for o in session.get_outputs()]
    values = {n.input[0]: [] for n in matmuls}
    for sample in samples:
        outputs = dict(zip(names, session.run(None, {"x": sample})))
        for key in values:
            values[key].append(outputs[key].ravel())
    table = json.load(open(table_path))["tensors"]
    consumers = {i: n for n in model.graph.node for i in n.input}
    ok = True
    for node in matmuls:
        data = np.concatenate(values[node.input[0]]).astype(np.float64)
        if method == "minmax":
            lo, hi = data.min(), data.max()
            tol = 1e-5
        else:
            p = float(method.split(":")[1]) if ":" in method else 99.99
            # The smallest value with at least that share at or below it.
            lo, hi = np.percentile(data, [100 - p, p], method="inverted_cdf")
            # The table's histogram has 4096 bins over +-max|x| (rounded up
            # by doubling): a bin's width is the resolution.
            tol = 2 * 2 * np.abs(data).max() / 4096
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        # The fused linear is named after the last node folded into it: the
        # MatMul, its bias Add or its activation.
        chain, value = [node], node.output[0]
        while value in consumers and consumers[value].op_type in ("Add", "Relu"):
            chain.append(consumers[value])
            value = chain[-1].output[0]
        key = next((n.name for n in reversed(chain) if n.name in table), node.name)
        got = table.get(key)
        good = got is not None and abs(got["min"] - lo) <= tol and abs(got["max"] - hi) <= tol
        ok &= good
        print(f"{key}: numpy [{lo:.6f}, {hi:.6f}] table "
              f"{'missing' if got is None else '[%.6f, %.6f]' % (got['min'], got['max'])}")
    print("OK" if ok and len(table) == len(matmuls) else "MISMATCH")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(*sys.argv[2:6])
