"""Runs an ONNX model in onnxruntime on the arrays of an .npz and writes its
outputs to another .npz (the reference a lit test compares lmopt with).

usage: run_onnxruntime.py MODEL.onnx INPUTS.npz OUT.npz
"""
import sys

import numpy as np
import onnxruntime as ort

model, inputs, out = sys.argv[1:4]
session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
feeds = dict(np.load(inputs))
names = [o.name for o in session.get_outputs()]
np.savez(out, **dict(zip(names, session.run(names, feeds))))
