"""Writes ONNX models of Sign, their inputs and onnxruntime's outputs, for
sign.test:

- sign.onnx: Sign of f32, f64, f16, i8, i32 and i64 inputs of run-time
  length N (the values include 0, -0, NaN, infinities, denormals and each
  integer type's extremes);
- sign_u8.onnx: Sign of a uint8 input (valid ONNX, which lmopt's
  arithmetic has no unsigned form for);
- sign_bool.onnx: Sign of a bool input (not in the ONNX type list; written
  without the checker).

usage: make_sign.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

TYPES = {
    "f32": (TensorProto.FLOAT, np.float32),
    "f64": (TensorProto.DOUBLE, np.float64),
    "f16": (TensorProto.FLOAT16, np.float16),
    "i8": (TensorProto.INT8, np.int8),
    "i32": (TensorProto.INT32, np.int32),
    "i64": (TensorProto.INT64, np.int64),
}


def single(elem, name, check=True):
    x = helper.make_tensor_value_info("x", elem, ["N"])
    y = helper.make_tensor_value_info("y", elem, ["N"])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Sign", ["x"], ["y"], name="sign")], name, [x], [y]))
    model.opset_import[0].version = 17
    if check:
        onnx.checker.check_model(model)
    return model


def main():
    out = sys.argv[1]
    inputs, outputs, nodes = [], [], []
    for key, (elem, _) in TYPES.items():
        inputs.append(helper.make_tensor_value_info("x_" + key, elem, ["N"]))
        outputs.append(helper.make_tensor_value_info("y_" + key, elem, ["N"]))
        nodes.append(helper.make_node("Sign", ["x_" + key], ["y_" + key],
                                      name="sign_" + key))
    model = helper.make_model(helper.make_graph(nodes, "sign", inputs, outputs))
    model.opset_import[0].version = 17
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "sign.onnx"))
    onnx.save(single(TensorProto.UINT8, "sign_u8"),
              os.path.join(out, "sign_u8.onnx"))
    onnx.save(single(TensorProto.BOOL, "sign_bool", check=False),
              os.path.join(out, "sign_bool.onnx"))

    special = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-40, -1e-40,
               2.5, -3.0, 65504.0, -1e-7]
    rng = np.random.default_rng(0)
    for length in (12, 20):
        feed = {}
        for key, (_, dtype) in TYPES.items():
            if np.issubdtype(dtype, np.floating):
                values = np.array(special, np.float64)
                extra = rng.standard_normal(length - len(special)) * 100
            else:
                info = np.iinfo(dtype)
                values = np.array([0, 1, -1, info.min, info.max, info.min + 1,
                                   info.max - 1, 7, -7, 0, 2, -2], np.int64)
                extra = rng.integers(info.min, info.max, length - len(values),
                                     dtype=np.int64, endpoint=True)
            with np.errstate(over="ignore"):
                feed["x_" + key] = np.concatenate([values, extra]).astype(dtype)
        name = "sign_%d" % length
        np.savez(os.path.join(out, name + ".inputs.npz"), **feed)
        session = ort.InferenceSession(os.path.join(out, "sign.onnx"),
                                       providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        refs = dict(zip(names, session.run(None, feed)))
        # onnxruntime's f16 Sign gives 0 for NaN where its f32 and f64
        # kernels, numpy and PyTorch give NaN: there numpy's value is the
        # reference. Everywhere else both must agree.
        for key in TYPES:
            expected = np.sign(feed["x_" + key])
            got = refs["y_" + key]
            nan = np.isnan(expected) if key.startswith("f") else False
            assert np.array_equal(np.where(nan, 0, got),
                                  np.where(nan, 0, expected)), key
            refs["y_" + key] = np.where(nan, expected, got).astype(got.dtype)
        np.savez(os.path.join(out, name + ".ref.npz"), **refs)


if __name__ == "__main__":
    main()
