#!/usr/bin/env python3
"""Writes small ONNX models with a bare MatMul between two graph inputs (no
weight, so no linear fusion applies), their inputs and onnxruntime's outputs,
for matmul-e2e.test: NAME.onnx, NAME.inputs.npz, NAME.ref.npz in OUT.

usage: make_matmul_models.py OUT
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

# name: (lhs shape, rhs shape); numpy rules: rank-1 operands promoted, batch
# dims broadcast.
CASES = {
    "batched_2d_rhs": ([2, 3, 4, 5], [5, 6]),
    "batch_broadcast": ([3, 1, 4, 5], [2, 5, 6]),
    "vector_lhs": ([5], [2, 5, 3]),
    "vector_rhs": ([2, 4, 5], [5]),
    "single": ([7, 9], [9, 11]),
}


def build(name, lhs, rhs):
    out_shape = list(np.matmul(np.zeros(lhs), np.zeros(rhs)).shape)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["product"], name=f"{name}_matmul"),
             helper.make_node("Relu", ["product"], ["y"], name=f"{name}_relu")]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, lhs),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, rhs)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    for name, (lhs, rhs) in CASES.items():
        model = build(name, lhs, rhs)
        path = os.path.join(out, f"{name}.onnx")
        onnx.save(model, path)
        inputs = {"a": rng.standard_normal(lhs).astype(np.float32),
                  "b": rng.standard_normal(rhs).astype(np.float32)}
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        (y,) = session.run(None, inputs)
        np.savez(os.path.join(out, f"{name}.inputs.npz"), **inputs)
        np.savez(os.path.join(out, f"{name}.ref.npz"), y=y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
