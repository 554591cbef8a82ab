"""Compile the bundled BERT, quantize it, and compare both with onnxruntime.

    pip install .  (or: scripts/setup.sh, then PYTHONPATH=build/python)
    python examples/quickstart.py
"""
import numpy as np, onnxruntime as ort, lmopt

model, inputs = "test/models/onnx/bert.onnx", dict(np.load("test/models/onnx/bert.inputs.npz"))
bounds = {name: (8, 128) for name in inputs}                    # any batch <= 8, sequence <= 128
fp32 = lmopt.compile(model, max_shapes=bounds)
int8 = lmopt.compile(model, max_shapes=bounds, quantize="int8-dynamic")
expected = ort.InferenceSession(model).run(None, inputs)[0]     # last_hidden_state
for name, bundle in [("fp32", fp32), ("int8-dynamic", int8)]:
    got = lmopt.Session(bundle).run(inputs)["last_hidden_state"]
    cos = float(np.dot(got.ravel(), expected.ravel()) / np.linalg.norm(got) / np.linalg.norm(expected))
    print(f"{name:13s} max abs diff {np.abs(got - expected).max():.2e}  cosine {cos:.6f}  fused {sum(f['fused'] for f in bundle.fusions.values())} ops")
int8.save("bert-int8.lmopt")
